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
"""`SlurmTerminationConfig`: save at the end of a Slurm job, then requeue it.

With this config, `PreemptionCheckpointHandler` has every worker save a
checkpoint when Slurm announces or starts the end of the job, and then
requeues the job when the end is a time limit or an early warning, so that
it resumes from that checkpoint.

What Slurm does (22.05 to 24.11), which the requeue relies on:
  - `sbatch --signal=USR1@T` sends SIGUSR1 to the tasks of the job's steps
    about T s (up to 60 s earlier) before the time limit; `scancel
    --signal=USR1` sends it at once.
  - At the time limit, on `scancel` and when a job is preempted, slurmd sends
    the tasks SIGCONT and SIGTERM, waits `KillWait` seconds (30 by default),
    then sends SIGKILL.
  - When a task of a step fails, the step's other tasks get the same
    SIGCONT, SIGTERM, `KillWait` s, SIGKILL with `srun --kill-on-bad-exit=1`
    (or `KillOnBadExit=1`), and from Slurm 26.05 also after an MPI abort
    (`--mpi=pmi2`: `PMI2_Abort` or PMI1's abort; `--mpi=pmix`: `PMIx_Abort`
    or a PMIx client's failure; before 26.05 these sent SIGKILL alone). The
    job runs on: `JobState=RUNNING`, `Reason=None`, before its end time.
  - While the tasks handle a job's SIGTERM, `scontrol show job` shows
    `JobState=COMPLETING` in all three cases; `Reason=TimeLimit` tells the
    time limit, and a preemption with `PreemptMode=REQUEUE` has already
    requeued the job (`Restarts` is one more than `SLURM_RESTART_COUNT`).
  - `scontrol requeue` works for batch jobs that may be requeued
    (`Requeue=1`: `sbatch --requeue` or the cluster's `JobRequeue=1`); the
    job keeps its id, starts again with `SLURM_RESTART_COUNT` set, and its
    output file is truncated unless `--open-mode=append`.
"""

import collections
import os
import signal
import sys
import time

from tensorflow.python.distribute.failure_handling import failure_handling
from tensorflow.python.eager import context
from tensorflow.python.framework import errors
from tensorflow.python.platform import tf_logging as logging
from tf_slurm import slurm_launcher
from tf_slurm import util

# The exit status after the save when nothing is left to do (the job was
# requeued, or must not be): TensorFlow's own default, `sys.exit(42)`.
EXIT_SAVED = 42
# The exit status after the save when the job should be requeued but this
# task could not do it (no `scontrol`, as in many containers, or it failed),
# or this task failed to tell: the batch script requeues the job when `srun`
# exits with it.
EXIT_REQUEUE = 43

# Signals that cannot be the early warning: SIGTERM is watched anyway, and
# SIGKILL and SIGSTOP cannot be caught.
_NOT_A_WARNING = (signal.SIGTERM, signal.SIGKILL, signal.SIGSTOP)
# Slurm's restart counts and times are unsigned, at most 64-bit.
_MAX_NUMBER = 2**64 - 1
# How many polls of the handler's watcher (one a second) look for a SIGTERM
# that TensorFlow's own handler took (`_tf_took_sigterm`): its listener
# reports one within a second.
_TF_SIGTERM_POLLS = 3

# What a stop calls for: `requeue` says whether the job should be requeued,
# `why` says why, for the log.
Decision = collections.namedtuple('Decision', ['requeue', 'why'])


def parse_job_fields(text):
  """Returns the `Key=value` fields of `scontrol -o show job` as a dict.

  Args:
    text: the output of `scontrol -o show job JOBID` (one line of
      space-separated `Key=value` items).

  Raises:
    ValueError: if the text holds no `JobState` field, or a `Restarts` field
      that is not a count.
  """
  fields = dict(item.split('=', 1) for item in text.split() if '=' in item)
  if 'JobState' not in fields:
    raise ValueError('scontrol -o show job printed no JobState field: %r' %
                     text[:200])
  if 'Restarts' in fields:
    util.parse_int('scontrol -o show job: Restarts',
                             fields['Restarts'], 0, _MAX_NUMBER)
  return fields


