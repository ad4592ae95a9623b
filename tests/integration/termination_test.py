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
"""SlurmTerminationConfig on a real Slurm: save, requeue once, resume.

Batch jobs on n9 and n10 (2 nodes x 1 task) run examples/train_requeue.py:
two MultiWorkerMirroredStrategy workers on CPU under a
PreemptionCheckpointHandler with SlurmTerminationConfig(), on data that
depend only on the step. Each case stops a job midway, the way Slurm does:

1. early warning: `scancel --signal=USR1` (examples/sbatch_requeue.sh as a
   user submits it): one save, one requeue by task 0, the job resumes from
   the saved step and ends COMPLETED with Restarts=1 and the weights of an
   uninterrupted run;
2. time limit (`--time=1`, no `--signal`): saved within KillWait (5 s on the
   lab), requeued by task 0, resumed, COMPLETED;
3. `scancel`: saved, CANCELLED, not requeued;
4. preemption by a job of the higher-tier partition "urgent"
   (`PreemptMode=REQUEUE`): saved, requeued by Slurm and not by task 0,
   resumed, COMPLETED;
5. early warning with no scontrol where the tasks run (as in a container):
   task 0 exits with 43 and examples/sbatch_requeue.sh requeues the job;
6. early warning before the tasks' Python has created the config: SIGUSR1
   ends the tasks, srun exits with 138 and examples/sbatch_requeue.sh
   requeues the job, which then trains from the start;
7. a failed task of the step (tests/integration/peer_failure_task.py, no
   training): task 1 exits with 1 under `srun --kill-on-bad-exit=1`, or
   (Slurm 26.05 and later) calls PMI1's abort under `srun --mpi=pmi2`; task
   0 gets SIGTERM while the job runs on, and is not requeued.
Each test prints the job states and restart counts it saw. The lab has
`AuthInfo=cred_expire=5` (a requeued job starts about 6 s after it ended)
and `KillWait=5` (see tools/slurm_lab/up.sh).

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration/termination_test.py -v
"""

import json
import os
import shlex
import threading
import time

from absl.testing import absltest
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SBATCH_REQUEUE = os.path.join(ROOT, 'examples', 'sbatch_requeue.sh')
REQUEUE_JOB = os.path.join(HERE, 'requeue_job.sh')
PYTHON_WITHOUT_SCONTROL = os.path.join(HERE, 'python_without_scontrol.sh')
PYTHON_AFTER_A_PAUSE = os.path.join(HERE, 'python_after_a_pause.sh')
PEER_FAILURE_TASK = os.path.join(HERE, 'peer_failure_task.py')
NODES = 'n[9-10]'
JOB_ARGS = ['-w', NODES, '-N2', '--ntasks-per-node=1']
# The time limit case runs meanwhile on two nodes of the other partition.
TIME_LIMIT_JOB_ARGS = ['-p', 'mixed', '-w', 'c[09-10]', '-N2',
                       '--ntasks-per-node=1']
