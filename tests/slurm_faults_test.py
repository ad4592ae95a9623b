# Copyright 2026 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Faults and hostile input in what the resolver and its config run and read.

A sibling of slurm_fuzz_test.py for what the environment's values do not
cover: the commands run (stand-in `scontrol` and `nvidia-smi` on PATH that
hang, fail, print garbage, non-UTF-8 text or without end, or cannot be
run), the files read (FIFOs, devices, huge sparse files), values that look
like options, the ranks of MPI launchers (fixtures/launchers), and signals
at points of `SlurmTerminationConfig`'s life in real TensorFlow processes.

Every case but the last runs in a forked child, bounded in time (SIGALRM)
and in memory (RLIMIT_AS: what the child has mapped, plus `_CHILD_BYTES`),
and must end in a result or in the documented ValueError/RuntimeError (or
exit status, for `exit_fn`); a hang or a MemoryError fails it.
"""

import os
import pickle
import re
import resource
import signal
import socket
import stat
import subprocess
import sys
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tf_slurm import resolver as companion
from tf_slurm import termination as stc
from tf_slurm import util

_LAUNCHERS = os.path.join(os.path.dirname(__file__), 'fixtures', 'launchers')
# The bounds of every child; its commands time out after _COMMAND_SECONDS.
_CHILD_SECONDS = 20
_CHILD_BYTES = 256 * 1024 * 1024
_COMMAND_SECONDS = 2
# A two-task step on n1 and n2, seen from task 1.
_STEP = {
    'SLURM_PROCID': '1', 'SLURM_STEP_NODELIST': 'n[1-2]',
    'SLURM_STEP_TASKS_PER_NODE': '1(x2)', 'SLURM_STEP_NUM_TASKS': '2',
    'SLURMD_NODENAME': 'n2', 'SLURM_NODEID': '1', 'SLURM_LOCALID': '0',
    'SLURM_JOB_ID': '7', 'SLURM_STEP_ID': '0',
    # Not a regular file: no slurm.conf is read, scontrol may run.
    'SLURM_CONF': os.devnull,
}
_SHOW_JOB = ('JobId=7 JobName=train JobState=RUNNING Reason=None Restarts=0 '
             'BatchFlag=1 Requeue=1')
# Stand-in commands: what each prints or does (a shell script's body).
_HANG = 'exec /bin/sleep 60\n'
_FAIL = 'echo "error: Unable to contact slurm controller" >&2\nexit 3\n'
_NOT_UTF8 = 'printf "n1\\nn\\377\\n"\n'
_ENDLESS = 'exec /usr/bin/yes n1\n'
_EXEC_FORMAT = b'\x7fELF\x02\x01\x01' + bytes(100)


def _mapped_bytes():
  """The address space this process has mapped now."""
  with open('/proc/self/statm', encoding='ascii') as f:
    return int(f.read().split()[0]) * resource.getpagesize()


def _in_child(function):
  """Runs `function()` in a forked child within the bounds; how it ended.

  Returns:
    ('value', result), ('exit', status) for SystemExit, ('error', type
    name, message), or ('killed', signal number) -- SIGALRM: out of time.
  """
  read_end, write_end = os.pipe()
  pid = os.fork()
  if pid == 0:  # The child.
    try:
      os.close(read_end)
      limit = _mapped_bytes() + _CHILD_BYTES
      resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
      signal.alarm(_CHILD_SECONDS)
      try:
        outcome = ('value', function())
      except SystemExit as e:
        outcome = ('exit', e.code)
      except BaseException as e:  # pylint: disable=broad-except
        outcome = ('error', type(e).__name__, str(e)[:2000])
      os.write(write_end, pickle.dumps(outcome))
    finally:
      os._exit(0)  # pylint: disable=protected-access
  os.close(write_end)
  with os.fdopen(read_end, 'rb') as pipe:
    data = pipe.read()  # Until the child exits; SIGALRM ends it in time.
  _, status = os.waitpid(pid, 0)
  if os.WIFSIGNALED(status):
    return ('killed', os.WTERMSIG(status))
  return pickle.loads(data)


class FaultsTestCase(parameterized.TestCase):
  """Makes stand-in commands and runs cases in bounded children."""

  def setUp(self):
    super().setUp()
    self.folder = self.create_tempdir().full_path
    self.bin = os.path.join(self.folder, 'bin')
    os.mkdir(self.bin)
    self.log = os.path.join(self.folder, 'commands.log')

  def stand_in(self, name, body, mode=0o755):
    """Puts command `name` on the children's PATH: a script of `body`."""
    path = os.path.join(self.bin, name)
    content = body if isinstance(body, bytes) else (
        '#!/bin/sh\necho "%s $*" >> %s\n%s' % (name, self.log, body)).encode()
    with open(path, 'wb') as f:
      f.write(content)
    os.chmod(path, mode)

  def commands(self):
    """The command lines the stand-ins ran, in order."""
    if not os.path.exists(self.log):
      return []
    with open(self.log, encoding='utf-8') as f:
      return f.read().splitlines()

  def run_in_child(self, environ, function):
    """`function()` in a child whose whole environment is `environ`."""

    def case():
      os.environ.clear()
      os.environ.update(environ, PATH=self.bin)
      util.SUBPROCESS_TIMEOUT_SECS = _COMMAND_SECONDS
      slurm_cluster_resolver._NVIDIA_SMI_TIMEOUT_SECS = _COMMAND_SECONDS  # pylint: disable=protected-access
      return function()

    return _in_child(case)

  def resolve(self, environ,
              resolver_class=companion.SlurmClusterResolver,
              **kwargs):
    """The cluster spec and CUDA_VISIBLE_DEVICES of a resolver, or its error."""

    def resolve():
      resolver = resolver_class(**kwargs)
      return (resolver.cluster_spec().as_dict(),
              os.environ.get('CUDA_VISIBLE_DEVICES'))

    return self.run_in_child(environ, resolve)

  def assertError(self, outcome, error, regex):
    self.assertEqual((outcome[0], outcome[1]), ('error', error), outcome)
    self.assertRegex(outcome[2], regex)