def decide(warned, terminated_at, job, restart_count, end_time):
  """Decides whether a stopping job should be requeued.

  Args:
    warned: whether the early-warning signal arrived.
    terminated_at: when SIGTERM first arrived (seconds since the epoch), or
      None.
    job: the job's `scontrol -o show job` fields (`parse_job_fields`), or
      None when they could not be read.
    restart_count: `SLURM_RESTART_COUNT` (0 when unset).
    end_time: `SLURM_JOB_END_TIME` (Slurm 23.02 and later), or None.

  Returns:
    A `Decision`.
  """
  if job is not None:
    restarts = util.parse_int('Restarts', job.get('Restarts', '0'),
                                        0, _MAX_NUMBER)
    if restarts > restart_count:
      return Decision(False, 'Slurm has requeued the job itself (Restarts=%d, '
                      'SLURM_RESTART_COUNT=%d): a preemption' %
                      (restarts, restart_count))
    if job.get('BatchFlag') == '0':
      return Decision(False, 'not a batch job, which Slurm cannot requeue')
    if job.get('Requeue') == '0':
      return Decision(False, 'the job may not be requeued (Requeue=0: '
                      'sbatch --no-requeue, or JobRequeue=0 without '
                      '--requeue)')
    if warned:
      return Decision(True, 'the early warning')
    if job.get('Reason') == 'TimeLimit':
      return Decision(True, 'the time limit (Reason=TimeLimit)')
    if job.get('JobState') == 'RUNNING':
      return Decision(False, 'SIGTERM while the job runs on '
                      '(JobState=RUNNING Reason=%s): the end of this step, '
                      'not of the job; a task of the step failed (srun '
                      '--kill-on-bad-exit, an MPI abort) or the step was '
                      'cancelled' % job.get('Reason'))
    return Decision(False, 'SIGTERM not at the time limit (JobState=%s '
                    'Reason=%s): scancel, or a node going down' %
                    (job.get('JobState'), job.get('Reason')))
  if warned:
    return Decision(True, 'the early warning')
  if end_time is not None and terminated_at is not None:
    if terminated_at >= end_time:
      return Decision(True, 'the time limit (SIGTERM after '
                      'SLURM_JOB_END_TIME=%d)' % end_time)
    return Decision(False, 'SIGTERM before SLURM_JOB_END_TIME=%d: scancel, '
                    'a preemption or a failed task of the step' % end_time)
  return Decision(False, 'SIGTERM, and without scontrol and '
                  'SLURM_JOB_END_TIME (Slurm before 23.02) a time limit '
                  'cannot be told from scancel or a preemption')


def _int_variable(environ, name):
  """The integer value of environment variable `name`, or None if unset."""
  value = environ.get(name)
  if value is None or value == '':
    return None
  return util.parse_int(name, value, 0, _MAX_NUMBER)


def _requeues(environ):
  """Whether this task is the one that requeues: rank 0 of the launch.

  The rank is the launcher's (`slurm_launcher.rank_variable`): under
  `mpirun` and `mpiexec.hydra`, `SLURM_PROCID` is that of the launcher's
  daemon on the rank's node (or 0, the batch script's, on the first node).
  A process without a rank (the batch script itself) requeues.
  """
  name = slurm_launcher.rank_variable(environ)
  return _int_variable(environ, name) in (None, 0)


def _tf_took_sigterm():
  """The task whose SIGTERM TensorFlow's own handler took, or None.

  `MultiWorkerMirroredStrategy` starts TensorFlow's coordination service,
  whose SIGTERM handler (C++) takes the place of Python's; on a SIGTERM it
  posts the task's name under `failure_handling.PREEMPTION_KEY`, for every
  task to read.
  """
  ctx = context.context()
  if not ctx.coordination_service:
    return None
  try:
    return ctx.get_config_key_value(failure_handling.PREEMPTION_KEY,
                                    timeout_in_ms=100)
  except errors.OpError:  # Not there (DeadlineExceeded), or no service.
    return None