# Cases stopped by the test: enough steps for a stop midway, and a pause per
# step of the first run so that the test sees the run before its end.
STEPS = 200
STOP_AT_STEP = 50
FIRST_RUN_STEP_SECONDS = '0.05'
# The time limit case: a first run longer than the limit (60 s) plus the up
# to 30 s slurmctld takes to notice it.
TIME_LIMIT_STEPS = 1200
TIME_LIMIT_STEP_SECONDS = '0.1'
FINAL_STATES = ('COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL',
                'PREEMPTED', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE')
REQUEUED_BY_TASK = 'SlurmTerminationConfig: checkpoint saved; requeued job'
NOT_REQUEUED = ('SlurmTerminationConfig: checkpoint saved; job %s is not '
                'requeued')


class Job:
  """A batch job of the lab: its output file and the states seen so far."""

  def __init__(self, lab, job_id, log):
    self.lab, self.id, self.log = lab, job_id, log
    self.history = []  # (JobState, Restarts), each change once.
    self.fields = {}

  def poll(self):
    shown = self.lab.client('scontrol', '-o', 'show', 'job', self.id)
    fields = dict(item.split('=', 1) for item in shown.stdout.split()
                  if '=' in item)
    if fields.get('JobState'):
      self.fields = fields
      seen = (fields['JobState'], int(fields.get('Restarts', '0')))
      if not self.history or self.history[-1] != seen:
        self.history.append(seen)
    return self.fields

  def text(self):
    try:
      with open(self.log, encoding='utf-8', errors='replace') as f:
        return f.read()
    except FileNotFoundError:
      return ''

  def wait_for_log(self, line, timeout):
    """Polls until the output file has `line`; False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
      self.poll()
      if line in self.text():
        return True
      time.sleep(0.25)
    return False

  def wait_for_end(self, timeout):
    """Polls until the job is in a final state; returns it (or None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
      state = self.poll().get('JobState')
      if state in FINAL_STATES:
        return state
      time.sleep(0.25)
    self.lab.scancel(self.id)
    return None

  def follow(self, timeout):
    """Waits for the end in a thread: `join()` it, then read `.final`."""
    self.final = None

    def wait():
      self.final = self.wait_for_end(timeout)

    follower = threading.Thread(target=wait, daemon=True)
    follower.start()
    return follower

  def describe(self):
    return 'job %s states %s\n--- output (end)\n%s' % (
        self.id, self.states(), '\n'.join(self.text().splitlines()[-60:]))

  def states(self):
    return ' -> '.join('%s(Restarts=%d)' % seen for seen in self.history)

  def results(self):
    """procid -> the task's RESULT, from the output file."""
    found = {}
    for line in self.text().splitlines():
      if line.startswith('RESULT '):
        result = json.loads(line[len('RESULT '):])
        found[result['procid']] = result
    return found

  def starts(self):
    """(restart count, step) of each `START` line of task 0."""
    found = []
    for line in self.text().splitlines():
      if line.startswith('START job '):
        words = line.split()
        found.append((int(words[4]), int(words[7])))
    return found


def submit(lab, tmp, label, script, sbatch_args, steps, step_seconds='0',
           job_args=JOB_ARGS, env=None):
  """Submits `script` for examples/train_requeue.py; returns the Job."""
  folder = os.path.join(tmp, label)
  os.makedirs(folder)
  log = os.path.join(folder, 'job.out')
  name = lab.job_name(label)
  job_env = {
      'REPO': ROOT,
      'PYTHON': lab.python,
      # TensorFlow's PreemptionCheckpointHandler asks whether it runs on
      # Google Cloud (an HTTP request to the metadata server): keep it on
      # the task's own loopback.
      'GCE_METADATA_IP': '127.0.0.1:9',
  }
  job_env.update(env or {})
  argv = (['sbatch', '--parsable', '--job-name', name, '--output', log] +
          list(job_args) + list(sbatch_args) +
          [script, '--checkpoint-dir', os.path.join(folder, 'ckpt'),
           '--steps', str(steps), '--first-run-step-seconds', step_seconds])
  submitted = lab.run(argv, 60, job_name=name, env=job_env, cwd=ROOT)
  assert submitted.returncode == 0, submitted.describe()
  job = Job(lab, submitted.stdout.strip().split(';')[0], log)
  print('%s: job %s' % (label, job.id))
  return job


@pytest.fixture(scope='module')
def reference_weights(slurm_lab, tmp_path_factory):
  """The weights of an uninterrupted run of STEPS steps."""
  job = submit(slurm_lab, str(tmp_path_factory.mktemp('termination')),
               'uninterrupted', REQUEUE_JOB, ['--requeue'], STEPS)
  state = job.wait_for_end(180)
  results = job.results()
  assert state == 'COMPLETED' and sorted(results) == [0, 1], job.describe()
  return results[0]['weights']


@pytest.fixture(scope='module')
def time_limit_job(slurm_lab, tmp_path_factory):
  """The time limit case's job, submitted first: it takes the longest."""
  job = submit(slurm_lab, str(tmp_path_factory.mktemp('termination')),
               'time-limit', REQUEUE_JOB,
               ['--time=1', '--requeue', '--open-mode=append'],
               TIME_LIMIT_STEPS, TIME_LIMIT_STEP_SECONDS, TIME_LIMIT_JOB_ARGS)
  # Polled all along, so that no state goes unseen.
  follower = job.follow(600)
  yield job, follower
  if follower.is_alive():
    slurm_lab.scancel(job.id)


@pytest.mark.usefixtures('slurm_lab')
class TerminationTest(absltest.TestCase):
  """The four ways a Slurm job is stopped, and what comes after."""

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path, request):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)
    self.request = request

  def _stopped_midway(self, label, script, sbatch_args, env=None):
    job = submit(self.lab, self.tmp, label, script, sbatch_args, STEPS,
                 FIRST_RUN_STEP_SECONDS, env=env)
    self.assertTrue(job.wait_for_log('STEP %d ' % STOP_AT_STEP, 150),
                    job.describe())
    return job

  def _assert_ended(self, job, label, state, restarts, timeout=180):
    """Waits for the job's end; checks its state and restart count."""
    ended = job.wait_for_end(timeout)
    print('%s: %s' % (label, job.states()))
    self.assertEqual(ended, state, job.describe())
    self.assertEqual(job.fields.get('Restarts'), str(restarts), job.describe())
    return job.text()

  def _signal(self, job, *args):
    cancelled = self.lab.scancel(*(args + (job.id,)))
    self.assertEqual(cancelled.returncode, 0, cancelled.describe())

  def _assert_resumed(self, job, steps):
    """The job restarted once, from a saved step, and trained to the end."""
    starts = job.starts()
    self.assertLen(starts, 2, job.describe())
    self.assertEqual(starts[0], (0, 0), job.describe())
    restart, step = starts[1]
    self.assertEqual(restart, 1, job.describe())
    self.assertBetween(step, 1, steps - 1, job.describe())
    results = job.results()
    self.assertEqual(sorted(results), [0, 1], job.describe())
    for result in results.values():
      self.assertEqual((result['restarts'], result['steps']), (1, steps))
    self.assertEqual(results[0]['weights'], results[1]['weights'])
    return step

  def _peer_fails(self, label, how, srun_args):
    """A batch job whose step's task 1 fails as `how` says; its Job."""
    folder = os.path.join(self.tmp, label)
    os.makedirs(folder)
    log = os.path.join(folder, 'job.out')
    name = self.lab.job_name(label)
    step = ['srun'] + srun_args + [self.lab.python, PEER_FAILURE_TASK,
                                   os.path.join(folder, 'ready'), how]
    wrap = '%s; echo "job ${SLURM_JOB_ID}: srun exited with $?"' % (
        shlex.join(step))
    submitted = self.lab.run(
        ['sbatch', '--parsable', '--job-name', name, '--output', log,
         '--requeue', '--time=5'] + JOB_ARGS + ['--wrap', wrap], 60,
        job_name=name)
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    return Job(self.lab, submitted.stdout.strip().split(';')[0], log)

  def _assert_not_requeued_after_a_failed_task(self, job, label):
    text = self._assert_ended(job, label, 'COMPLETED', 0, timeout=120)
    # Task 0's config got SIGTERM (task 1 has none) and logged why.
    self.assertEqual(text.count('SIGTERM received'), 1, job.describe())
    self.assertIn(NOT_REQUEUED % job.id + ': SIGTERM while the job runs on '
                  '(JobState=RUNNING Reason=None)', text)
    return text

  def test_failed_task_under_kill_on_bad_exit_is_not_requeued(self):
    job = self._peer_fails('peer-exit', 'exit', ['--kill-on-bad-exit=1'])
    text = self._assert_not_requeued_after_a_failed_task(job, 'failed task')
    # Task 0's 42 (saved, nothing to do), not 43: the batch script does not
    # requeue either.
    self.assertIn('job %s: srun exited with 42' % job.id, text)

  def test_mpi_abort_sends_sigterm_from_slurm_26_05_and_is_not_requeued(self):
    if tuple(int(n) for n in self.lab.version.split('.')[:2]) < (26, 5):
      self.skipTest('before Slurm 26.05 an MPI abort sends SIGKILL alone')
    job = self._peer_fails('peer-pmi-abort', 'pmi-abort',
                           ['--mpi=pmi2', '--kill-on-bad-exit=0'])
    text = self._assert_not_requeued_after_a_failed_task(job, 'MPI abort')
    self.assertIn('DUE TO TASK FAILURE', text)

  def test_early_warning_saves_requeues_once_and_resumes(self):
    # The first test (by name): the time limit case starts now and runs
    # meanwhile on other nodes.
    self.request.getfixturevalue('time_limit_job')
    weights = self.request.getfixturevalue('reference_weights')
    job = self._stopped_midway('warning', SBATCH_REQUEUE, [])
    self._signal(job, '--signal=USR1')
    text = self._assert_ended(job, 'early warning', 'COMPLETED', 1)
    self.assertIn(('PENDING', 1), job.history, job.describe())
    self.assertEqual(text.count('SIGUSR1 received'), 2, job.describe())
    self.assertIn(REQUEUED_BY_TASK + ' %s (scontrol requeue) after the early '
                  'warning' % job.id, text)
    self.assertIn('(SLURM_RESTART_COUNT=1)', text)
    self._assert_resumed(job, STEPS)
    # Equal up to float32 rounding (seen: 1 ulp in one of nine values).
    resumed = [v for w in job.results()[0]['weights'] for v in w]
    uninterrupted = [v for w in weights for v in w]
    for got, want in zip(resumed, uninterrupted, strict=True):
      self.assertAlmostEqual(got, want, delta=1e-6 * max(1.0, abs(want)))

  def test_without_scontrol_the_batch_script_requeues_on_status_43(self):
    job = self._stopped_midway(
        'no-scontrol', SBATCH_REQUEUE, [],
        env={'PYTHON': PYTHON_WITHOUT_SCONTROL, 'TASK_PYTHON': self.lab.python})
    self._signal(job, '--signal=USR1')
    text = self._assert_ended(job, 'early warning without scontrol',
                              'COMPLETED', 1)
    self.assertIn('job %s should be requeued after the early warning, but '
                  '`scontrol -o show job %s` cannot run: scontrol is not on '
                  'PATH. Exiting with 43' % (job.id, job.id), text)
    self.assertIn('job %s: srun exited with 43' % job.id, text)
    self.assertNotIn(REQUEUED_BY_TASK, text)
    self._assert_resumed(job, STEPS)

  def test_warning_before_the_config_exists_is_requeued_by_the_batch_script(
      self):
    job = submit(self.lab, self.tmp, 'early-warning-at-start', SBATCH_REQUEUE,
                 [], STEPS, env={'PYTHON': PYTHON_AFTER_A_PAUSE,
                                 'TASK_PYTHON': self.lab.python,
                                 'PAUSE_SECONDS': '60'})
    for procid in (0, 1):
      self.assertTrue(job.wait_for_log('PAUSE task %d' % procid, 150),
                      job.describe())
    self._signal(job, '--signal=USR1')
    text = self._assert_ended(job, 'early warning at start', 'COMPLETED', 1)
    self.assertIn('job %s: srun exited with 138' % job.id, text)
    self.assertIn('job %s: requeued by the batch script (srun status 138)' %
                  job.id, text)
    self.assertNotIn('SIGUSR1 received', text)
    # The first run never trained: the requeued job starts from step 0.
    self.assertEqual(job.starts(), [(1, 0)], job.describe())
    results = job.results()
    self.assertEqual(sorted(results), [0, 1], job.describe())
    for result in results.values():
      self.assertEqual((result['restarts'], result['steps']), (1, STEPS))

  def test_time_limit_saves_within_kill_wait_requeues_and_resumes(self):
    job, follower = self.request.getfixturevalue('time_limit_job')
    follower.join(300)
    state = job.final
    print('time limit:', job.states())
    self.assertEqual(state, 'COMPLETED', job.describe())
    self.assertEqual(job.fields.get('Restarts'), '1', job.describe())
    text = job.text()
    self.assertIn('DUE TO TIME LIMIT', text)
    self.assertEqual(text.count('SIGTERM received'), 2, job.describe())
    # Logged by task 0 after its save and before SIGKILL.
    self.assertIn(REQUEUED_BY_TASK + ' %s (scontrol requeue) after the time '
                  'limit (Reason=TimeLimit)' % job.id, text)
    self._assert_resumed(job, TIME_LIMIT_STEPS)

  def test_scancel_saves_and_is_not_requeued(self):
    job = self._stopped_midway('scancel', REQUEUE_JOB,
                               ['--requeue', '--open-mode=append'])
    self._signal(job)
    text = self._assert_ended(job, 'scancel', 'CANCELLED', 0, timeout=60)
    self.assertIn(NOT_REQUEUED % job.id + ': SIGTERM not at the time limit',
                  text)
    self.assertNotIn(REQUEUED_BY_TASK, text)
    self.assertLen(job.starts(), 1, job.describe())
    checkpoints = os.listdir(os.path.join(os.path.dirname(job.log), 'ckpt'))
    self.assertIn('checkpoint', checkpoints)
    self.assertTrue(any(n.endswith('.index') for n in checkpoints),
                    checkpoints)

  def test_preemption_is_requeued_by_slurm_not_again_and_resumes(self):
    job = self._stopped_midway('preempted', REQUEUE_JOB,
                               ['--requeue', '--open-mode=append'])
    name = self.lab.job_name('urgent')
    urgent = self.lab.run(
        ['sbatch', '--parsable', '--job-name', name, '-p', 'urgent', '-w',
         NODES, '-N2', '--exclusive', '--output', '/dev/null', '--wrap',
         'sleep 1'], 60, job_name=name)
    self.assertEqual(urgent.returncode, 0, urgent.describe())
    text = self._assert_ended(job, 'preemption', 'COMPLETED', 1)
    self.assertIn('DUE TO PREEMPTION', text)
    self.assertIn(NOT_REQUEUED % job.id + ': Slurm has requeued the job '
                  'itself (Restarts=1, SLURM_RESTART_COUNT=0)', text)
    self.assertNotIn(REQUEUED_BY_TASK, text)
    self._assert_resumed(job, STEPS)
    shown = self.lab.client('scontrol', '-o', 'show', 'job',
                            urgent.stdout.strip().split(';')[0])
    self.assertIn('JobState=COMPLETED', shown.stdout)


if __name__ == '__main__':
  absltest.main()
