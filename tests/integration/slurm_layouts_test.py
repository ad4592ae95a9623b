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
"""SlurmClusterResolver in every task of real srun steps (tools/slurm_lab).

Each test runs real steps (srun, a heterogeneous srun, salloc and its steps,
an sbatch script and the steps inside it) on the lab's nodes n[9-11] (string
order differs from node order) and the mixed partition (c[09-11], gpu1-ib,
gpu2-ib, rack1-node01). Every task creates `SlurmClusterResolver()` with default
arguments (report_task.py) and reports what it resolved; the whole step is
then checked (step_checks.py): one ClusterSpec in every task (also with
scontrol's hostlist expansion), task_id == SLURM_PROCID, each task's address
on the node Slurm ran it on (== SLURMD_NODENAME == hostname), distinct
addresses, GPUs within Slurm's binding, as many in every task, and shared
on a node only when it has fewer GPUs than tasks (TF_FORCE_GPU_ALLOW_GROWTH
set exactly then). Every task
also binds its own resolved host:port and connects to every other task's
address (the lab's names resolve only inside the lab, per node).

The layouts are those of Slurm 22.05 and later; Slurm 20.11 spreads tasks
evenly over the step's nodes and numbers GPUs by device file, and where
that changes a layout the test expects 20.11's (_on_2011).

In a heterogeneous step with a cyclic component, tasks are numbered node by
node (a task cannot see the other components' distributions); with
--gpu-bind=closest, the node's GPUs are split among its tasks.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration -v
"""

import os
import sys
import textwrap

from absl.testing import parameterized
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_TASK = os.path.join(HERE, 'report_task.py')
CONNECT_SECONDS = 60
# The arbitrary distribution's host of each rank, one a line.
HOSTFILE = ['n10', 'n9', 'n10', 'n11', 'n9']


def _case(name, srun_args, expect_nodes, expect_gpus=None, hostfile=None,
          on_2011=None):
  """One layout; `on_2011`: what Slurm 20.11 does otherwise (_ON_2011)."""
  return dict(testcase_name=name, srun_args=srun_args,
              expect_nodes=expect_nodes, expect_gpus=expect_gpus,
              hostfile=hostfile, on_2011=on_2011)


def _on_2011(expect_nodes, expect_gpus=None):
  """Slurm 20.11's layout: it spreads a step's tasks evenly over its nodes
  (-N3 -n7: 3,2,2 where 22.05 and later give 4,2,1), and numbers a node's
  GPUs by their device files (gpu*-ib: nvidia4-5 -> 4,5)."""
  return dict(expect_nodes=expect_nodes, expect_gpus=expect_gpus)


_N9_N10 = ['-w', 'n9,n10', '-N2']
_N9_N11 = ['-w', 'n[9-11]', '-N3']