class CommandFaultsTest(FaultsTestCase):
  """Every failure of a command run is a RuntimeError naming it."""

  @parameterized.named_parameters(
      ('_hangs', _HANG, 0o755, r'did not finish within 2 s'),
      ('_fails', _FAIL, 0o755,
       r'failed \(exit status 3\): error: Unable to contact'),
      ('_prints_non_utf8', _NOT_UTF8, 0o755, r'stdout that is not UTF-8'),
      ('_prints_without_end', _ENDLESS, 0o755,
       r'printed more than %d bytes' % util.MAX_READ_BYTES),
      ('_is_not_executable', 'echo n1\n', 0o644, r'Permission denied'),
      ('_is_for_another_machine', _EXEC_FORMAT, 0o755, r'Exec format error'),
  )
  def testScontrolExpansionFailureIsRuntimeErrorNamingTheCommand(
      self, body, mode, regex):
    self.stand_in('scontrol', body, mode)
    outcome = self.resolve(_STEP, companion.SlurmClusterResolver,
                           gpus_per_node=0, hostlist_expansion='scontrol')
    self.assertError(outcome, 'RuntimeError',
                     r"hostlist 'n\[1-2\]': `scontrol -- show hostnames "
                     r"n\[1-2\]` .*" + regex)

  def testMissingScontrolIsRuntimeError(self):
    outcome = self.resolve(_STEP, companion.SlurmClusterResolver,
                           gpus_per_node=0, hostlist_expansion='scontrol')
    self.assertError(outcome, 'RuntimeError', r'scontrol is not on PATH')

  @parameterized.named_parameters(
      ('_hangs', _HANG, 0o755, r'did not finish within 2 s'),
      ('_fails', _FAIL, 0o755, r'failed \(exit status 3\)'),
      ('_prints_non_utf8', _NOT_UTF8, 0o755, r'stdout that is not UTF-8'),
      ('_prints_without_end', _ENDLESS, 0o755, r'printed more than'),
      ('_is_not_executable', 'echo GPU 0:\n', 0o644, r'Permission denied'),
      ('_is_for_another_machine', _EXEC_FORMAT, 0o755, r'Exec format error'),
      ('_lists_more_gpus_than_a_node_has',
       'i=0; while [ $i -lt 1100 ]; do echo "GPU $i: X"; i=$((i+1)); done\n',
       0o755, r'lists 1100 GPUs, more than a node can have \(1024\)'),
  )
  def testCompanionsNvidiaSmiFailureIsRuntimeErrorNamingTheCommand(
      self, body, mode, regex):
    self.stand_in('nvidia-smi', body, mode)
    for name, function in (('resolver', companion.SlurmClusterResolver),
                           ('get_num_gpus', companion.get_num_gpus)):
      with self.subTest(name):
        outcome = self.run_in_child(_STEP, function)
        self.assertError(outcome, 'RuntimeError',
                         r'`nvidia-smi --list-gpus` .*' + regex)

  @parameterized.named_parameters(
      ('_hangs', _HANG, 0o755, r'timed out after 2 seconds'),
      ('_fails', _FAIL, 0o755, r'exited with status 3: error: Unable'),
      ('_is_not_executable', 'echo GPU 0:\n', 0o644, r'Permission denied'),
      ('_is_for_another_machine', _EXEC_FORMAT, 0o755, r'Exec format error'),
  )
  def testCoresNvidiaSmiFailureIsRuntimeErrorSayingWhatToPass(self, body,
                                                              mode, regex):
    self.stand_in('nvidia-smi', body, mode)
    for name, function in (
        ('resolver', slurm_cluster_resolver.SlurmClusterResolver),
        ('get_num_gpus', slurm_cluster_resolver.get_num_gpus)):
      with self.subTest(name):
        outcome = self.run_in_child(_STEP, function)
        self.assertError(outcome, 'RuntimeError',
                         r'nvidia-smi --list-gpus.*' + regex +
                         r'.*Pass gpus_per_node')

  def testNvidiaSmiFindingNoDeviceMeansNoGpus(self):
    self.stand_in('nvidia-smi', 'echo "No devices were found"\nexit 6\n')
    for function in (slurm_cluster_resolver.get_num_gpus,
                     companion.get_num_gpus):
      with self.subTest(function.__module__):
        outcome = self.run_in_child(_STEP, function)
        self.assertEqual(outcome, ('value', 0))


