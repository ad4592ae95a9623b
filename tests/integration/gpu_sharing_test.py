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
"""GPUs Slurm makes tasks share, and GPUs it holds but does not bind (lab).

What Slurm writes (recorded on 20.11, 22.05, 24.11 and 26.05; the lab's
n9 has four GPUs, and no device cgroups):

- `--ntasks-per-gpu=2` and `--gpu-bind=single:2` bind one GPU to every two
  tasks of a node, in local index order (SLURMD_TRES_BIND=gpu:single:2 on
  20.11 and 22.05, gres/gpu:single:2 on 24.11 on). Each task keeps its
  GPU; those that share it get TF_FORCE_GPU_ALLOW_GROWTH=true, a task alone
  on its GPU does not.
- `--gpus-per-node=2 --gpu-bind=none`: 22.05 sets neither
  CUDA_VISIBLE_DEVICES nor SLURM_STEP_GPUS, only SLURMD_TRES_BIND=gpu:none
  and SLURM_GPUS_ON_NODE=2; 24.11 on sets both lists (0,1). Either way the
  node's two tasks get a GPU each. 20.11 has no `--gpu-bind=none` and binds
  no GPU to a task unless told to: there `--gpus-per-node=2` alone gives
  every task both, and the node's two tasks get a GPU each as well.

Needs root; run with pytest (the lab is a session fixture in conftest.py).
"""

import os
import sys

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
GPUS_TASK = os.path.join(HERE, 'gpus_task.py')


class GpuSharingTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def gpus_of_every_task(self, label, srun_args):
    """Runs gpus_task.py in a step; returns (CVD, GPUs, allow growth)s."""
    out = os.path.join(self.tmp, label)
    os.mkdir(out)
    result = self.lab.srun(label, ['-w', 'n9', '-N1'] + srun_args, GPUS_TASK,
                           [out], timeout=120)
    self.assertEqual(result.returncode, 0, result.describe())
    reports = step_checks.read_reports(out)
    return [(reports[rank]['cvd_after'], reports[rank]['num_gpus'],
             reports[rank]['allow_growth']) for rank in sorted(reports)]

  def test_ntasks_per_gpu_two_share_their_gpu_with_allow_growth(self):
    self.assertEqual([('0', 1, 'true')] * 2,
                     self.gpus_of_every_task('ntasks-per-gpu',
                                             ['-n2', '--ntasks-per-gpu=2']))

  def test_gpu_bind_single_two_shares_pairs_and_leaves_the_odd_task_alone(
      self):
    self.assertEqual(
        [('0', 1, 'true'), ('0', 1, 'true'), ('1', 1, None)],
        self.gpus_of_every_task('single-2', [
            '--ntasks-per-node=3', '--gpus-per-node=2', '--gpu-bind=single:2'
        ]))

  def test_gpus_a_step_holds_but_does_not_bind_are_dealt(self):
    # 20.11 has no --gpu-bind=none ("Invalid --gpu-bind argument"): it binds
    # no GPU to a task unless told to.
    bind = [] if self.lab.series == '20.11' else ['--gpu-bind=none']
    self.assertEqual(
        [('0', 1, None), ('1', 1, None)],
        self.gpus_of_every_task(
            'gpu-bind-none',
            ['--ntasks-per-node=2', '--gpus-per-node=2'] + bind))


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