# Rank -> node as the srun options determine it (4 CPUs per node).
LAYOUTS = (
    _case('block_N3_n7', _N9_N11 + ['-n7'],
          ['n9'] * 4 + ['n10'] * 2 + ['n11'],
          on_2011=_on_2011(['n9'] * 3 + ['n10'] * 2 + ['n11'] * 2)),
    _case('cyclic_N3_n7', _N9_N11 + ['-n7', '-m', 'cyclic'],
          ['n9', 'n10', 'n11', 'n9', 'n10', 'n9', 'n9'],
          on_2011=_on_2011(['n9', 'n10', 'n11', 'n9', 'n10', 'n11', 'n9'])),
    _case('plane2_N2_n6', _N9_N10 + ['-n6', '-m', 'plane=2'],
          ['n9', 'n9', 'n10', 'n10', 'n9', 'n9']),
    _case('arbitrary_hostfile_n5', ['-n5', '-m', 'arbitrary'], HOSTFILE,
          hostfile=HOSTFILE),
    _case('ntasks_per_node2_N3', _N9_N11 + ['--ntasks-per-node=2'],
          ['n9', 'n9', 'n10', 'n10', 'n11', 'n11']),
    # Slurm gives each node's tasks the same GPUs: the resolver splits them,
    # as many to every task as the busiest node allows.
    _case('gres_gpu2_N2_n3', _N9_N10 + ['-n3', '--gres=gpu:2'],
          ['n9', 'n9', 'n10'], expect_gpus=['0', '1', '0']),
    # Fewer GPUs than tasks on a node: one GPU each, shared round-robin.
    _case('gres_gpu1_N2_n3', _N9_N10 + ['-n3', '--gres=gpu:1'],
          ['n9', 'n9', 'n10'], expect_gpus=['0', '0', '0']),
    _case('cyclic_gres_gpu2_N2_n4', _N9_N10 +
          ['-n4', '-m', 'cyclic', '--gres=gpu:2'],
          ['n9', 'n10', 'n9', 'n9'], expect_gpus=['0', '0', '1', '0'],
          on_2011=_on_2011(['n9', 'n10', 'n9', 'n10'], ['0', '0', '1', '1'])),
    _case('gpus_per_node3_N2_n6', _N9_N10 + ['-n6', '--gpus-per-node=3'],
          ['n9'] * 4 + ['n10'] * 2,
          expect_gpus=['0', '1', '2', '0', '0', '1'],
          on_2011=_on_2011(['n9'] * 3 + ['n10'] * 3,
                           ['0', '1', '2', '0', '1', '2'])),
    _case('gpus_per_node4_split_N2', _N9_N10 +
          ['--ntasks-per-node=2', '--gpus-per-node=4'],
          ['n9', 'n9', 'n10', 'n10'],
          expect_gpus=['0,1', '2,3', '0,1', '2,3']),
    # Slurm binds GPUs to tasks: each task keeps its own.
    _case('gpus_per_task1_N2', _N9_N10 +
          ['--ntasks-per-node=2', '--gpus-per-task=1'],
          ['n9', 'n9', 'n10', 'n10'], expect_gpus=['0', '1', '0', '1']),
    _case('gpus_per_node4_bind_single1_N2', _N9_N10 +
          ['--ntasks-per-node=2', '--gpus-per-node=4', '--gpu-bind=single:1'],
          ['n9', 'n9', 'n10', 'n10'], expect_gpus=['0', '1', '0', '1']),
    # Heterogeneous steps: ranks run over the components in order.
    _case('het_n1_n2', ['-w', 'n9', '-n1', ':', '-w', 'n10', '-n2'],
          ['n9', 'n10', 'n10']),
    _case('het_across_partitions',
          ['-w', 'n9', '-N1', '-n1', ':', '-p', 'mixed', '-w',
           'rack1-node01,c10', '-N2', '-n2'],
          ['n9', 'c10', 'rack1-node01']),
    _case('het_gpus_in_one_component',
          ['-w', 'n9', '-N1', '-n1', ':', '-w', 'n10,n11', '-N2', '-n3',
           '--gpus-per-task=1'],
          ['n9', 'n10', 'n10', 'n11'], expect_gpus=['', '0', '1', '0']),
    _case('het_gpu_component_with_more_tasks_than_gpus',
          ['-w', 'n9', '-N1', '-n1', ':', '-w', 'n10', '-N1', '-n3',
           '--gres=gpu:2'],
          ['n9', 'n10', 'n10', 'n10'], expect_gpus=['', '0', '1', '0']),
    # The mixed partition: zero padding, text after the number, two numbers.
    _case('mixed_partition_N6_n7', ['-p', 'mixed', '-N6', '-n7'],
          ['c09', 'c09', 'c10', 'c11', 'gpu1-ib', 'gpu2-ib', 'rack1-node01']),
    _case('mixed_gpu_ib_gpus_per_task1',
          ['-p', 'mixed', '-w', 'gpu1-ib,gpu2-ib', '--ntasks-per-node=2',
           '--gpus-per-task=1'],
          ['gpu1-ib', 'gpu1-ib', 'gpu2-ib', 'gpu2-ib'],
          expect_gpus=['0', '1', '0', '1'],
          on_2011=_on_2011(['gpu1-ib', 'gpu1-ib', 'gpu2-ib', 'gpu2-ib'],
                           ['4', '5', '4', '5'])),
)


