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
"""A task of a 2-task step fails while task 0 runs a SlurmTerminationConfig.

  srun -n2 python peer_failure_task.py READY_FILE HOW

Task 0 creates the config, writes READY_FILE, waits (at most 60 s) for a
signal and then calls the config's `exit_fn`, as the
PreemptionCheckpointHandler does after its save (no training here: the
decision is what is looked at). Task 1 waits for READY_FILE (at most 120 s),
then fails as HOW says:
  exit       exits with status 1;
  pmi-abort  calls PMI1's abort over the `PMI_FD` of `srun --mpi=pmi2`, then
             waits (at most 60 s) for Slurm to end it.
Used by tests/integration/termination_test.py.
"""

import os
import sys
import time


def _wait_for(predicate, timeout):
  deadline = time.monotonic() + timeout
  while time.monotonic() < deadline:
    if predicate():
      return True
    time.sleep(0.1)
  return False


def _pmi1_abort():
  """PMI1's wire protocol, as MPICH's simple PMI client speaks it."""
  fd = int(os.environ['PMI_FD'])
  os.write(fd, b'cmd=init pmi_version=1 pmi_subversion=1\n')
  print('task 1: PMI init answered %r' % os.read(fd, 1024), flush=True)
  os.write(fd, b'cmd=abort\n')
  print('task 1: PMI abort sent', flush=True)


def main(ready_file, how):
  if os.environ['SLURM_PROCID'] == '0':
    # Task 0 only: task 1 fails without importing TensorFlow.
    # pylint: disable-next=import-outside-toplevel
    from tf_slurm import termination
    config = termination.SlurmTerminationConfig()
    with open(ready_file, 'w', encoding='utf-8') as f:
      f.write('ready\n')
    if not _wait_for(config.termination_watcher_fn, 60):
      print('task 0: no signal within 60 s', flush=True)
      return 3
    config.exit_fn()  # Exits.
  if not _wait_for(lambda: os.path.exists(ready_file), 120):
    print('task 1: task 0 not ready within 120 s', flush=True)
    return 3
  if how == 'exit':
    print('task 1: exiting with 1', flush=True)
    return 1
  _pmi1_abort()
  time.sleep(60)
  print('task 1: not ended within 60 s of the abort', flush=True)
  return 3


if __name__ == '__main__':
  sys.exit(main(*sys.argv[1:]))
