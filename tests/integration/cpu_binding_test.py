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
"""CPUs per task reach the step's tasks, and TensorFlow sizes its pools by them.

On the CPU-binding lab (conftest.py: TaskPlugin=task/affinity, nodes n9 and
n10 of 2 CPUs each, this machine's), every task runs on the CPUs Slurm gave
it (sched_getaffinity), and TensorFlow's inter-op pool (its `tf_Compute`
threads) has one thread per CPU the process may run on.

Inside `sbatch --cpus-per-task=2`, the examples' form
`srun --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"` gives each task its 2 CPUs
on every Slurm the lab runs. A step that asks for no CPUs per task gets them
only where srun reads SLURM_CPUS_PER_TASK: not on Slurm 22.05 (its release
notes), where a step given only what it asks for (`srun --exact`) binds each
task to one CPU and TensorFlow runs one inter-op thread. (With one task per
node, a plain srun step gets the whole node and hides this; several tasks
of 2 CPUs on one node need more CPUs than this machine has.)

Needs root; run with pytest (the labs are fixtures in conftest.py):
  SLURM_LAB_SLURM=22.05 .venv/bin/python -m pytest \
      tests/integration/cpu_binding_test.py -v
"""

import json
import os
import sys
import textwrap

from absl.testing import absltest
import pytest

# What a task reports: its CPUs, and TensorFlow's inter-op threads once an
# op ran (TensorFlow names them tf_Compute).
_TASK = textwrap.dedent('''\
    import json, os, sys
    import tensorflow as tf
    tf.linalg.matmul(tf.ones((64, 64)), tf.ones((64, 64))).numpy()
    names = []
    for thread in os.listdir('/proc/self/task'):
      with open('/proc/self/task/%s/comm' % thread) as f:
        names.append(f.read().strip())
    out = os.path.join(sys.argv[1], os.environ['SLURM_PROCID'] + '.json')
    with open(out, 'w') as f:
      json.dump({'node': os.uname().nodename,
                 'cpus': sorted(os.sched_getaffinity(0)),
                 'inter_op_threads': names.count('tf_Compute'),
                 'cpus_per_task': os.environ.get('SLURM_CPUS_PER_TASK')}, f)
    ''')
# The CPUs of one task (no TensorFlow).
_CPUS = ('import os; print(os.environ["SLURM_PROCID"], '
         '",".join(map(str, sorted(os.sched_getaffinity(0)))))')
# srun options that give a step only what it asks for, per task.
_EXACT = '--exact'


class CpuBindingTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, cpu_binding_lab, tmp_path):
    self.lab = cpu_binding_lab
    self.tmp = str(tmp_path)

  def _task_cpus(self, srun_args):
    """{SLURM_PROCID: [CPU, ...]} of a step running _CPUS."""
    name = self.lab.job_name('cpus')
    result = self.lab.run(
        ['srun', '--kill-on-bad-exit=1', '--time=5', '--job-name', name] +
        srun_args + [self.lab.python, '-c', _CPUS],
        timeout=60, job_name=name, cwd=self.tmp)
    self.assertEqual(result.returncode, 0, result.describe())
    cpus = {}
    for line in result.stdout.splitlines():
      procid, listed = line.split()
      cpus[int(procid)] = [int(cpu) for cpu in listed.split(',')]
    return cpus

  def _batch_reports(self, steps):
    """Runs one `sbatch -N2 --ntasks-per-node=1 -c2` job with those steps.

    Args:
      steps: {label: srun options} of the steps, each running _TASK.

    Returns:
      {label: {SLURM_PROCID: the task's report}}.
    """
    lines = ['#!/bin/bash', 'set -e']
    for label, srun_args in steps.items():
      os.makedirs(os.path.join(self.tmp, label))
      lines.append('srun --kill-on-bad-exit=1 %s %s -c "$TASK" %s' % (
          srun_args, self.lab.python, os.path.join(self.tmp, label)))
    script = os.path.join(self.tmp, 'job.sh')
    with open(script, 'w') as f:
      f.write('\n'.join(lines) + '\n')
    submitted, job_id, fields = self.lab.sbatch(
        'cpus-per-task', script, timeout=240, cwd=self.tmp,
        sbatch_args=['-N2', '--ntasks-per-node=1', '--cpus-per-task=2',
                     '--time=5', '-o', os.path.join(self.tmp, 'job.out')],
        env={'TASK': _TASK})
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    with open(os.path.join(self.tmp, 'job.out')) as f:
      output = f.read()
    self.assertEqual((fields.get('JobState'), fields.get('ExitCode')),
                     ('COMPLETED', '0:0'),
                     'job %s: %s\n%s' % (job_id, fields, output))
    reports = {}
    for label in steps:
      reports[label] = {}
      for procid in range(2):
        with open(os.path.join(self.tmp, label, '%d.json' % procid)) as f:
          reports[label][procid] = json.load(f)
    return reports

  def test_each_task_runs_on_the_cpus_slurm_gave_it(self):
    one_each = self._task_cpus(['-w', 'n9', '-N1', '-n2'])
    self.assertLen(one_each, 2)
    self.assertEqual([len(cpus) for cpus in one_each.values()], [1, 1])
    self.assertNotEqual(one_each[0], one_each[1])
    self.assertEqual(self._task_cpus(['-w', 'n9', '-N1', '-n1', '-c2']),
                     {0: [0, 1]})

  def test_srun_cpus_per_task_of_the_job_reaches_every_task(self):
    reports = self._batch_reports({
        'examples': '--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"',
        'exact': '--exact --cpus-per-task="${SLURM_CPUS_PER_TASK}"'})
    for label, tasks in sorted(reports.items()):
      for procid, report in sorted(tasks.items()):
        where = '%s step, task %d: %s' % (label, procid, report)
        self.assertEqual(report['node'], ['n9', 'n10'][procid], where)
        self.assertEqual(report['cpus'], [0, 1], where)
        self.assertEqual(report['cpus_per_task'], '2', where)
        self.assertEqual(report['inter_op_threads'], 2, where)

  def test_step_without_cpus_per_task_gets_one_cpu_only_on_slurm_2205(self):
    reports = self._batch_reports({'exact': _EXACT})
    expected = [0] if self.lab.series == '22.05' else [0, 1]
    for procid, report in sorted(reports['exact'].items()):
      where = 'Slurm %s, task %d: %s' % (self.lab.version, procid, report)
      self.assertEqual(report['cpus'], expected, where)
      self.assertEqual(report['inter_op_threads'], len(expected), where)
      # The job's value, whatever the step got.
      self.assertEqual(report['cpus_per_task'], '2', where)


if __name__ == '__main__':
  # The labs are pytest fixtures (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