class SlurmLayoutsTest(parameterized.TestCase):
  """Every task of real Slurm steps resolves the same, right cluster."""

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def assert_step(self, folder, num_tasks, result=None, expect_nodes=None,
                  expect_gpus=None, connected=True, task_ids=None):
    reports = step_checks.read_reports(folder)
    problems = step_checks.step_problems(
        reports, num_tasks, self.lab.root, self.lab.addresses,
        expect_nodes=expect_nodes, expect_gpus=expect_gpus,
        connected=connected, task_ids=task_ids)
    if result is not None and result.returncode != 0:
      problems.insert(0, 'srun exited with status %s%s' % (
          result.returncode, ' (timed out)' if result.timed_out else ''))
    if problems:
      self.fail('%d problems:\n- %s\n\n%s\n\n%s' %
                (len(problems), '\n- '.join(problems),
                 step_checks.step_table(reports),
                 result.describe() if result else ''))
    print(step_checks.step_table(reports))
    return reports

  def check_srun_step(self, label, srun_args, expect_nodes, expect_gpus=None,
                      hostfile=None, connect=True, task_ids=None):
    """Runs report_task.py in every task of one srun step; checks the step."""
    env = {}
    if hostfile:
      path = os.path.join(self.tmp, 'hostfile')
      with open(path, 'w') as f:
        f.write('\n'.join(hostfile) + '\n')
      env['SLURM_HOSTFILE'] = path
    out = os.path.join(self.tmp, 'reports')
    args = ['--out', out]
    if connect:
      args += ['--connect', str(CONNECT_SECONDS)]
    result = self.lab.srun(label, srun_args, REPORT_TASK, args, timeout=120,
                           env=env, cwd=self.tmp)
    return self.assert_step(out, len(expect_nodes), result, expect_nodes,
                            expect_gpus, connected=connect, task_ids=task_ids)

  @parameterized.named_parameters(*LAYOUTS)
  def test_every_task_resolves_its_own_address_in_srun_step(
      self, srun_args, expect_nodes, expect_gpus, hostfile, on_2011):
    if on_2011 and self.lab.series == '20.11':
      expect_nodes, expect_gpus = (on_2011['expect_nodes'],
                                   on_2011['expect_gpus'])
    self.check_srun_step(self._testMethodName[-40:], srun_args, expect_nodes,
                         expect_gpus, hostfile)

  def test_het_step_with_cyclic_component_numbers_tasks_node_by_node(self):
    # Component 1 packs 3,1 tasks on n10, n11 (Slurm 20.11: 2,2) and deals
    # ranks 1-4 cyclically. A task cannot see each component's
    # distribution; tasks are numbered node by node in node list order:
    # n9's, then n10's, then n11's.
    nodes = ['n9', 'n10', 'n11', 'n10', 'n10']
    task_ids = {0: 0, 1: 1, 3: 2, 4: 3, 2: 4}
    if self.lab.series == '20.11':
      nodes = ['n9', 'n10', 'n11', 'n10', 'n11']
      task_ids = {0: 0, 1: 1, 3: 2, 2: 3, 4: 4}
    self.check_srun_step(
        'het-cyclic', ['-w', 'n9', '-n1', ':', '-w', 'n10,n11', '-N2', '-n4',
                       '-m', 'cyclic'], nodes, task_ids=task_ids)

  def test_gpu_bind_closest_gives_node_tasks_disjoint_gpus(self):
    # Slurm gives tasks 0,1 on n9 (and 2,3 on n10) CUDA_VISIBLE_DEVICES=0,1,2,3.
    self.check_srun_step(
        'gpu-bind-closest', _N9_N10 + ['--ntasks-per-node=2',
                                       '--gpus-per-node=4',
                                       '--gpu-bind=closest'],
        ['n9', 'n9', 'n10', 'n10'], connect=False)

  def test_salloc_steps_resolve_their_own_nodes_of_the_allocation(self):
    """salloc -N3 -n5: a step over the allocation, one on its last 2 nodes."""
    out = os.path.join(self.tmp, 'reports')
    name = self.lab.job_name('salloc')
    step = '%s %s --out %s/{} --connect %d' % (self.lab.python, REPORT_TASK,
                                                out, CONNECT_SECONDS)
    result = self.lab.run(
        ['salloc', '--job-name', name, '--time=5', '-w', 'n[9-11]', '-N3',
         '-n5', 'sh', '-c',
         'srun --kill-on-bad-exit=1 %s && '
         'srun --kill-on-bad-exit=1 --relative=1 -N2 -n2 %s' %
         (step.format('full'), step.format('relative1'))],
        timeout=150, job_name=name, cwd=self.tmp)
    self.assert_step(os.path.join(out, 'full'), 5, result,
                     ['n9', 'n9', 'n10', 'n10', 'n11']
                     if self.lab.series == '20.11' else
                     ['n9', 'n9', 'n9', 'n10', 'n11'])
    # SLURM_NODEID counts the step's nodes: n10 is node 0 of this step.
    relative = self.assert_step(os.path.join(out, 'relative1'), 2, result,
                                ['n10', 'n11'])
    self.assertEqual([r['slurm']['SLURM_NODEID'] for _, r in
                      sorted(relative.items())], ['0', '1'])

  # Slurm 26.05 gives the batch script SLURM_STEP_ID=-5 (its special id).
  def test_sbatch_script_and_its_steps_resolve_the_job(self):
    """The batch script itself (no step) and three steps inside the job."""
    out = os.path.join(self.tmp, 'reports')
    py, task = self.lab.python, REPORT_TASK
    script = os.path.join(self.tmp, 'job.sh')
    with open(script, 'w') as f:
      f.write(textwrap.dedent("""\
          #!/bin/bash
          #SBATCH -w n9,n10 -N2 --ntasks-per-node=2 --gres=gpu:2 --time=5
          #SBATCH -o {tmp}/job.out
          set -eu
          # In the batch script, the resolver refuses: the job has 4 tasks.
          {py} {task} --out {out}/batch || true
          srun --kill-on-bad-exit=1 {py} {task} --out {out}/full --connect {s}
          srun --kill-on-bad-exit=1 -N1 -n1 {py} {task} --out {out}/N1-n1 \\
              --connect {s}
          srun --kill-on-bad-exit=1 -n3 {py} {task} --out {out}/n3 \\
              --connect {s}
          """).format(tmp=self.tmp, py=py, task=task, out=out,
                      s=CONNECT_SECONDS))
    submitted, job_id, fields = self.lab.sbatch('sbatch', script, timeout=240,
                                                cwd=self.tmp)
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    log = ''
    if os.path.exists(os.path.join(self.tmp, 'job.out')):
      with open(os.path.join(self.tmp, 'job.out')) as f:
        log = f.read()[-4000:]
    self.assertEqual(
        (fields.get('JobState'), fields.get('ExitCode')), ('COMPLETED', '0:0'),
        'job %s: %s\n--- job.out (end)\n%s' % (job_id, fields, log))

    # The batch script: job variables, no step; the resolver refuses there,
    # saying to start the program with srun, and changes no variable.
    batch = step_checks.read_reports(os.path.join(out, 'batch'))
    self.assertEqual(sorted(batch), [0], batch)
    batch = batch[0]
    self.assertEqual(batch['slurm'].get('ENVIRONMENT'), 'BATCH')
    self.assertNotIn('SLURM_STEP_NODELIST', batch['slurm'])
    self.assertIn('outside an srun step', batch.get('error', ''), batch)
    self.assertIn('start the program with srun', batch['error'])

    full = self.assert_step(os.path.join(out, 'full'), 4,
                            expect_nodes=['n9', 'n9', 'n10', 'n10'],
                            expect_gpus=['0', '1', '0', '1'])
    self.assertEqual(full[0]['cluster'],
                     {'worker': ['n9:8888', 'n9:8889', 'n10:8888',
                                 'n10:8889']})
    self.assert_step(os.path.join(out, 'N1-n1'), 1, expect_nodes=['n9'],
                     expect_gpus=['0,1'])
    # 2,1 tasks on 2 GPUs each: every task gets the busiest node's share.
    self.assert_step(os.path.join(out, 'n3'), 3,
                     expect_nodes=['n9', 'n9', 'n10'],
                     expect_gpus=['0', '1', '0'])
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