class FileFaultsTest(FaultsTestCase):
  """slurm.conf: a regular file within bounds, or none."""

  def special_files(self):
    """Name -> path of a FIFO, a device, a folder and a 2 GiB sparse file."""
    fifo = os.path.join(self.folder, 'fifo')
    os.mkfifo(fifo)
    huge = os.path.join(self.folder, 'huge')
    with open(huge, 'wb') as f:
      f.truncate(2 * 1024**3)
    return {'fifo': fifo, 'device': '/dev/zero', 'folder': self.folder,
            'huge': huge}

  def testSlurmConfThatIsNoRegularFileWithinBoundsIsNotRead(self):
    # As if there were none: nvidia-smi (here two GPUs) counts the GPUs.
    self.stand_in('nvidia-smi', 'echo "GPU 0: A"\necho "GPU 1: B"\n')
    for name, path in self.special_files().items():
      with self.subTest(name):
        outcome = self.resolve(dict(_STEP, SLURM_CONF=path))
        self.assertEqual(
            outcome, ('value', ({'worker': ['n1:8888', 'n2:8888']}, '0,1')))

  def testSlurmConfSwappedForAFifoAfterTheCheckDoesNotBlock(self):
    fifo = self.special_files()['fifo']
    real_stat = os.stat

    def swap_then_stat(path, *args, **kwargs):
      result = real_stat(path, *args, **kwargs)
      if path == conf and stat.S_ISREG(result.st_mode):
        os.remove(conf)
        os.rename(fifo, conf)
      return result

    conf = os.path.join(self.folder, 'slurm.conf')
    with open(conf, 'w', encoding='utf-8') as f:
      f.write('GresTypes=gpu\n')

    def resolve_with_swap():
      os.stat = swap_then_stat
      return companion.get_num_gpus()

    # Unreadable, so not known to list gpu: no nvidia-smi, so no GPUs.
    self.assertEqual(
        self.run_in_child(dict(_STEP, SLURM_CONF=conf), resolve_with_swap),
        ('value', 0))


