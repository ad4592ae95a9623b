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
"""The companion's SlurmTerminationConfig: the save on Slurm's signals and the
requeue (signals, commands and os.environ mocked; real signals in
MainThreadTest)."""

import os
import signal
import subprocess
import threading
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.failure_handling import failure_handling
from tensorflow.python.distribute.failure_handling import failure_handling_util
from tf_slurm import slurm_test_util
from tf_slurm import termination as stc

_RUNNING = ('JobId=7 JobName=train JobState=RUNNING Reason=None '
            'Requeue=1 Restarts=0 BatchFlag=1')
_TIME_LIMIT = ('JobId=7 JobName=train JobState=COMPLETING Reason=TimeLimit '
               'Requeue=1 Restarts=0 BatchFlag=1')
_CANCELLED = ('JobId=7 JobName=train JobState=COMPLETING Reason=None '
              'Requeue=1 Restarts=0 BatchFlag=1')
_PREEMPTED = ('JobId=7 JobName=train JobState=COMPLETING Reason=None '
              'Requeue=1 Restarts=1 BatchFlag=1')
_TASK0 = {'SLURM_JOB_ID': '7', 'SLURM_PROCID': '0'}


def _job(text):
  return stc.parse_job_fields(text)


def _done(stdout='', returncode=0, stderr=''):
  return subprocess.CompletedProcess([], returncode, stdout, stderr)


class FakeSignals:
  """Stands in for signal.signal and signal.getsignal: keeps the handlers."""

  def __init__(self, previous=signal.SIG_DFL):
    self.handlers = {}
    self.previous = previous

  def __call__(self, number, handler):
    old = self.getsignal(number)
    self.handlers[number] = handler
    return old

  def getsignal(self, number):
    return self.handlers.get(number, self.previous)

  def send(self, number):
    self.handlers[number](number, None)


