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
"""Steps of a real heterogeneous allocation (tools/slurm_lab).

Inside `salloc -w n9 -n1 : -w n10,n11 -N2 -n3`, every step carries the
allocation's SLURM_HET_SIZE=2 and both components' node lists, also the
steps that run one component: a plain `srun` (component 0),
`srun --het-group=1 -n1` and `srun --het-group=1 -m cyclic` (component 1).
Those are ordinary steps: every task resolves the step's own cluster. In
every step, also the heterogeneous `srun --het-group=0,1 -m cyclic`, tasks
are numbered node by node in node list order. Each step is checked whole by
step_checks.py: one ClusterSpec in every task, each task's own address on
its own node, and every task binds it and reaches every other task.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration/het_component_steps_test.py
"""

import os
import sys

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_TASK = os.path.join(HERE, 'report_task.py')
CONNECT_SECONDS = 60
# Each step of the allocation: (label, srun options, the node of each rank,
# TF task id of each rank or None for the rule of step_checks). Component 1 runs 2,1
# tasks on n10, n11.
STEPS = (
    ('component0', [], ['n9'], None),
    ('component1-n1', ['--het-group=1', '-n1'], ['n10'], None),
    # An ordinary cyclic step, node by node: n10's ranks 0 and 2, then n11's
    # rank 1.
    ('component1-cyclic', ['--het-group=1', '-m', 'cyclic'],
     ['n10', 'n11', 'n10'], {0: 0, 2: 1, 1: 2}),
    # Node by node: n9's rank 0, n10's ranks 1 and 3, then n11's rank 2.
    ('both-cyclic', ['--het-group=0,1', '-m', 'cyclic'],
     ['n9', 'n10', 'n11', 'n10'], {0: 0, 1: 1, 3: 2, 2: 3}),
)


class HetComponentStepsTest(absltest.TestCase):
  """Every step of a heterogeneous allocation resolves its own cluster."""

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def test_steps_of_one_component_are_ordinary_steps(self):
    out = os.path.join(self.tmp, 'reports')
    name = self.lab.job_name('het-components')
    steps = ' && '.join(
        'srun --kill-on-bad-exit=1 %s %s %s --out %s/%s --connect %d' %
        (' '.join(options), self.lab.python, REPORT_TASK, out, label,
         CONNECT_SECONDS) for label, options, _, _ in STEPS)
    component = ['--job-name', name, '--time=5']
    result = self.lab.run(
        ['salloc'] + component + ['-w', 'n9', '-n1', ':'] + component +
        ['-w', 'n10,n11', '-N2', '-n3', 'sh', '-c', steps],
        timeout=240, job_name=name, cwd=self.tmp)
    problems = []
    if result.returncode != 0:
      problems.append('salloc exited with status %s%s' % (
          result.returncode, ' (timed out)' if result.timed_out else ''))
    tables = []
    for label, _, expect_nodes, task_ids in STEPS:
      reports = step_checks.read_reports(os.path.join(out, label))
      problems += ['%s: %s' % (label, problem) for problem in
                   step_checks.step_problems(
                       reports, len(expect_nodes), self.lab.root,
                       self.lab.addresses, expect_nodes=expect_nodes,
                       task_ids=task_ids)]
      # Each step carries the allocation's two components.
      problems += ['%s: rank %s has SLURM_HET_SIZE=%r, expected the '
                   'allocation\'s 2' % (label, procid,
                                        r['slurm'].get('SLURM_HET_SIZE'))
                   for procid, r in sorted(reports.items())
                   if r['slurm'].get('SLURM_HET_SIZE') != '2']
      tables.append('%s:\n%s' % (label, step_checks.step_table(reports)))
    if problems:
      self.fail('%d problems:\n- %s\n\n%s\n\n%s' %
                (len(problems), '\n- '.join(problems), '\n\n'.join(tables),
                 result.describe()))
    print('\n\n'.join(tables))
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
