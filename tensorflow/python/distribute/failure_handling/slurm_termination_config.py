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
"""A `TerminationConfig` that watches Slurm's signals for the job's end."""

import signal

from tensorflow.python.distribute.failure_handling import failure_handling

# Signals that cannot be the early warning: SIGTERM is watched anyway, and
# SIGKILL and SIGSTOP cannot be caught.
_NOT_A_WARNING = (signal.SIGTERM, signal.SIGKILL, signal.SIGSTOP)


class SlurmTerminationConfig(failure_handling.TerminationConfig):
  """Has `PreemptionCheckpointHandler` save on Slurm's early warning too.

  `sbatch --signal=USR1@T` sends the job's tasks SIGUSR1 about T seconds
  before the time limit; at the limit, on `scancel` and on preemption Slurm
  sends SIGTERM, then SIGKILL `KillWait` (30 by default) seconds later. With
  this config the handler's watcher reports either signal, and every worker
  saves a checkpoint at the same step; the handler then exits as it does by
  default. Create the config in the main thread before the strategy, so that
  the warning does not end the process; the handler reads the watcher when
  it is created, after the strategy, which installs the handlers again over
  the one a `MultiWorkerMirroredStrategy` installs for SIGTERM.
  """

  def __init__(  # pylint: disable=super-init-not-called
      self, warning_signal=signal.SIGUSR1, grace_period=0):
    """Creates the config and installs its signal handlers.

    Args:
      warning_signal: the signal of `sbatch --signal=SIG@T` (default SIGUSR1).
      grace_period: seconds of training left after the signal before the
        save, as in `TerminationConfig`.

    Raises:
      ValueError: if an argument is not of that kind, or not in the main
        thread.
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
    self.exit_fn = None  # TensorFlow's default.
    self.save_fn = None
    self._received = set()  # The signals that arrived.
    self._install_handlers()

  @property
  def termination_watcher_fn(self):
    """Whether a signal arrived; reading it installs the handlers again."""
    self._install_handlers()
    return self._stop_received

  def _watched_signals(self):
    return (self.warning_signal, signal.SIGTERM)

  def _install_handlers(self):
    for number in self._watched_signals():
      signal.signal(number, self._on_signal)

  def _on_signal(self, signum, frame):
    del frame  # Unused.
    self._received.add(signum)

  def _stop_received(self):
    return bool(self._received)
