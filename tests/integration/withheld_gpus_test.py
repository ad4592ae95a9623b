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
"""A step Slurm gave no GPUs, on nodes that have them (n9, n10), on the lab.

The lab has no device cgroups (as `ConstrainDevices=no`): every task could
open every GPU of its node, and a stand-in `nvidia-smi` on the tasks' PATH
lists four. What Slurm writes (22.05, 24.11 and 26.05 alike; 20.11 where
said):

- a step that asks for no GPUs, in a job that has none: no GPU variable at
  all, exactly as on a node without GPUs. The resolver then reads slurm.conf
  (SLURM_CONF): GresTypes=gpu says Slurm manages GPUs, so the task gets
  none, and nvidia-smi is never run. Where the slurm.conf the task reads
  lists no gpu, nvidia-smi's GPUs are dealt as before;
- a step with `--gres=none` in a job with GPUs on the node: Slurm unsets
  CUDA_VISIBLE_DEVICES and SLURM_STEP_GPUS and leaves SLURM_JOB_GPUS (the
  job's): the task gets none, with a warning. Slurm 20.11 gives such a step
  the job's GPUs all the same (CUDA_VISIBLE_DEVICES=0,1), which the task
  then uses.

Needs root; run with pytest (the lab is a session fixture in conftest.py).
"""

import os
import sys

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
GPUS_TASK = os.path.join(HERE, 'gpus_task.py')
# Lists four GPUs, as nvidia-smi does, and notes every call.
_NVIDIA_SMI = """#!/bin/sh
echo "$SLURM_PROCID $*" >> "%s"
for i in 0 1 2 3; do echo "GPU $i: Stand-in GPU (UUID: GPU-stand-in-$i)"; done
"""


class WithheldGpusTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)
    self.calls = os.path.join(self.tmp, 'nvidia-smi-calls')
    bin_dir = os.path.join(self.tmp, 'bin')
    os.mkdir(bin_dir)
    nvidia_smi = os.path.join(bin_dir, 'nvidia-smi')
    with open(nvidia_smi, 'w') as f:
      f.write(_NVIDIA_SMI % self.calls)
    os.chmod(nvidia_smi, 0o755)
    self.env = {'PATH': bin_dir + os.pathsep + self.lab.env['PATH']}

  def nvidia_smi_calls(self):
    if not os.path.exists(self.calls):
      return []
    with open(self.calls) as f:
      return f.read().splitlines()

  def out_dir(self, name):
    path = os.path.join(self.tmp, name)
    os.mkdir(path)
    return path

  def test_step_without_gpus_where_slurm_manages_them_gets_none(self):
    out = self.out_dir('cpu-step')
    result = self.lab.srun('cpu-step-on-gpu-nodes',
                           ['-w', 'n9,n10', '-N2', '--ntasks-per-node=1'],
                           GPUS_TASK, [out], timeout=120, env=self.env)
    self.assertEqual(result.returncode, 0, result.describe())
    reports = step_checks.read_reports(out)
    self.assertEqual(sorted(reports), [0, 1], result.describe())
    for r in reports.values():
      self.assertEqual(({}, '', 0),
                       (r['slurm_gpus'], r['cvd_after'], r['num_gpus']), r)
    self.assertEqual([], self.nvidia_smi_calls())

  def test_where_slurm_conf_lists_no_gpu_nvidia_smi_counts_them(self):
    conf = os.path.join(self.tmp, 'slurm.conf')
    with open(self.lab.conf) as f:
      lines = f.read().splitlines()
    with open(conf, 'w') as f:
      f.write(''.join(line + '\n' for line in lines
                      if not line.lower().startswith('grestypes')))
    out = self.out_dir('no-gres-types')
    # Only the tasks read this slurm.conf; srun and slurmd keep the lab's.
    # (Slurm sets SLURM_CONF in the tasks' environment: srun --export cannot.)
    name = self.lab.job_name('no-gres-types')
    result = self.lab.run(
        ['srun', '--kill-on-bad-exit=1', '--time=5', '--job-name', name, '-w',
         'n9,n10', '-N2', '--ntasks-per-node=1', 'env', 'SLURM_CONF=' + conf,
         self.lab.python, GPUS_TASK, out], 120, job_name=name, env=self.env)
    self.assertEqual(result.returncode, 0, result.describe())
    reports = step_checks.read_reports(out)
    self.assertEqual(sorted(reports), [0, 1], result.describe())
    for r in reports.values():
      self.assertEqual(({}, '0,1,2,3', 4),
                       (r['slurm_gpus'], r['cvd_after'], r['num_gpus']), r)
    self.assertCountEqual(['0 --list-gpus', '1 --list-gpus'],
                          self.nvidia_smi_calls())

  def test_step_given_none_of_the_jobs_gpus_gets_none(self):
    none = self.out_dir('gres-none')
    script = os.path.join(self.tmp, 'job.sh')
    with open(script, 'w') as f:
      f.write('#!/bin/sh\nexec srun --gres=none -n1 %s %s %s\n' %
              (self.lab.python, GPUS_TASK, none))
    log = os.path.join(self.tmp, 'job.out')
    submitted, job_id, fields = self.lab.sbatch(
        'gres-none-step', script, timeout=180, cwd=self.tmp,
        sbatch_args=['-w', 'n9', '-N1', '-n1', '--gres=gpu:2', '--time=5',
                     '--output', log], env=self.env)
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    with open(log) as f:
      text = f.read()
    self.assertEqual((fields.get('JobState'), fields.get('ExitCode')),
                     ('COMPLETED', '0:0'), 'job %s: %s\n%s' % (job_id, fields,
                                                              text[-4000:]))
    reports = step_checks.read_reports(none)
    self.assertEqual(sorted(reports), [0], text)
    got = (reports[0]['slurm_gpus'], reports[0]['cvd_after'],
           reports[0]['num_gpus'])
    warnings = text.count(
        "Slurm manages the GPUs (SLURM_JOB_GPUS) and gave this step "
        'none')
    if self.lab.series == '20.11':
      # Slurm 20.11 gives the step the job's GPUs in spite of --gres=none
      # (it sets CUDA_VISIBLE_DEVICES): the task uses them, and says nothing.
      self.assertEqual(({'CUDA_VISIBLE_DEVICES': '0,1',
                         'GPU_DEVICE_ORDINAL': '0,1',
                         'SLURM_JOB_GPUS': '0,1'}, '0,1', 2), got,
                       reports[0])
      self.assertEqual(0, warnings, text)
    else:
      self.assertEqual(({'SLURM_JOB_GPUS': '0,1'}, '', 0), got, reports[0])
      self.assertEqual(1, warnings, text)
    self.assertEqual([], self.nvidia_smi_calls())
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
