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
"""Tests for the explain command of SlurmClusterResolver."""

import errno
import functools
import io
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_step as core_step
from tf_slurm import explain as slurm_explain
from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver


def explain_rows(output):
  """Parses the explain command's task table.

  Returns:
    task index -> [node, local index, job:index, address, GPUs], from the
    rows after the header `rank node local task address GPUs`; the 'rank'
    column holds the task indices, numbered node by node.
  """
  lines = output.splitlines()
  header = [line.split()[:1] for line in lines].index(['rank'])
  return {
      int(line.split()[0]): line.split()[1:6] for line in lines[header + 1:]
  }


class ExplainCommandTest(slurm_resolver_test_util.ResolverTestCase):
  """`main()`: what the resolver reads and decides, without changing it."""

  def explain(self, argv, environ=None):
    """Runs the explain command; returns (exit status, stdout, stderr)."""
    out = io.StringIO()
    with mock.patch.object(sys, 'stderr', io.StringIO()) as err:
      status = slurm_explain.main(argv, environ=environ, out=out)
    return status, out.getvalue(), err.getvalue()

  def testListsTheVariablesItReads(self):
    env = slurm_test_util.cyclic_env(1, HOME='/root', SLURM_NNODES='2')
    status, out, _ = self.explain([], env)
    self.assertEqual(0, status)
    for variable in ('SLURM_PROCID=1', 'SLURM_STEP_NODELIST=n[1-2]',
                     'SLURM_STEP_TASKS_PER_NODE=4,1', 'SLURMD_NODENAME=n2',
                     'SLURM_LOCALID=0', 'SLURM_GTIDS=1'):
      self.assertIn('\n  %s\n' % variable, out)
    self.assertNotIn('HOME=', out)
    self.assertNotIn('SLURM_NNODES=', out)

  def testListsNoVariableOnlyMpiLaunchesReadForAnSrunTask(self):
    env = slurm_test_util.cyclic_env(1, SLURM_JOB_CPUS_PER_NODE='4,1',
                                     SLURM_JOB_NUM_NODES='2')
    status, out, _ = self.explain([], env)
    self.assertEqual(0, status)
    self.assertIn('\n  SLURM_PROCID=1\n', out)
    self.assertNotIn('SLURM_JOB_CPUS_PER_NODE=', out)
    self.assertNotIn('SLURM_JOB_NUM_NODES=', out)

  def testListsTheSlotsAndRanksItPlacesForAnMpirunRank(self):
    env = slurm_test_util.ompi_env(3, 0, 1, 'n10')
    status, out, _ = self.explain([], env)
    self.assertEqual(0, status)
    for variable in ('SLURM_JOB_CPUS_PER_NODE=3,1(x2)',
                     'SLURM_JOB_NUM_NODES=3', 'OMPI_COMM_WORLD_RANK=3',
                     'OMPI_COMM_WORLD_LOCAL_RANK=0', 'OMPI_UNIVERSE_SIZE=5'):
      self.assertIn('\n  %s\n' % variable, out)

  def testShowsTheNodesAndThisTasksRow(self):
    status, out, _ = self.explain([], slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertIn('\nNodes, as Slurm numbers them: n1 n2\n', out)
    # Rank 1 of a cyclic step, the first task of the second node: task 4.
    self.assertEqual({4: ['n2', '0', 'worker:4', 'n2:8888', '-']},
                     explain_rows(out))

  def testAllShowsEveryTaskOfTheStep(self):
    status, out, _ = self.explain(['--all'], slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertEqual({
        0: ['n1', '0', 'worker:0', 'n1:8888', '-'],
        1: ['n1', '1', 'worker:1', 'n1:8889', '-'],
        2: ['n1', '2', 'worker:2', 'n1:8890', '-'],
        3: ['n1', '3', 'worker:3', 'n1:8891', '-'],
        4: ['n2', '0', 'worker:4', 'n2:8888', '-'],
    }, explain_rows(out))
    marked = [line for line in out.splitlines() if '<- this task' in line]
    self.assertLen(marked, 1)
    self.assertEqual('4', marked[0].split()[0])

  def testJobsOptionSplitsTheRanks(self):
    status, out, _ = self.explain(['--all', '--jobs', 'chief=1,worker=4'],
                                  slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertIn('\nJobs: chief=1, worker=4\n', out)
    rows = explain_rows(out)
    self.assertEqual(['chief:0', 'worker:0', 'worker:1', 'worker:2',
                      'worker:3'], [rows[rank][2] for rank in range(5)])

  def testHetJobsOptionMakesComponentsJobs(self):
    status, out, _ = self.explain(['--het-jobs', 'ps,worker'],
                                  slurm_test_util.het_gpu_env(2))
    self.assertEqual(0, status)
    self.assertIn('\nJobs: ps=1, worker=3\n', out)
    self.assertIn('\n  SLURM_JOB_NODELIST_PACK_GROUP_1=n[2-3]\n', out)
    self.assertEqual({2: ['n2', '1', 'worker:1', 'n2:8889', '1']},
                     explain_rows(out))

  @parameterized.named_parameters(
      ('_node_gpus_split', slurm_test_util.step_env('n1', '2', 'n1 n1', 1,
                                     CUDA_VISIBLE_DEVICES='0,1,2,3',
                                     SLURM_GPUS_ON_NODE='4'), 1, '2,3'),
      ('_gpus_bound_per_task', slurm_test_util.het_gpu_env(2), 2, '1'),
  )
  def testThisTasksGpusAreTheOnesTheResolverSets(self, env, rank, gpus):
    status, out, _ = self.explain([], env)
    self.assertEqual(0, status)
    self.assertEqual(gpus, explain_rows(out)[rank][4])
    self.use_env(env)
    SlurmClusterResolver()
    self.assertEqual(gpus, os.environ['CUDA_VISIBLE_DEVICES'])

  @parameterized.named_parameters(
      # Slurm gave the node GPUs to deal: a task knows its neighbours'.
      ('_node_gpus_even', slurm_test_util.gres_env, '2(x2)', 'n1 n1 n2 n2',
       True),
      ('_node_gpus_uneven', slurm_test_util.gres_env, '2,1', 'n1 n1 n2', True),
      # Slurm bound each task's GPUs: a task knows only its own.
      ('_heterogeneous', lambda rank, *_: slurm_test_util.het_gpu_env(rank),
       None, 'n1 n2 n2 n3', False),
  )
  def testAllNeverContradictsAnotherTasksOwnGpus(self, make_env,
                                                  tasks_per_node, rank_hosts,
                                                  knows_neighbours):
    # What one task says of another's GPUs must be what that task says of
    # its own, or '-' where it cannot tell.
    ranks = range(len(rank_hosts.split()))
    views = []
    for rank in ranks:
      status, out, _ = self.explain(['--all'],
                                    make_env(rank, tasks_per_node, rank_hosts))
      self.assertEqual(0, status)
      views.append(explain_rows(out))
    # Rows are task indices, numbered node by node.
    index = [core_step.read_rank(make_env(rank, tasks_per_node, rank_hosts))
             for rank in ranks]
    told = 0
    for viewer, other in itertools.permutations(ranks, 2):
      with self.subTest(viewer=viewer, other=other):
        said = views[viewer][index[other]][4]
        self.assertIn(said, ('-', views[other][index[other]][4]))
        told += said != '-'
    self.assertEqual(knows_neighbours, told > 0)

  @parameterized.named_parameters(
      ('_defaults', slurm_test_util.cyclic_env(1), [], {}),
      ('_jobs', slurm_test_util.cyclic_env(1), ['--jobs', 'chief=1,worker=4'], {
          'jobs': {
              'chief': 1,
              'worker': 4
          }
      }),
      ('_het_jobs', slurm_test_util.het_gpu_env(2), ['--het-jobs', 'ps,worker'],
       {
           'het_jobs': ['ps', 'worker']
       }),
      ('_het_jobs_component_zero_on_later_node',
       slurm_test_util.het_later_node_env(2), ['--het-jobs', 'ps,worker'], {
           'het_jobs': ['ps', 'worker']
       }),
      ('_reserved_ports',
       slurm_test_util.cyclic_env(1, SLURM_STEP_RESV_PORTS='12000-12003'),
       ['--port-base', 'reserved'], {
           'port_base': 'reserved'
       }),
      ('_derived_ports', slurm_test_util.cyclic_env(1),
       ['--port-base', 'derived'], {
           'port_base': 'derived'
       }),
      ('_port_9000', slurm_test_util.cyclic_env(1), ['--port-base', '9000'], {
          'port_base': 9000
      }),
      ('_rpc_layer', slurm_test_util.cyclic_env(1),
       ['--rpc-layer', 'grpc+verbs'], {
           'rpc_layer': 'grpc+verbs'
       }),
  )
  def testTfConfigIsOneJsonLineAsTheResolverResolves(self, env, argv, kwargs):
    status, out, _ = self.explain(['--tf-config'] + argv, env)
    self.assertEqual(0, status)
    self.assertEqual(1, out.count('\n'))
    self.assertTrue(out.endswith('\n'))
    self.use_env(env)
    resolver = SlurmClusterResolver(auto_set_gpu=False, **kwargs)
    self.assertEqual(
        {
            'cluster': resolver.cluster_spec().as_dict(),
            'task': {'type': resolver.task_type, 'index': resolver.task_id},
            'rpc_layer': resolver.rpc_layer,
        }, json.loads(out))

  @parameterized.named_parameters(
      ('_het_jobs', slurm_test_util.het_later_node_env,
       ['--het-jobs', 'ps,worker'], {
           'het_jobs': ['ps', 'worker']
       }),
      ('_reserved_ports',
       functools.partial(slurm_test_util.cyclic_env,
                         SLURM_STEP_RESV_PORTS='12000-12003'),
       ['--port-base', 'reserved'], {
           'port_base': 'reserved'
       }),
      ('_derived_ports', slurm_test_util.cyclic_env,
       ['--port-base', 'derived'], {
           'port_base': 'derived'
       }),
      ('_port_9000', slurm_test_util.cyclic_env, ['--port-base', '9000'], {
          'port_base': 9000
      }),
  )
  def testAllRowsAreTheResolversTasks(self, make_env, argv, kwargs):
    # Task 0 shows every row; row r is what the resolver of task r decides.
    status, out, _ = self.explain(['--all'] + argv, make_env(0))
    self.assertEqual(0, status)
    rows = explain_rows(out)
    for rank in range(len(rows)):
      with self.subTest(rank=rank):
        env = make_env(rank)
        node, _, task, address, _ = rows[core_step.read_rank(env)]
        self.use_env(env)
        resolver = SlurmClusterResolver(auto_set_gpu=False, **kwargs)
        self.assertEqual(env['SLURMD_NODENAME'], node)
        self.assertEqual('%s:%d' % resolver.get_task_info(), task)
        self.assertEqual(
            address, resolver.cluster_spec().task_address(
                resolver.task_type, resolver.task_id))
    spec = resolver.cluster_spec()
    self.assertLen(rows, sum(spec.num_tasks(job) for job in spec.jobs))

  @parameterized.named_parameters(
      ('_not_in_a_task', slurm_test_util.SALLOC_ENV, [], {}),
      ('_batch_script_of_several_tasks', slurm_test_util.BATCH_ENV, [], {}),
      ('_bad_variable',
       slurm_test_util.cyclic_env(1, SLURM_STEP_TASKS_PER_NODE='4,one'), [],
       {}),
      ('_jobs_contradicting_slurm', slurm_test_util.cyclic_env(1),
       ['--jobs', 'worker=3'], {
           'jobs': {
               'worker': 3
           }
       }),
      ('_bad_job_name', slurm_test_util.cyclic_env(1), ['--jobs', 'my-job=5'], {
          'jobs': {
              'my-job': 5
          }
      }),
      ('_het_jobs_in_a_plain_step', slurm_test_util.cyclic_env(1),
       ['--het-jobs', 'ps,worker'], {
           'het_jobs': ['ps', 'worker']
       }),
      ('_reserved_without_resv_ports', slurm_test_util.cyclic_env(1),
       ['--port-base', 'reserved'], {
           'port_base': 'reserved'
       }),
  )
  def testErrorIsExitStatus1WithTheLibrarysMessage(self, env, argv, kwargs):
    status, out, err = self.explain(argv, env)
    self.assertEqual(1, status)
    self.assertEqual('', out)
    self.use_env(env)
    with self.assertRaises((RuntimeError, ValueError)) as raised:
      SlurmClusterResolver(auto_set_gpu=False, **kwargs)
    self.assertEqual('error: %s\n' % raised.exception, err)

  @parameterized.named_parameters(
      ('_node_gpus_to_split',
       slurm_test_util.step_env('n1',
                                '2',
                                'n1 n1',
                                1,
                                CUDA_VISIBLE_DEVICES='0,1,2,3',
                                SLURM_GPUS_ON_NODE='4'), ['--all']),
      ('_gpus_to_count_with_nvidia_smi', slurm_test_util.cyclic_env(1),
       ['--all']),
      ('_tf_config', slurm_test_util.cyclic_env(1), ['--tf-config']),
      ('_het_jobs', slurm_test_util.het_gpu_env(0),
       ['--all', '--het-jobs', 'ps,worker']),
  )
  def testNeverWritesTheEnvironment(self, env, argv):
    self.use_env(env)
    before = dict(os.environ)
    status, _, _ = self.explain(argv)  # Reads os.environ.
    self.assertEqual(0, status)
    self.assertEqual(before, dict(os.environ))

  def testGpusNoVariableNamesAreCountedAsTheResolverCountsThem(self):
    # No GPU variable and no slurm.conf: nvidia-smi's 2 GPUs, one per task
    # of the busiest node (3 tasks): shared.
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    self.use_env(slurm_test_util.cyclic_env(1))
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    status, out, _ = self.explain([])
    self.assertEqual(0, status)
    self.assertIn('nvidia-smi --list-gpus=0,1', out)
    self.assertIn('; %d per task' % resolver.num_accelerators()['GPU'], out)

  def testGpusOfTheGivenEnvironmentsSlurmConfAreWithheld(self):
    # The environment given names a slurm.conf that lists gpu GRES; this
    # process's names none: the explain command reads the one given.
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    conf = self.use_slurm_conf('GresTypes=gpu\n')
    self.use_env({})
    status, out, _ = self.explain(
        [], slurm_test_util.cyclic_env(1, SLURM_CONF=conf))
    self.assertEqual(0, status)
    self.assertIn('GPUs: %s: Slurm manages the GPUs and gave this step none '
                  'on this node; 0 per task' % conf, out)

  def testHostlistCheckRunsScontrol(self):
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    # scontrol runs in this process's environment, as does the command.
    self.use_env(slurm_test_util.step_env('n[1-2]', '1(x2)', 'n1 n2', 1))
    status, out, _ = self.explain(['--hostlist-expansion', 'check'])
    self.assertEqual(0, status)
    self.assertEqual({1: ['n2', '0', 'worker:1', 'n2:8888', '-']},
                     explain_rows(out))
    self.assertEqual(['scontrol', '--', 'show', 'hostnames', 'n[1-2]'],
                     self.run.call_args_list[0][0][0])

  def testNodeHostIsTheHostOfEveryAddress(self):
    status, out, _ = self.explain(['--all', '--node-host', '{node}-ib'],
                                  slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertEqual(
        ['n1-ib:8888', 'n1-ib:8889', 'n1-ib:8890', 'n1-ib:8891',
         'n2-ib:8888'],
        [row[3] for _, row in sorted(
            explain_rows(out).items())])

  def testWithoutCheckHostsNothingIsLookedUp(self):
    with mock.patch.object(socket, 'getaddrinfo') as getaddrinfo:
      status, out, _ = self.explain(['--all'], slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertNotIn('Host lookup', out)
    getaddrinfo.assert_not_called()

  def testCheckHostsLooksUpEveryHostOnceByNameOnly(self):
    with mock.patch.object(socket, 'getaddrinfo',
                           return_value=[]) as getaddrinfo:
      status, out, _ = self.explain(
          ['--check-hosts', '--node-host', '{node}-ib'],
          slurm_test_util.cyclic_env(1))
    self.assertEqual(0, status)
    self.assertIn('\nHost lookup: 2 of 2 hosts resolve on this node\n', out)
    self.assertCountEqual(
        [mock.call('n1-ib', None, proto=socket.IPPROTO_TCP),
         mock.call('n2-ib', None, proto=socket.IPPROTO_TCP)],
        getaddrinfo.call_args_list)

  def testCheckHostsNamesTheHostsThatDoNotResolveAndFails(self):

    def getaddrinfo(host, *_, **__):
      if host == 'n2':
        raise socket.gaierror(socket.EAI_NONAME,
                              'Name or service not known')
      return []

    with mock.patch.object(socket, 'getaddrinfo', side_effect=getaddrinfo):
      status, out, _ = self.explain(['--check-hosts'],
                                    slurm_test_util.cyclic_env(1))
    self.assertEqual(1, status)
    self.assertIn('\nHost lookup: 1 of 2 hosts resolve on this node\n'
                  '  n2: Name or service not known\n', out)

  def testCheckHostsStopsWaitingAtItsBoundAndNamesTheHostsNotAnswered(self):
    release = threading.Event()
    self.addCleanup(release.set)

    def getaddrinfo(host, *_, **__):
      if host == 'n2':
        release.wait(60)  # A resolver that never answers, until cleanup.
      return []

    with mock.patch.object(slurm_explain, '_LOOKUP_SECONDS', 0.5), \
        mock.patch.object(socket, 'getaddrinfo', side_effect=getaddrinfo):
      status, out, _ = self.explain(['--check-hosts'],
                                    slurm_test_util.cyclic_env(1))
    self.assertFalse(release.is_set())  # It returned while n2 still hung.
    self.assertEqual(1, status)
    self.assertIn('\nHost lookup: 1 of 2 hosts resolve on this node\n', out)
    self.assertRegex(out, r"\n  not answered within \S+ s: \['n2'\]\n")

  @parameterized.named_parameters(
      ('_reader_stopped', BrokenPipeError(errno.EPIPE, 'Broken pipe'), ''),
      ('_disk_full', OSError(errno.ENOSPC, 'No space left on device'),
       'error: cannot write the output: No space left on device\n'))
  def testOutputThatCannotBeWrittenIsExitStatus1(self, error, stderr):
    out = mock.Mock(spec=io.StringIO)
    out.write.side_effect = error
    with mock.patch.object(sys, 'stderr', io.StringIO()) as err:
      status = slurm_explain.main([], slurm_test_util.cyclic_env(1), out)
    self.assertEqual((1, stderr), (status, err.getvalue()))

  def testBadOptionIsAUsageError(self):
    with mock.patch.object(sys, 'stderr', io.StringIO()) as err:
      with self.assertRaises(SystemExit) as raised:
        slurm_explain.main(['--port-base', 'auto'],
                           environ=slurm_test_util.cyclic_env(1),
                           out=io.StringIO())
    self.assertEqual(2, raised.exception.code)
    self.assertIn('--port-base', err.getvalue())

  @parameterized.named_parameters(
      ('_port_base', ['--port-base', '\u0663']),
      ('_jobs_count', ['--jobs', 'worker=\u00b2']),
  )
  def testNonAsciiDigitsAreAUsageError(self, argv):
    with mock.patch.object(sys, 'stderr', io.StringIO()) as err:
      with self.assertRaises(SystemExit) as raised:
        slurm_explain.main(argv, environ=slurm_test_util.cyclic_env(1),
                           out=io.StringIO())
    self.assertEqual(2, raised.exception.code)
    self.assertIn(argv[0], err.getvalue())

  def testExplainShowsTheSharedGpusTheResolverSets(self):
    env = slurm_test_util.step_env('n1', '3', 'n1 n1 n1', 2,
                                   CUDA_VISIBLE_DEVICES='4,5')
    out = io.StringIO()
    self.assertEqual(0, slurm_explain.main(['--all'], environ=env, out=out))
    rows = explain_rows(out.getvalue())
    self.assertEqual(['4', '5', '4'], [rows[rank][4] for rank in range(3)])
    self.use_env(env)
    SlurmClusterResolver()
    self.assertEqual(rows[2][4], os.environ['CUDA_VISIBLE_DEVICES'])


class ExplainCommandProcessTest(absltest.TestCase):
  """`python -m tf_slurm.explain`: the command in a process of its own."""

  def command(self, argv, env):
    """The command line, and `env` with this process's import path."""
    env = dict(env, PYTHONPATH=os.pathsep.join(sys.path),
               PYTHONDONTWRITEBYTECODE='1',
               PATH=os.environ.get('PATH', os.defpath))
    return [sys.executable, '-m', slurm_explain.__name__] + argv, env

  def run_module(self, argv, env, stdout=subprocess.PIPE):
    """Runs the command with `env` and this process's import path."""
    command, env = self.command(argv, env)
    return subprocess.run(
        command, env=env, cwd=self.create_tempdir().full_path, stdout=stdout,
        stderr=subprocess.PIPE, text=True, timeout=300, check=False)

  def testPrintsTheTfConfigOfThisTask(self):
    result = self.run_module(['--tf-config', '--het-jobs', 'ps,worker'],
                             slurm_test_util.het_gpu_env(2))
    self.assertEqual(0, result.returncode, result.stderr)
    self.assertEqual(
        {
            'cluster': {
                'ps': ['n1:8888'],
                'worker': ['n2:8888', 'n2:8889', 'n3:8888']
            },
            'task': {'type': 'worker', 'index': 1},
            'rpc_layer': 'grpc',
        }, json.loads(result.stdout))

  def testErrorIsExitStatus1WithTheMessageOnStderr(self):
    result = self.run_module(['--port-base', 'reserved'],
                             slurm_test_util.cyclic_env(1))
    self.assertEqual(1, result.returncode, result.stderr)
    self.assertEqual('', result.stdout)
    self.assertIn(
        "\nerror: port_base='reserved' needs SLURM_STEP_RESV_PORTS: launch "
        'the step with srun --resv-ports=N', '\n' + result.stderr)

  def testClosedPipeEndsItWithoutATraceback(self):
    # As `| head -1` does: more output than a pipe holds, read no further.
    command, env = self.command(['--all'], slurm_test_util.step_env(
        'n[1-3000]', '1(x3000)', ' '.join('n%d' % i for i in range(1, 3001)),
        0))
    with subprocess.Popen(command, env=env, cwd=self.create_tempdir().full_path,
                          stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
      process.stdout.readline()
      process.stdout.close()
      stderr = process.stderr.read().decode()
      self.assertEqual(1, process.wait(300), stderr)
    self.assertNotIn('Traceback', stderr)
    self.assertNotIn('Broken pipe', stderr)

  def testFullDiskEndsItWithOneLine(self):
    with open('/dev/full', 'w', encoding='utf-8') as full:
      result = self.run_module([], slurm_test_util.cyclic_env(1), stdout=full)
    self.assertEqual(1, result.returncode, result.stderr)
    self.assertNotIn('Traceback', result.stderr)
    self.assertIn('error: cannot write the output: No space left on device\n',
                  result.stderr)

  def testOutsideASlurmTaskFailsWithNothingOnStdout(self):
    result = self.run_module(['--tf-config'], {})
    self.assertEqual(1, result.returncode, result.stderr)
    self.assertEqual('', result.stdout)
    self.assertIn('SLURM_PROCID is not set', result.stderr)


if __name__ == '__main__':
  absltest.main()