class DecideTest(absltest.TestCase):

  def testEarlyWarningIsRequeued(self):
    decision = stc.decide(True, None, _job(_RUNNING), 0, None)
    self.assertEqual(decision, stc.Decision(True, 'the early warning'))

  def testTimeLimitIsRequeued(self):
    decision = stc.decide(False, 100.0, _job(_TIME_LIMIT), 0, None)
    self.assertTrue(decision.requeue)
    self.assertIn('Reason=TimeLimit', decision.why)

  def testScancelIsNotRequeued(self):
    decision = stc.decide(False, 100.0, _job(_CANCELLED), 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('scancel', decision.why)

  def testSigtermWhileTheJobRunsOnIsAFailedTaskNotTheTimeLimit(self):
    # srun --kill-on-bad-exit=1 (or a 26.05 MPI abort) stops the step.
    decision = stc.decide(False, 100.0, _job(_RUNNING), 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('(JobState=RUNNING Reason=None)', decision.why)
    self.assertIn('a task of the step failed', decision.why)

  def testJobThatSlurmRequeuedIsNotRequeuedAgain(self):
    decision = stc.decide(False, 100.0, _job(_PREEMPTED), 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('Slurm has requeued the job itself', decision.why)

  def testWarningAfterSlurmRequeuedIsNotRequeuedAgain(self):
    self.assertFalse(stc.decide(True, None, _job(_PREEMPTED), 0, None).requeue)

  def testRestartsAreCountedFromThisRunsStart(self):
    resumed = _TIME_LIMIT.replace('Restarts=0', 'Restarts=1')
    self.assertTrue(stc.decide(False, 100.0, _job(resumed), 1, None).requeue)

  def testJobThatMayNotBeRequeuedIsNotRequeued(self):
    job = _job(_RUNNING.replace('Requeue=1', 'Requeue=0'))
    decision = stc.decide(True, None, job, 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('Requeue=0', decision.why)

  def testJobWithoutBatchScriptIsNotRequeued(self):
    job = _job(_TIME_LIMIT.replace('BatchFlag=1', 'BatchFlag=0'))
    decision = stc.decide(False, 100.0, job, 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('not a batch job', decision.why)

  def testWithoutScontrolTheWarningIsRequeued(self):
    self.assertTrue(stc.decide(True, None, None, 0, None).requeue)

  def testWithoutScontrolSigtermAfterTheEndTimeIsRequeued(self):
    decision = stc.decide(False, 1000.5, None, 0, 1000)
    self.assertTrue(decision.requeue)
    self.assertIn('SLURM_JOB_END_TIME=1000', decision.why)

  def testWithoutScontrolSigtermBeforeTheEndTimeIsNotRequeued(self):
    decision = stc.decide(False, 999.0, None, 0, 1000)
    self.assertFalse(decision.requeue)
    self.assertIn('a failed task of the step', decision.why)

  def testWithoutScontrolOrEndTimeSigtermIsNotRequeued(self):
    decision = stc.decide(False, 999.0, None, 0, None)
    self.assertFalse(decision.requeue)
    self.assertIn('cannot be told', decision.why)


class ParseJobFieldsTest(absltest.TestCase):

  def testFieldsAreKeyValueItems(self):
    fields = stc.parse_job_fields(_TIME_LIMIT + '\n')
    self.assertEqual(fields['JobState'], 'COMPLETING')
    self.assertEqual(fields['Reason'], 'TimeLimit')
    self.assertEqual(fields['Restarts'], '0')

  def testOutputWithoutJobStateIsRefused(self):
    with self.assertRaisesRegex(ValueError, 'no JobState'):
      stc.parse_job_fields('slurm_load_jobs error: Invalid job id specified')


class SlurmTerminationConfigTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.signals = FakeSignals()
    self.enter_context(mock.patch.object(signal, 'signal', self.signals))
    self.enter_context(mock.patch.object(signal, 'getsignal',
                                         self.signals.getsignal))
    # The command each call of `util.run_command` runs, as a
    # tuple; it returns how that ends (`slurm_test_util.fake_run_command`):
    # by default, scontrol is not on PATH.
    self.run_mock = mock.Mock(return_value=None)

    def run_command(command, missing_ok=False):
      result = self.run_mock(tuple(command))
      return slurm_test_util.fake_run_command(result)(command, missing_ok)

    self.enter_context(mock.patch.object(
        stc.util, 'run_command', side_effect=run_command))
    self.enter_context(mock.patch.object(os, 'write', autospec=True))

  def _config(self, environ=None, **kwargs):
    with mock.patch.dict(os.environ, environ or _TASK0, clear=True):
      return stc.SlurmTerminationConfig(**kwargs)

  def _exit_status(self, config):
    with self.assertRaises(SystemExit) as raised:
      config.exit_fn()
    return raised.exception.code

  def _sigterm_at(self, now, end_time):
    """Task 0's config after SIGTERM at `now`; the job ends at `end_time`."""
    config = self._config(dict(_TASK0, SLURM_JOB_END_TIME=str(end_time)))
    with mock.patch.object(stc.time, 'time', return_value=now):
      self.signals.send(signal.SIGTERM)
    return config

  def _commands(self):
    return [c.args[0] for c in self.run_mock.call_args_list]

  def testIsATerminationConfig(self):
    self.assertIsInstance(self._config(), failure_handling.TerminationConfig)

  def testEarlyWarningIsReportedByTheWatcher(self):
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    self.assertTrue(config.termination_watcher_fn())

  def testSigtermIsReportedByTheWatcher(self):
    config = self._config()
    self.signals.send(signal.SIGTERM)
    self.assertTrue(config.termination_watcher_fn())

  def testWarningSignalIsChosen(self):
    config = self._config(warning_signal=signal.SIGUSR2)
    self.assertEqual(config.warning_signal, signal.SIGUSR2)
    self.assertCountEqual(self.signals.handlers,
                          [signal.SIGUSR2, signal.SIGTERM])
    self.signals.send(signal.SIGUSR2)
    self.assertTrue(config.termination_watcher_fn())

  @parameterized.named_parameters(('_sigterm', signal.SIGTERM),
                                  ('_sigkill', signal.SIGKILL),
                                  ('_name', 'USR1'), ('_unknown', 4242))
  def testSignalThatCannotWarnIsRefusedInstallingNothing(self, number):
    with self.assertRaisesRegex(ValueError, 'warning_signal=%r' % (number,)):
      self._config(warning_signal=number)
    self.assertEmpty(self.signals.handlers)

  @parameterized.named_parameters(('_negative', -1), ('_text', '30'),
                                  ('_bool', True))
  def testGracePeriodThatIsNotSecondsIsRefusedInstallingNothing(
      self, grace_period):
    with self.assertRaisesRegex(ValueError,
                                'grace_period=%r' % (grace_period,)):
      self._config(grace_period=grace_period)
    self.assertEmpty(self.signals.handlers)

  def testReadingTheWatcherInstallsTheHandlersAgain(self):
    config = self._config()
    # As a MultiWorkerMirroredStrategy's own SIGTERM handler does.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    watcher = config.termination_watcher_fn
    self.signals.send(signal.SIGTERM)
    self.assertTrue(watcher())

  def testHandlersCompletedConfigKeepsTheRequeuingExit(self):
    config = self._config(grace_period=30)
    # pylint: disable-next=protected-access
    completed = failure_handling._complete_config_for_environment(
        failure_handling_util.PlatformDevice.INTERNAL_CPU, config)
    self.assertEqual(completed.exit_fn, config.exit_fn)
    self.assertEqual(completed.grace_period, 30)
    self.signals.send(signal.SIGUSR1)
    self.assertTrue(completed.termination_watcher_fn())
    self.assertEqual(self._exit_status(completed), stc.EXIT_REQUEUE)

  def testSignalIsAnnouncedOnStderr(self):
    self._config()
    self.signals.send(signal.SIGUSR1)
    os.write.assert_called_once()
    fd, message = os.write.call_args.args
    self.assertEqual(fd, 2)
    self.assertIn(b'SIGUSR1 received', message)

  def testProgramsHandlerIsCalledAfterwards(self):
    previous = mock.Mock()
    self.signals.previous = previous
    self._config()
    self.signals.send(signal.SIGTERM)
    previous.assert_called_once_with(signal.SIGTERM, None)

  def testHandlerInstalledAfterTheConfigIsCalledOnceTheWatcherIsRead(self):
    config = self._config()
    handler = mock.Mock()
    signal.signal(signal.SIGTERM, handler)  # The program's, after the config.
    watcher = config.termination_watcher_fn  # As the handler reads it.
    self.signals.send(signal.SIGTERM)
    handler.assert_called_once_with(signal.SIGTERM, None)
    self.assertTrue(watcher())

  def testInstallingAgainDoesNotChainToItself(self):
    previous = mock.Mock()
    self.signals.previous = previous
    config = self._config()
    config.termination_watcher_fn()
    config.termination_watcher_fn()
    self.signals.send(signal.SIGTERM)
    previous.assert_called_once_with(signal.SIGTERM, None)

  def testDefaultActionIsNotCalled(self):
    self.signals.previous = signal.SIG_DFL
    config = self._config()
    self.signals.send(signal.SIGTERM)  # SIG_DFL is not callable: no death.
    self.assertTrue(config.termination_watcher_fn())

  def testBadRestartCountIsRefusedByName(self):
    with self.assertRaisesRegex(ValueError, "SLURM_RESTART_COUNT='x'"):
      self._config(dict(_TASK0, SLURM_RESTART_COUNT='x'))
    self.assertEmpty(self.signals.handlers)

  def testNonAsciiDigitInTheEndTimeIsRefusedByName(self):
    with self.assertRaisesRegex(ValueError,
                                "^SLURM_JOB_END_TIME='1\u00b2': expected an "
                                'integer in 0..'):
      self._config(dict(_TASK0, SLURM_JOB_END_TIME='1\u00b2'))
    self.assertEmpty(self.signals.handlers)

  def testRestartCountIsLoggedAtResume(self):
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self._config(dict(_TASK0, SLURM_RESTART_COUNT='2'))
    self.assertIn('SLURM_RESTART_COUNT=2', logs.output[0])

  def testTaskZeroRequeuesAfterTheWarning(self):
    self.run_mock.side_effect = [_done(_RUNNING), _done()]
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(self._commands(),
                     [('scontrol', '-o', 'show', 'job', '7'),
                      ('scontrol', 'requeue', '7')])
    self.assertIn('requeued job 7', logs.output[0])

  def testScontrolRunsWithSigtermIgnoredThenTheHandlerIsBack(self):
    seen = []

    def run(command):
      seen.append(self.signals.handlers[signal.SIGTERM])
      return _done(_RUNNING if 'show' in command else '')

    self.run_mock.side_effect = run
    config = self._config()
    handler = self.signals.handlers[signal.SIGTERM]
    self.signals.send(signal.SIGUSR1)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(seen, [signal.SIG_IGN, signal.SIG_IGN])
    self.assertEqual(self.signals.handlers[signal.SIGTERM], handler)

  def testTaskZeroRequeuesAtTheTimeLimit(self):
    self.run_mock.side_effect = [_done(_TIME_LIMIT), _done()]
    config = self._config()
    self.signals.send(signal.SIGTERM)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(self._commands()[1], ('scontrol', 'requeue', '7'))

  def testScancelIsNotRequeued(self):
    self.run_mock.side_effect = [_done(_CANCELLED)]
    config = self._config()
    self.signals.send(signal.SIGTERM)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(self._commands(), [('scontrol', '-o', 'show', 'job', '7')])

  def testFailedPeerTaskIsNotRequeued(self):
    # The job runs on, its end time an hour away: no requeue, exit 42.
    self.run_mock.side_effect = [_done(_RUNNING)]
    config = self._sigterm_at(1000.0, 4600)
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(self._commands(), [('scontrol', '-o', 'show', 'job', '7')])
    self.assertIn('job 7 is not requeued: SIGTERM while the job runs on',
                  logs.output[0])

  def testWithoutScontrolFailedPeerTaskIsNotRequeued(self):
    config = self._sigterm_at(1000.0, 4600)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)

  def testOtherTasksRunNoScontrol(self):
    config = self._config({'SLURM_JOB_ID': '7', 'SLURM_PROCID': '1'})
    self.signals.send(signal.SIGUSR1)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.run_mock.assert_not_called()

  def testWithoutScontrolTheExitStatusAsksForTheRequeue(self):
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)
    self.assertIn('scontrol is not on PATH', logs.output[0])

  def testFailedRequeueAsksTheBatchScript(self):
    self.run_mock.side_effect = [
        _done(_RUNNING), _done(returncode=1, stderr='Access/permission denied')]
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)

  def testHungScontrolAsksTheBatchScript(self):
    self.run_mock.side_effect = RuntimeError(
        '`scontrol -o show job 7` did not finish within 10 s')
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)

  def testWithoutScontrolSigtermAfterTheEndTimeAsksForTheRequeue(self):
    config = self._sigterm_at(1001.0, 1000)
    self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)

  def testUnderMpirunTheMpiRankZeroRequeuesNotSlurmProcidZero(self):
    # mpirun's ranks on the batch script's node see its SLURM_PROCID=0.
    mpirun = {'SLURM_JOB_ID': '7', 'SLURM_PROCID': '0',
              'OMPI_MCA_orte_hnp_uri': '1.0;tcp://n1:1'}
    for rank, commands in (('0', 2), ('3', 0)):
      with self.subTest(rank=rank):
        self.run_mock.reset_mock()
        self.run_mock.side_effect = [_done(_RUNNING), _done()]
        config = self._config(dict(mpirun, OMPI_COMM_WORLD_RANK=rank))
        self.signals.send(signal.SIGUSR1)
        self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
        self.assertLen(self._commands(), commands)

  def testUnderHydraThePmiRankZeroRequeues(self):
    hydra = {'SLURM_JOB_ID': '7', 'SLURM_PROCID': '0', 'PMI_RANK': '2',
             'MPI_LOCALRANKID': '0'}
    config = self._config(hydra)
    self.signals.send(signal.SIGUSR1)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.run_mock.assert_not_called()

  @parameterized.named_parameters(('_two_jobs', '4242,4243'),
                                  ('_option', '--help'), ('_sign', '-7'))
  def testJobIdThatIsNotANumberIsRefusedAtCreation(self, job_id):
    with self.assertRaisesRegex(ValueError, 'SLURM_JOB_ID=%r' % job_id):
      self._config(dict(_TASK0, SLURM_JOB_ID=job_id))
    self.assertEqual(self.signals.handlers, {})

  def testExitCalledAgainRequeuesNoMore(self):
    self.run_mock.side_effect = [_done(_RUNNING), _done()]
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    with self.assertLogs('tensorflow', 'WARNING'):
      statuses = [self._exit_status(config) for _ in range(3)]
    self.assertEqual(statuses, [stc.EXIT_SAVED] * 3)
    self.assertEqual(self._commands().count(('scontrol', 'requeue', '7')), 1)

  @parameterized.named_parameters(
      ('_restarts_not_a_number', _RUNNING.replace('Restarts=0',
                                                  'Restarts=N/A')),
      ('_no_job_state', 'slurm_load_jobs error: Invalid job id specified'))
  def testUnreadableJobAfterTheWarningAsksTheBatchScript(self, show_job):
    self.run_mock.side_effect = [_done(show_job)]
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)
    self.assertLen(logs.output, 1)
    self.assertLen(self._commands(), 1)

  def testFailureToDecideAsksTheBatchScriptInOneLine(self):
    self.enter_context(mock.patch.object(stc, 'decide',
                                         side_effect=KeyError('JobState')))
    config = self._config()
    self.signals.send(signal.SIGUSR1)
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertEqual(self._exit_status(config), stc.EXIT_REQUEUE)
    self.assertLen(logs.output, 1)
    self.assertIn("deciding failed (KeyError: 'JobState')", logs.output[0])

  def testSigtermThatTensorflowsHandlerTookIsSeenByTheWatcher(self):
    took = self.enter_context(mock.patch.object(
        stc, '_tf_took_sigterm', return_value='/job:worker/task:1'))
    self.run_mock.side_effect = [_done(_TIME_LIMIT), _done()]
    config = self._config()
    watcher = config.termination_watcher_fn
    with self.assertLogs('tensorflow', 'WARNING') as logs:
      self.assertTrue(watcher())
    self.assertIn('took a SIGTERM (of /job:worker/task:1)', logs.output[0])
    took.assert_called_once()
    # The config's own SIGTERM, then: at the time limit, task 0 requeues.
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.assertEqual(self._commands()[1], ('scontrol', 'requeue', '7'))

  def testTensorflowsHandlerIsAskedOnlyInTheWatchersFirstPolls(self):
    took = self.enter_context(mock.patch.object(
        stc, '_tf_took_sigterm', return_value=None))
    watcher = self._config().termination_watcher_fn
    # pylint: disable-next=protected-access
    first_polls = stc._TF_SIGTERM_POLLS
    self.assertFalse(any(watcher() for _ in range(first_polls + 2)))
    self.assertEqual(took.call_count, first_polls)

  def testOutsideSlurmThereIsNothingToRequeue(self):
    config = self._config({'HOME': '/root'})
    self.signals.send(signal.SIGTERM)
    self.assertEqual(self._exit_status(config), stc.EXIT_SAVED)
    self.run_mock.assert_not_called()


class MainThreadTest(absltest.TestCase):
  """With the real signal module: the kernel's signals, the main thread."""

  def setUp(self):
    super().setUp()
    for number in (signal.SIGUSR1, signal.SIGTERM):
      self.addCleanup(signal.signal, number, signal.getsignal(number))
      signal.signal(number, signal.SIG_DFL)
    self.enter_context(mock.patch.dict(os.environ, _TASK0, clear=True))
    self.enter_context(mock.patch.object(os, 'write', autospec=True))

  def testEarlyWarningSentToTheProcessIsReportedByTheWatcher(self):
    config = stc.SlurmTerminationConfig()
    signal.raise_signal(signal.SIGUSR1)  # Its Python handler has run after.
    self.assertTrue(config.termination_watcher_fn())

  def testOutsideTheMainThreadNothingIsInstalled(self):
    errors = []

    def create():
      try:
        stc.SlurmTerminationConfig()
      except ValueError as e:
        errors.append(e)

    thread = threading.Thread(target=create)
    thread.start()
    thread.join()
    self.assertLen(errors, 1)
    self.assertIn('main thread', str(errors[0]))
    self.assertIs(signal.getsignal(signal.SIGUSR1), signal.SIG_DFL)


if __name__ == '__main__':
  absltest.main()
