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
"""ParameterServerStrategy trains across one real Slurm step.

One `srun -N3 -n5 -m cyclic` step runs ps_task.py with
`SlurmClusterResolver(jobs={'chief': 1, 'ps': 2, 'worker': 2})`. Slurm packs
3,1,1 tasks on n9, n10, n11 and deals the ranks cyclically; the resolver
numbers the tasks node by node, so the chief and both parameter servers are
n9's tasks (ports 8888-8890, ranks 0, 3, 4) and the workers n10's and n11's
(ranks 1, 2). Slurm 20.11 packs 2,2,1 tasks: the chief and the first ps on
n9, the second ps and the first worker on n10, the second worker on n11. The ps and worker tasks serve with
`tf.distribute.Server`; the chief drives training steps through a
ClusterCoordinator. When the chief is done, the test ends the servers with
`scancel --signal=TERM` (srun --wait would end them too, and
--kill-on-bad-exit ends the step if any task fails), and checks that nothing
is left running.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration -v
"""

import math
import os
import sys
import time

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
PS_TASK = os.path.join(HERE, 'ps_task.py')
STEPS = 10
CHIEF_TIMEOUT = 240


class ParameterServerTrainingTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def test_chief_trains_through_coordinator_and_servers_end_with_step(self):
    out = os.path.join(self.tmp, 'reports')
    name = self.lab.job_name('ps')
    running = self.lab.start(
        self.lab.srun_argv(
            # --wait: Slurm ends the servers 30 s after the chief at the
            # latest, should the test's scancel below not happen.
            ['--wait=30', '-w', 'n[9-11]', '-N3', '-n5', '-m', 'cyclic'],
            PS_TASK,
            ['--out', out, '--workers', '2', '--steps', str(STEPS),
             '--max-seconds', str(CHIEF_TIMEOUT + 60)],
            job_name=name),
        job_name=name, cwd=self.tmp)
    try:
      # Bounded wait for the chief's report (done, or an error).
      deadline = time.monotonic() + CHIEF_TIMEOUT
      while (not os.path.exists(os.path.join(out, '0.json')) and
             running.poll() is None and time.monotonic() < deadline):
        time.sleep(0.25)
      chief_reported = os.path.exists(os.path.join(out, '0.json'))
      # The chief is done: end the ps and worker servers.
      self.lab.scancel('--signal=TERM', '--name', name)
      result = running.wait(timeout=60)
    finally:
      if running.poll() is None:
        running.stop()
    reports = step_checks.read_reports(out)
    self.assertTrue(chief_reported, 'no report from the chief within %d s\n%s'
                    % (CHIEF_TIMEOUT, result.describe()))
    chief = reports[0]
    self.assertNotIn('error', chief, chief.get('error'))
    self.assertTrue(chief.get('done'), repr(chief))
    print('chief: losses %s, variables on %s' %
          (chief['losses'], chief['variable_devices']))

    # Every task: the same cluster, its role node by node, its address on
    # its node. -N3 -n5 packs 3,1,1 tasks on n9, n10, n11 (Slurm 20.11:
    # 2,2,1); cyclic deals ranks over them.
    nodes = ['n9', 'n10', 'n11', 'n9', 'n9']
    roles = ['chief:0', 'worker:0', 'worker:1', 'ps:0', 'ps:1']
    cluster = {'chief': ['n9:8888'], 'ps': ['n9:8889', 'n9:8890'],
               'worker': ['n10:8888', 'n11:8888']}
    if self.lab.series == '20.11':
      nodes = ['n9', 'n10', 'n11', 'n9', 'n10']
      roles = ['chief:0', 'ps:1', 'worker:1', 'ps:0', 'worker:0']
      cluster = {'chief': ['n9:8888'], 'ps': ['n9:8889', 'n10:8888'],
                 'worker': ['n10:8889', 'n11:8888']}
    self.assertEqual(sorted(reports), list(range(5)), result.describe())
    for procid, r in sorted(reports.items()):
      self.assertNotIn('error', r, r.get('error'))
      self.assertEqual(r['cluster'], cluster, repr(r))
      self.assertEqual('%s:%s' % (r['task_type'], r['task_id']), roles[procid])
      self.assertEqual((r['nodename'], r['hostname']),
                       (nodes[procid], nodes[procid]), repr(r))
      self.assertEqual(r['address'].split(':')[0], r['nodename'], repr(r))
      self.assertEqual(r['rpc_layer'], 'grpc')

    # The chief trained through the coordinator on 2 workers, variables on
    # both ps tasks.
    self.assertEqual((chief['num_workers'], chief['num_ps']), (2, 2))
    self.assertEqual(
        sorted(chief['variable_devices'].values()),
        ['/job:ps/replica:0/task:0/device:CPU:0',
         '/job:ps/replica:0/task:1/device:CPU:0'])
    self.assertLen(chief['losses'], STEPS)
    self.assertTrue(all(math.isfinite(v) for v in chief['losses']),
                    repr(chief))
    # Steps run asynchronously: the first scheduled step's loss may come
    # from weights later steps already trained, so the reference is the
    # largest loss, that of the initial weights.
    self.assertLess(min(chief['losses'][-2:]), max(chief['losses']) / 10,
                    repr(chief))

    # The servers ran until the chief was done, then ended with the step:
    # SIGTERM from scancel, exit status 0 everywhere, nothing left.
    ended = step_checks.read_reports(out, suffix='.term')
    self.assertEqual(sorted(ended), [1, 2, 3, 4], result.describe())
    self.assertFalse(result.timed_out, result.describe())
    self.assertEqual(result.returncode, 0, result.describe())
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