class OptionLikeValuesTest(FaultsTestCase):
  """Values that look like options stay values."""

  def testNodeListLikeAnOptionReachesScontrolAsAHostlist(self):
    # As scontrol does: options are read up to `--`, wherever they stand.
    self.stand_in('scontrol', textwrap.dedent('''\
        for a; do
          case "$a" in --) break;; -*) echo "slurm-wlm 22.05.8"; exit 0;; esac
        done
        for a; do last="$a"; done
        echo "$last"
        '''))
    step = dict(_STEP, SLURM_STEP_NODELIST='--version',
                SLURM_STEP_TASKS_PER_NODE='1', SLURM_STEP_NUM_TASKS='1',
                SLURM_PROCID='0', SLURM_NODEID='0',
                SLURMD_NODENAME='--version')
    outcome = self.resolve(step, companion.SlurmClusterResolver,
                           gpus_per_node=0, hostlist_expansion='scontrol')
    self.assertEqual(outcome, ('value', ({'worker': ['--version:8888']}, '')))
    self.assertEqual(self.commands(),
                     ['scontrol -- show hostnames --version'])

  @parameterized.named_parameters(('_two_jobs', '4242,4243'),
                                  ('_option', '--help'),
                                  ('_spaces', '42 43'))
  def testJobIdThatIsNotANumberIsRefusedBeforeAnyScontrol(self, job_id):
    self.stand_in('scontrol', 'echo "%s"\n' % _SHOW_JOB)
    outcome = self.run_in_child(dict(_STEP, SLURM_JOB_ID=job_id),
                                stc.SlurmTerminationConfig)
    self.assertError(outcome, 'ValueError',
                     r'SLURM_JOB_ID=%s' % re.escape(repr(job_id)))
    self.assertEqual(self.commands(), [])

  def testNonUtf8NodeNameIsValueErrorNamingTheVariable(self):
    step = dict(_STEP, SLURM_STEP_NODELIST=os.fsdecode(b'n\xe91,n2'))
    outcome = self.resolve(step, gpus_per_node=0)
    self.assertError(outcome, 'ValueError',
                     r'SLURM_STEP_NODELIST=.*not UTF-8 text')


def _warned_exit():
  """Creates the config, sends the early warning, calls exit_fn twice.

  Returns:
    The two exit statuses.
  """
  config = stc.SlurmTerminationConfig()
  os.kill(os.getpid(), signal.SIGUSR1)
  statuses = []
  for _ in range(2):  # A framework that catches SystemExit calls it again.
    try:
      config.exit_fn()
    except SystemExit as e:
      statuses.append(e.code)
  return statuses


