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
"""The lab runs the Slurm asked for, and its tasks run this machine's Python.

SLURM_LAB_SLURM chooses Slurm 22.05 (Debian 12's packages, this machine's)
or 20.11, 24.11 or 26.05 (Debian 11's, 13's and forky's: daemons and clients
run from a Debian root of that suite, see tools/slurm_lab/README.md). Any
way:

* the clients, slurmctld and every slurmd are of that version, and a step's
  environment is that version's own (_SET_ONLY_BY: variables that the
  slurmstepd of some of these versions sets and the others do not);
* the tasks of a step and a batch script run on this machine's root (its
  /etc/os-release) with this repository's .venv Python, as every other
  integration test assumes.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  SLURM_LAB_SLURM=26.05 .venv/bin/python -m pytest tests/integration -v
"""

import json
import os
import platform
import sys
import textwrap

from absl.testing import absltest
import pytest

# What a task reports about where it runs.
_TASK = textwrap.dedent('''\
    import json, os, platform, sys
    with open('/etc/os-release') as f:
      os_release = f.read()
    out = os.path.join(sys.argv[1], os.environ['SLURM_PROCID'])
    with open(out + '.json', 'w') as f:
      json.dump({'os_release': os_release, 'python': sys.version,
                 'executable': sys.executable, 'prefix': sys.prefix,
                 'libc': platform.libc_ver(),
                 'node': os.uname().nodename,
                 'env': {k: v for k, v in os.environ.items()
                         if k.startswith('SLURM')}}, f)
    ''')
# Variables of a step's tasks -> the series whose slurmstepd sets them (seen on
# Debian's 20.11.4, 22.05.8, 24.11.5 and 26.05.5); the others do not.
_SET_ONLY_BY = {
    'SLURM_JOB_START_TIME': ('24.11', '26.05'),
    'SLURM_OOM_KILL_STEP': ('24.11', '26.05'),
    'SLURM_WORKING_CLUSTER': ('20.11', '22.05'),
    'SLURM_JOB_SLUID': ('26.05',),
}


def _here():
  """The same report for the test process itself."""
  with open('/etc/os-release') as f:
    os_release = f.read()
  return {'os_release': os_release, 'python': sys.version,
          'prefix': sys.prefix, 'libc': list(platform.libc_ver())}


class LabVersionsTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def _assert_runs_here(self, report, where):
    here = _here()
    self.assertEqual(report['os_release'], here['os_release'], where)
    self.assertEqual(report['python'], here['python'], where)
    self.assertEqual(report['libc'], here['libc'], where)
    self.assertEqual(os.path.realpath(report['prefix']),
                     os.path.realpath(here['prefix']), where)

  def test_clients_controller_and_nodes_run_the_requested_slurm(self):
    self.assertTrue(self.lab.version.startswith(self.lab.series + '.'),
                    (self.lab.version, self.lab.series))
    for client in ('srun', 'sbatch', 'salloc', 'scontrol', 'sinfo'):
      result = self.lab.client(client, '--version')
      self.assertEqual(result.returncode, 0, result.describe())
      self.assertEqual(result.stdout.split()[-1], self.lab.version,
                       result.describe())
    config = self.lab.client('scontrol', 'show', 'config')
    self.assertIn('SLURM_VERSION           = %s\n' % self.lab.version,
                  config.stdout, config.describe())
    nodes = self.lab.client('scontrol', '-o', 'show', 'node')
    versions = [field.split('=', 1)[1] for field in nodes.stdout.split()
                if field.startswith('Version=')]
    self.assertLen(versions, 9, nodes.describe())
    self.assertEqual(set(versions), {self.lab.version}, nodes.describe())

  def test_step_tasks_run_this_machines_python_and_the_versions_env(self):
    out = os.path.join(self.tmp, 'step')
    os.makedirs(out)
    name = self.lab.job_name('where')
    result = self.lab.run(
        ['srun', '--kill-on-bad-exit=1', '--time=5', '--job-name', name,
         '-w', 'n[9-11]', '-N3', '-n3', self.lab.python, '-c', _TASK, out],
        timeout=120, job_name=name, cwd=self.tmp)
    self.assertEqual(result.returncode, 0, result.describe())
    reports = {}
    for procid in range(3):
      with open(os.path.join(out, '%d.json' % procid)) as f:
        reports[procid] = json.load(f)
    self.assertEqual([reports[p]['node'] for p in range(3)],
                     ['n9', 'n10', 'n11'])
    for procid, report in sorted(reports.items()):
      where = 'task %d: %s' % (procid, report)
      self._assert_runs_here(report, where)
      set_here = {name for name, series in _SET_ONLY_BY.items()
                  if self.lab.series in series}
      self.assertEqual(set(report['env']) & set(_SET_ONLY_BY), set_here,
                       where)
    self.assertEqual(self.lab.wait_until_idle(), [])

  def test_batch_script_runs_this_machines_python(self):
    out = os.path.join(self.tmp, 'batch')
    os.makedirs(out)
    script = os.path.join(self.tmp, 'job.sh')
    with open(script, 'w') as f:
      f.write('#!/bin/sh\n#SBATCH -w n10 -N1 -n1 --time=5 -o %s/job.out\n'
              'exec %s -c "$TASK" %s\n' % (self.tmp, self.lab.python, out))
    submitted, job_id, fields = self.lab.sbatch(
        'where-batch', script, timeout=120, cwd=self.tmp, env={'TASK': _TASK})
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    self.assertEqual((fields.get('JobState'), fields.get('ExitCode')),
                     ('COMPLETED', '0:0'), 'job %s: %s' % (job_id, fields))
    with open(os.path.join(out, '0.json')) as f:  # The batch task is task 0.
      report = json.load(f)
    self.assertEqual(report['node'], 'n10')
    self._assert_runs_here(report, str(report))
    self.assertEqual(report['env'].get('SLURM_JOB_ID'), job_id)


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
