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
"""Tests for SlurmTerminationConfig, with real signals sent to this process."""

import signal
import threading

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.failure_handling import failure_handling
from tensorflow.python.distribute.failure_handling import failure_handling_util
from tensorflow.python.distribute.failure_handling import slurm_termination_config as stc

_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM)


class SlurmTerminationConfigTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    for number in _SIGNALS:
      self.addCleanup(signal.signal, number, signal.getsignal(number))
      signal.signal(number, signal.SIG_DFL)

  def _send(self, number):
    """Sends `number` to this process; its Python handler has run after."""
    signal.raise_signal(number)

  def testCompletedConfigKeepsTheWatcherGracePeriodAndTensorflowsExit(self):
    config = stc.SlurmTerminationConfig(grace_period=30)
    # pylint: disable-next=protected-access
    completed = failure_handling._complete_config_for_environment(
        failure_handling_util.PlatformDevice.INTERNAL_CPU, config)
    self.assertFalse(completed.termination_watcher_fn())
    self.assertEqual(completed.grace_period, 30)
    with self.assertRaises(SystemExit) as exited:
      completed.exit_fn()
    self.assertEqual(exited.exception.code, 42)

  def testEarlyWarningIsReportedByTheWatcher(self):
    config = stc.SlurmTerminationConfig()
    self._send(signal.SIGUSR1)
    self.assertTrue(config.termination_watcher_fn())

  def testSigtermIsReportedByTheWatcher(self):
    config = stc.SlurmTerminationConfig()
    self._send(signal.SIGTERM)
    self.assertTrue(config.termination_watcher_fn())

  def testWarningSignalIsChosen(self):
    config = stc.SlurmTerminationConfig(warning_signal=signal.SIGUSR2)
    self.assertEqual(config.warning_signal, signal.SIGUSR2)
    self.assertIs(signal.getsignal(signal.SIGUSR1), signal.SIG_DFL)
    self._send(signal.SIGUSR2)
    self.assertTrue(config.termination_watcher_fn())

  def testReadingTheWatcherInstallsTheHandlersAgain(self):
    config = stc.SlurmTerminationConfig()
    # As a MultiWorkerMirroredStrategy's own SIGTERM handler does.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    watcher = config.termination_watcher_fn
    self._send(signal.SIGTERM)
    self.assertTrue(watcher())

  @parameterized.named_parameters(('_sigterm', signal.SIGTERM),
                                  ('_sigkill', signal.SIGKILL),
                                  ('_name', 'USR1'), ('_unknown', 4242))
  def testSignalThatCannotWarnIsRefusedInstallingNothing(self, number):
    with self.assertRaisesRegex(ValueError, 'warning_signal=%r' % (number,)):
      stc.SlurmTerminationConfig(warning_signal=number)
    self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)

  @parameterized.named_parameters(('_negative', -1), ('_text', '30'))
  def testGracePeriodThatIsNotSecondsIsRefused(self, grace_period):
    with self.assertRaisesRegex(ValueError, 'grace_period=%r' %
                                (grace_period,)):
      stc.SlurmTerminationConfig(grace_period=grace_period)
    self.assertIs(signal.getsignal(signal.SIGUSR1), signal.SIG_DFL)

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