class RequeueFaultsTest(FaultsTestCase):
  """exit_fn requeues once, from one task, or asks the batch script."""

  @parameterized.named_parameters(
      ('_show_job_not_utf8', 'printf "%s WorkDir=/home/j\\351r\\364me\\n"\n' %
       _SHOW_JOB, 0o755),
      ('_restarts_not_a_number',
       'echo "%s"\n' % _SHOW_JOB.replace('Restarts=0', 'Restarts=N/A'),
       0o755),
      ('_not_executable', 'echo "%s"\n' % _SHOW_JOB, 0o644),
      ('_for_another_machine', _EXEC_FORMAT, 0o755),
      ('_hangs', _HANG, 0o755),
      ('_requeue_fails',
       'case "$1" in requeue) exit 1;; esac\necho "%s"\n' % _SHOW_JOB, 0o755),
  )
  def testFailureToRequeueAfterTheWarningExitsWith43(self, body, mode):
    self.stand_in('scontrol', body, mode)
    outcome = self.run_in_child(dict(_STEP, SLURM_PROCID='0'), _warned_exit)
    self.assertEqual(outcome, ('value', [stc.EXIT_REQUEUE] * 2))

  def testExitFnCalledAgainRequeuesOnce(self):
    self.stand_in('scontrol', 'echo "%s"\n' % _SHOW_JOB)
    outcome = self.run_in_child(dict(_STEP, SLURM_PROCID='0'), _warned_exit)
    self.assertEqual(outcome, ('value', [stc.EXIT_SAVED] * 2))
    self.assertEqual(self.commands(), ['scontrol -o show job 7',
                                       'scontrol requeue 7'])

  @parameterized.parameters(
      sorted(name for name in os.listdir(_LAUNCHERS)
             if os.path.isdir(os.path.join(_LAUNCHERS, name))))
  def testOneRankOfEveryLaunchRequeues(self, launch):
    self.stand_in('scontrol', 'echo "%s"\n' % _SHOW_JOB)
    folder = os.path.join(_LAUNCHERS, launch)
    statuses = {}
    for name in sorted(os.listdir(folder)):
      if name.endswith('.env'):
        with open(os.path.join(folder, name), encoding='utf-8') as f:
          env = dict(line.rstrip('\n').split('=', 1) for line in f
                     if '=' in line)
        env['SLURM_JOB_ID'] = '7'
        before = len(self.commands())
        outcome = self.run_in_child(env, _warned_exit)
        statuses[name] = (outcome, self.commands()[before:])
    # The launcher's rank 0 (<rank>.env) requeues; no other rank runs
    # scontrol.
    for name, (outcome, commands) in statuses.items():
      with self.subTest(rank=name):
        self.assertEqual(outcome, ('value', [stc.EXIT_SAVED] * 2))
        self.assertEqual(commands, ['scontrol -o show job 7',
                                    'scontrol requeue 7']
                         if name == '0.env' else [])


# A real TensorFlow worker (alone in its cluster) that gets SIGTERM at
# `sys.argv[1]`: after the config ('config'), after the strategy
# ('strategy') or while the handler trains ('training'). It prints SAVED if
# the handler saved a checkpoint, and ends as exit_fn ends it (42) or, if
# the signal was lost, with 0 after all steps.
_WORKER = r'''
import os, signal, sys, time
import tensorflow as tf
from tf_slurm import termination as stc
where, port, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def sigterm_at(point):
  if point == where:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(2)  # TensorFlow's listener reports within a second.

config = stc.SlurmTerminationConfig()
sigterm_at('config')
resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(port_base=port)
strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
sigterm_at('strategy')
with strategy.scope():
  weight = tf.Variable(1.0)
checkpoint = tf.train.Checkpoint(weight=weight)
handler = tf.distribute.experimental.PreemptionCheckpointHandler(
    resolver, checkpoint, folder, config)
for step in range(20):
  handler.run(lambda: weight.assign_add(1.0))
  if step == 2:
    sigterm_at('training')
  time.sleep(0.5)
print('DONE', flush=True)
'''


def _free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


class SignalInTensorflowTest(parameterized.TestCase):
  """SIGTERM at each point of the config's life saves and exits with 42."""

  @parameterized.parameters('config', 'strategy', 'training')
  def testSigtermIsActedOn(self, where):
    folder = self.create_tempdir().full_path
    env = {
        'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
        'PYTHONPATH': os.pathsep.join(sys.path),
        'HOME': folder, 'TF_CPP_MIN_LOG_LEVEL': '1',
        # One task on localhost, outside any job: nothing to requeue.
        'SLURM_PROCID': '0', 'SLURM_STEP_NODELIST': 'localhost',
        'SLURM_STEP_TASKS_PER_NODE': '1', 'SLURM_STEP_NUM_TASKS': '1',
        'SLURMD_NODENAME': 'localhost', 'SLURM_NODEID': '0',
        'SLURM_LOCALID': '0', 'SLURM_CONF': os.devnull,
    }
    worker = subprocess.run(
        [sys.executable, '-c', _WORKER, where, str(_free_port()), folder],
        env=env, capture_output=True, text=True, timeout=120, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (90, 90)))
    self.assertEqual(worker.returncode, stc.EXIT_SAVED, worker.stderr[-3000:])
    self.assertNotIn('DONE', worker.stdout)
    self.assertTrue(any(name.startswith('ckpt') for name in
                        os.listdir(folder)), os.listdir(folder))


if __name__ == '__main__':
  absltest.main()
