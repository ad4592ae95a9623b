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
"""MultiWorkerMirroredStrategy trains across a real Slurm step.

`srun -N3 --ntasks-per-node=2` runs examples/train_mwms.py on the lab's nodes
n9, n10, n11: six TensorFlow workers, two per node on ports 8888/8889, find
each other with `SlurmClusterResolver()` alone, train a small Keras model for
a few synchronous steps on CPU and must all finish with identical weights.
The same runs as a user would submit it: `sbatch examples/sbatch_cpu.sh`.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration -v
"""

import math
import os
import sys

from absl.testing import absltest
import pytest

import step_checks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRAIN_MWMS = os.path.join(ROOT, 'examples', 'train_mwms.py')
SBATCH_CPU = os.path.join(ROOT, 'examples', 'sbatch_cpu.sh')


class MultiWorkerMirroredTrainingTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def test_six_workers_on_three_nodes_train_to_identical_weights(self):
    out = os.path.join(self.tmp, 'results')
    result = self.lab.srun(
        'mwms', ['-w', 'n[9-11]', '-N3', '--ntasks-per-node=2'], TRAIN_MWMS,
        ['--out', out, '--epochs', '2', '--steps-per-epoch', '5'],
        timeout=240, cwd=self.tmp)
    self.assertEqual(result.returncode, 0, result.describe())
    results = step_checks.read_reports(out)
    self.assertEqual(sorted(results), list(range(6)), result.describe())
    table = '\n'.join(
        '%(procid)s %(node)s %(task)s %(address)s loss=%(loss)s '
        'sha256=%(weights_sha256).16s sum=%(weights_sum).6f' % r
        for _, r in sorted(results.items()))
    print(table)

    nodes = ['n9', 'n9', 'n10', 'n10', 'n11', 'n11']
    for procid, r in sorted(results.items()):
      self.assertEqual(r['node'], nodes[procid], table)
      self.assertEqual(r['hostname'], r['node'], table)
      self.assertEqual(r['task'], 'worker:%d' % procid, table)
      self.assertEqual(r['address'], '%s:%d' % (nodes[procid],
                                                8888 + procid % 2), table)
      # The strategy saw the whole cluster: 6 workers, one CPU replica each.
      self.assertEqual((r['workers'], r['replicas']), (6, 6), table)
      # n9..n11 have GPUs that Slurm manages (GresTypes=gpu): the step asked
      # for none, so the tasks hide them all.
      self.assertEqual(r['gpus'], '', table)
      self.assertLen(r['loss'], 2, table)
      self.assertTrue(all(math.isfinite(v) for v in r['loss']), table)
      self.assertLess(r['loss'][-1], r['loss'][0], table)
    # Synchronous training: every worker holds the same weights and saw the
    # same (all-reduced) loss.
    self.assertLen({r['weights_sha256'] for r in results.values()}, 1, table)
    self.assertLen({r['weights_sum'] for r in results.values()}, 1, table)
    self.assertLen({tuple(r['loss']) for r in results.values()}, 1, table)
    self.assertEqual(self.lab.wait_until_idle(), [])

  def test_sbatch_cpu_example_trains_on_its_whole_allocation(self):
    """examples/sbatch_cpu.sh as a user submits it (3 nodes x 2 tasks)."""
    out = os.path.join(self.tmp, 'results')
    log = os.path.join(self.tmp, 'job.out')
    submitted, job_id, fields = self.lab.sbatch(
        'sbatch-cpu', SBATCH_CPU, timeout=240, cwd=ROOT,
        sbatch_args=['-w', 'n[9-11]', '--output', log],
        script_args=['--out', out, '--epochs', '1', '--steps-per-epoch', '3'],
        env={'PYTHON': self.lab.python})
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    text = ''
    if os.path.exists(log):
      with open(log) as f:
        text = f.read()[-4000:]
    self.assertEqual(
        (fields.get('JobState'), fields.get('ExitCode')), ('COMPLETED', '0:0'),
        'job %s: %s\n--- job output (end)\n%s' % (job_id, fields, text))
    results = step_checks.read_reports(out)
    self.assertEqual(sorted(results), list(range(6)), text)
    self.assertEqual([r['task'] for _, r in sorted(results.items())],
                     ['worker:%d' % i for i in range(6)])
    self.assertEqual({r['node'] for r in results.values()},
                     {'n9', 'n10', 'n11'})
    self.assertTrue(all(r['workers'] == 6 for r in results.values()))
    self.assertLen({r['weights_sha256'] for r in results.values()}, 1)
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
