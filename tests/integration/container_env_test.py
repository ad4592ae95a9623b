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
"""What a task in a container needs from its environment (tools/slurm_lab).

A container runtime between srun and Python decides which of the task's
variables reach the process: `apptainer exec --cleanenv` passes almost none,
pyxis does not overwrite those the image sets. No runtime is installed
here (none is in Debian's or PyPI's registries), so each task does what
such a runtime would: it starts the resolver's process with a new
environment made from its own (docs/slurm_guide.md, "Containers"):

* only the variables named SLURM_* and SLURMD_*, CUDA_VISIBLE_DEVICES, and
  PATH and PYTHONPATH (to find Python and this repository's resolver): the
  resolver resolves as in the whole environment (step_checks.py, also the
  GPUs and the addresses every task binds and connects to);
* none of SLURM_* and SLURMD_*: the resolver refuses, with the message the
  guide quotes.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration/container_env_test.py -v
"""

import os
import sys

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_TASK = os.path.join(HERE, 'report_task.py')
# Runs sys.argv[2:] with the environment of the task less what sys.argv[1]
# says: 'slurm-only' keeps the guide's list, 'no-slurm' drops SLURM_*/SLURMD_*.
_CLEAN_ENV = '''\
import os, sys
slurm = ('SLURM_', 'SLURMD_')
keep = ('CUDA_VISIBLE_DEVICES', 'PATH', 'PYTHONPATH')
if sys.argv[1] == 'slurm-only':
  env = {k: v for k, v in os.environ.items()
         if k.startswith(slurm) or k in keep}
else:
  env = {k: v for k, v in os.environ.items() if not k.startswith(slurm)}
os.execve(sys.executable, [sys.executable] + sys.argv[2:], env)
'''
_RESOLVE = ('from tensorflow.python.distribute.cluster_resolver import '
            'slurm_cluster_resolver as s; '
            'print(s.SlurmClusterResolver().cluster_spec())')


class ContainerEnvTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def _srun(self, label, srun_args, clean, argv):
    name = self.lab.job_name(label)
    return self.lab.run(
        ['srun', '--kill-on-bad-exit=1', '--time=5', '--job-name', name] +
        srun_args + [self.lab.python, '-c', _CLEAN_ENV, clean] + argv,
        timeout=120, job_name=name, cwd=self.tmp)

  def test_slurm_variables_and_cuda_visible_devices_are_enough(self):
    out = os.path.join(self.tmp, 'reports')
    result = self._srun(
        'slurm-only', ['-w', 'n9,n10', '-N2', '--ntasks-per-node=2',
                       '--gpus-per-task=1'], 'slurm-only',
        [REPORT_TASK, '--out', out, '--connect', '60'])
    reports = step_checks.read_reports(out)
    problems = step_checks.step_problems(
        reports, 4, self.lab.root, self.lab.addresses,
        expect_nodes=['n9', 'n9', 'n10', 'n10'],
        expect_gpus=['0', '1', '0', '1'])
    if result.returncode != 0:
      problems.insert(0, 'srun exited with status %s' % result.returncode)
    self.assertEqual(problems, [], '%s\n%s' % (
        step_checks.step_table(reports), result.describe()))

  def test_without_slurm_variables_the_resolver_says_so(self):
    result = self._srun('no-slurm', ['-w', 'n9', '-N1', '-n1'], 'no-slurm',
                        ['-c', _RESOLVE])
    self.assertNotEqual(result.returncode, 0, result.describe())
    self.assertIn('RuntimeError: SLURM_PROCID is not set: not running inside '
                  'a Slurm step? Start every task with srun.', result.stderr,
                  result.describe())


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