class SlurmTerminationConfig(failure_handling.TerminationConfig):
  """Saves on Slurm's early warning and SIGTERM, then requeues the job once.

  With `tf.distribute.experimental.PreemptionCheckpointHandler`, every worker
  saves a checkpoint at the same step when its task gets the early warning
  (`sbatch --signal=USR1@120` sends SIGUSR1 about 120 s before the time
  limit) or SIGTERM (the time limit, `scancel`, preemption). Then rank 0
  requeues the job (`scontrol requeue`) when the stop is the early warning
  or the time limit and the job may be requeued; never after `scancel` or a
  failed task of the step (`srun --kill-on-bad-exit=1` sends SIGTERM to the
  others), and not when Slurm has requeued the job itself (preemption with
  `PreemptMode=REQUEUE`). Every task then exits with `EXIT_SAVED` (42,
  TensorFlow's default), except that rank 0 exits with `EXIT_REQUEUE` (43),
  logging one line that says why, when the job should be requeued but it
  could not do it (no `scontrol` in a container, or it failed) or could not
  tell: the batch script then requeues the job itself, e.g.

      srun python train.py || { [ $? = 43 ] && scontrol requeue $SLURM_JOB_ID; }

  The requeued job starts again with the same job id and
  `SLURM_RESTART_COUNT` (logged here), and the handler restores the latest
  checkpoint.

  ```python
  termination_config = tf.distribute.experimental.SlurmTerminationConfig()
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver()
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  ...
  handler = tf.distribute.experimental.PreemptionCheckpointHandler(
      resolver, checkpoint, checkpoint_dir, termination_config)
  while step.numpy() < steps:
    handler.run(train_step, iterator)
    step.assign_add(1)
  ```

  Create the config in the main thread before the strategy, so that the
  warning does not end the process (its default action). The config
  installs its signal handlers when it is created and again whenever its
  `termination_watcher_fn` is read: the handler reads it when it is
  created, after the strategy, so the config's handlers take the place of
  the one a `MultiWorkerMirroredStrategy` installs for SIGTERM. (With a
  TensorFlow whose `TerminationConfig` takes `termination_signals`,
  `TerminationConfig(termination_signals=(signal.SIGUSR1, signal.SIGTERM))`
  saves on both signals without this config; it adds the requeue.)

  Rank 0 is the launcher's: `SLURM_PROCID` under `srun`, the MPI rank under
  `mpirun` and `mpiexec.hydra` (`slurm_launcher.rank_variable`). The job is
  requeued at most once per run of the job, however often the handler calls
  `exit_fn`.

  Each signal is announced on stderr when it first arrives, and the Python
  handler that the program installed before is called after. A SIGTERM that
  TensorFlow's own handler (installed by a `MultiWorkerMirroredStrategy`)
  took between the strategy and the `PreemptionCheckpointHandler` is acted
  on too: it was posted to the coordination service, which the watcher's
  first `_TF_SIGTERM_POLLS` polls read.
  """

  def __init__(  # pylint: disable=super-init-not-called
      self, warning_signal=signal.SIGUSR1, grace_period=0):
    """Creates the config and installs its signal handlers.

    Args:
      warning_signal: the signal of `sbatch --signal=SIG@T` (default SIGUSR1).
      grace_period: seconds of training left after the signal before the
        save, as in `TerminationConfig`.

    Raises:
      ValueError: if an argument is not of that kind, a Slurm variable is not
        a number (such as `SLURM_JOB_ID`), or not in the main thread; nothing
        is installed then.
      RuntimeError: if an MPI launcher's variables are set that no known
        launcher sets alone.
    """
    if warning_signal not in set(signal.Signals).difference(_NOT_A_WARNING):
      raise ValueError('warning_signal=%r: expected a signal that can be '
                       'caught other than SIGTERM, such as signal.SIGUSR1' %
                       (warning_signal,))
    if isinstance(grace_period, bool) or not (
        isinstance(grace_period, (int, float)) and grace_period >= 0):
      raise ValueError('grace_period=%r: expected a number of seconds >= 0' %
                       (grace_period,))
    self.warning_signal = signal.Signals(warning_signal)
    self.grace_period = grace_period
    self.exit_fn = self._exit
    self.save_fn = None  # TensorFlow's default.
    environ = os.environ
    job_id = _int_variable(environ, 'SLURM_JOB_ID')
    # Digits alone: what `scontrol requeue` is given.
    self._job_id = None if job_id is None else str(job_id)
    self._requeues = _requeues(environ)
    self._restart_count = (
        _int_variable(environ, 'SLURM_RESTART_COUNT') or 0)
    self._end_time = _int_variable(environ, 'SLURM_JOB_END_TIME')
    self._signals = (self.warning_signal, signal.SIGTERM)
    # The signals that arrived.
    self._received = set()
    # When SIGTERM first arrived. Written only by the signal handler and the
    # watcher, read by the exit.
    self._terminated_at = None
    # The Python handlers installed before, by signal number.
    self._previous = {}
    # Polls left that look for a SIGTERM TensorFlow's handler took.
    self._tf_polls = 0
    # The exit status, once `exit_fn` has decided it.
    self._exit_status = None
    self._install_handlers()
    if self._restart_count and self._requeues:
      logging.warning(
          'SlurmTerminationConfig: job %s started again after %d requeue(s) '
          '(SLURM_RESTART_COUNT=%d); the PreemptionCheckpointHandler restores '
          'the latest checkpoint.', self._job_id, self._restart_count,
          self._restart_count)

  @property
  def termination_watcher_fn(self):
    """Whether a signal arrived; reading it installs the handlers again.

    Its first polls also read TensorFlow's SIGTERM notice.
    """
    self._tf_polls = _TF_SIGTERM_POLLS
    self._install_handlers()
    return self._stop_received

  def _install_handlers(self):
    """Installs `_on_signal`, remembering the Python handlers before it."""
    for number in self._signals:
      previous = signal.getsignal(number)
      # Not when installing again (bound methods compare equal, not same).
      # pylint: disable-next=comparison-with-callable
      if previous != self._on_signal:
        self._previous[number] = previous
    for number in self._signals:
      signal.signal(number, self._on_signal)

  def _on_signal(self, signum, frame):
    """Records the signal, announces it, chains to the handler before."""
    if signum not in self._received:
      if signum == signal.SIGTERM:
        self._terminated_at = time.time()
      # No logging (its locks) in a signal handler: one write to stderr.
      try:
        os.write(2, ('SlurmTerminationConfig: %s received; every worker '
                     'saves a checkpoint at the next step.\n' %
                     signal.Signals(signum).name).encode())
      except OSError:
        pass
    self._received.add(signum)
    previous = self._previous.get(signum)
    if callable(previous):
      previous(signum, frame)

  def _stop_received(self):
    """Whether a signal arrived; the first polls read TensorFlow's notice."""
    if not self._received and self._tf_polls:
      self._tf_polls -= 1
      task = _tf_took_sigterm()
      if task is not None:
        self._terminated_at = time.time()
        self._received.add(signal.SIGTERM)
        logging.warning('SlurmTerminationConfig: TensorFlow\'s own handler '
                        'took a SIGTERM (of %s) before the '
                        'PreemptionCheckpointHandler was created; every '
                        'worker saves a checkpoint at the next step.', task)
    return bool(self._received)

  def _exit(self):
    """The handler's `exit_fn`: requeue if the stop calls for it, exit.

    Decides once: called again (a framework that catches `SystemExit`), it
    exits with the same status and requeues nothing.
    """
    if self._exit_status is None:
      self._exit_status = self._exit_status_of_stop()
    sys.exit(self._exit_status)

  def _exit_status_of_stop(self):
    """`_stop_and_requeue`; EXIT_REQUEUE if rank 0 fails to decide."""
    try:
      return self._stop_and_requeue()
    except Exception as e:  # pylint: disable=broad-except
      # The checkpoint is saved; the batch script can still requeue.
      logging.warning('SlurmTerminationConfig: checkpoint saved; job %s may '
                      'need requeueing, but deciding failed (%s: %s). Exiting '
                      'with %d: the batch script may requeue it.',
                      self._job_id, type(e).__name__, e, EXIT_REQUEUE)
      return EXIT_REQUEUE

  def _stop_and_requeue(self):
    """Requeues the job if this task should; returns the exit status."""
    if not self._requeues:
      return EXIT_SAVED
    if not self._job_id:
      logging.warning('SlurmTerminationConfig: checkpoint saved; not in a '
                      'Slurm job (no SLURM_JOB_ID), nothing to requeue.')
      return EXIT_SAVED
    job, trouble = self._show_job()
    decision = decide(self.warning_signal in self._received,
                      self._terminated_at, job, self._restart_count,
                      self._end_time)
    if not decision.requeue:
      logging.warning('SlurmTerminationConfig: checkpoint saved; job %s is '
                      'not requeued: %s. Exiting with %d.', self._job_id,
                      decision.why, EXIT_SAVED)
      return EXIT_SAVED
    if job is not None:
      trouble = self._scontrol('requeue', self._job_id)[1]
      if trouble is None:
        logging.warning('SlurmTerminationConfig: checkpoint saved; requeued '
                        'job %s (scontrol requeue) after %s. Exiting with '
                        '%d.', self._job_id, decision.why, EXIT_SAVED)
        return EXIT_SAVED
    logging.warning('SlurmTerminationConfig: checkpoint saved; job %s should '
                    'be requeued after %s, but %s. Exiting with %d: the batch '
                    'script may requeue it.', self._job_id, decision.why,
                    trouble, EXIT_REQUEUE)
    return EXIT_REQUEUE

  def _show_job(self):
    """(fields of `scontrol -o show job`, None) or (None, what failed)."""
    output, trouble = self._scontrol('-o', 'show', 'job', self._job_id)
    if trouble is not None:
      return None, trouble
    try:
      return parse_job_fields(output), None
    except ValueError as e:
      return None, str(e)

  def _scontrol(self, *args):
    """Runs scontrol; returns (stdout, None) or (None, what failed).

    With SIGTERM ignored, here and (inherited) in scontrol: `scontrol
    requeue` makes Slurm send SIGTERM to every process of the job's steps,
    this scontrol included, often before it has reported (seen on 22.05:
    exit status -15 although the job was requeued).
    """
    try:
      previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # Not the main thread: run it as it is.
      previous = None
    try:
      return util.run_command(['scontrol'] + list(args))[0], None
    except RuntimeError as e:
      return None, str(e)
    finally:
      if previous is not None:
        signal.signal(signal.SIGTERM, previous)
