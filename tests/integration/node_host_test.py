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
"""Nodes reachable only by a mapped name (`node_host`), on the lab.

As on clusters where a node's Slurm name is the management network's and
workers must use another interface's name (`<node>-ib`), the tasks of these
steps see a hosts file of their own (a mount namespace per task, bound over
the lab's /etc/hosts): `n9-ib`, `n10-ib` are the nodes' real addresses, and
`n9`, `n10` resolve to addresses of the lab subnet that no namespace has.
Slurm itself (slurmd, srun) keeps the lab's hosts file.

MultiWorkerMirroredStrategy then trains across both nodes with
`node_host='{node}-ib'`, and the explain command's `--check-hosts` run in
the tasks says which hosts resolve there.

Needs root; run with pytest (the lab is a session fixture in conftest.py).
"""

import math
import os
import re
import sys

from absl.testing import absltest
import pytest

import step_checks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRAIN_MWMS = os.path.join(ROOT, 'examples', 'train_mwms.py')
EXPLAIN = 'tf_slurm.explain'
NODES = ('n9', 'n10')
# The hosts of the plain node names: in the lab's /24, on no namespace.
UNUSED_HOSTS = (250, 251)
# Binds the hosts and resolver files over /etc's in a mount namespace of the
# task's own, then runs the task's command.
_WITH_OWN_HOSTS = ('mount --bind "$0" /etc/hosts && '
                   'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"')


class NodeHostTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)
    net = self.lab.addresses['ctl'].rsplit('.', 1)[0]
    self.unused = ['%s.%d' % (net, host) for host in UNUSED_HOSTS]
    self.assertFalse(set(self.unused) & set(self.lab.addresses.values()))
    lines = ['127.0.0.1 localhost', '%s ctl' % self.lab.addresses['ctl']]
    for node, unused in zip(NODES, self.unused):
      lines.append('%s %s-ib' % (self.lab.addresses[node], node))
      lines.append('%s %s' % (unused, node))
    self.hosts = os.path.join(self.tmp, 'hosts')
    with open(self.hosts, 'w') as f:
      f.write('\n'.join(lines) + '\n')
    # Names outside the hosts file are asked of loopback only.
    self.resolv = os.path.join(self.tmp, 'resolv.conf')
    with open(self.resolv, 'w') as f:
      f.write('nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')

  def srun_with_own_hosts(self, label, srun_args, command, timeout):
    """Runs `command` as the tasks of a step, each seeing self.hosts."""
    name = self.lab.job_name(label)
    argv = (['srun', '--kill-on-bad-exit=1', '--time=5', '--job-name', name,
             '-w', ','.join(NODES), '-N2', '--ntasks-per-node=1'] +
            list(srun_args) +
            ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
             _WITH_OWN_HOSTS, self.hosts, self.resolv] + list(command))
    return self.lab.run(argv, timeout, job_name=name, cwd=self.tmp)

  def test_check_hosts_reports_which_hosts_resolve_in_the_tasks(self):
    explain = '%s -m %s --check-hosts' % (self.lab.python, EXPLAIN)
    result = self.srun_with_own_hosts('check-hosts', ['--label'], [
        'sh', '-c',
        "%s --node-host '{node}-ib'; echo status=$?; "
        "%s --node-host '{node}.ib.example'; echo status=$?" %
        (explain, explain)], timeout=120)
    self.assertEqual(result.returncode, 0, result.describe())
    print(result.stdout)
    for task, node in enumerate(NODES):
      out = ''.join(line.split(': ', 1)[1] + '\n'
                    for line in result.stdout.splitlines()
                    if line.startswith('%d: ' % task))
      why = out + result.describe()
      mapped, unmapped = out.split('status=')[:2]
      self.assertIn('%s-ib:8888' % node, mapped, why)
      self.assertIn('Host lookup: 2 of 2 hosts resolve on this node\n',
                    mapped, why)
      self.assertTrue(unmapped.startswith('0\n'), why)
      self.assertIn('Host lookup: 0 of 2 hosts resolve on this node\n',
                    unmapped, why)
      for other in NODES:
        self.assertRegex(unmapped, r'\n  %s\.ib\.example: \S' %
                         re.escape(other), why)
      self.assertTrue(out.rstrip().endswith('status=1'), why)

  def test_mwms_trains_across_nodes_reachable_only_by_mapped_names(self):
    out = os.path.join(self.tmp, 'results')
    result = self.srun_with_own_hosts('node-host-mwms', [], [
        self.lab.python, TRAIN_MWMS, '--node-host', '{node}-ib', '--out', out,
        '--epochs', '1', '--steps-per-epoch', '3'], timeout=240)
    self.assertEqual(result.returncode, 0, result.describe())
    results = step_checks.read_reports(out)
    self.assertEqual(sorted(results), [0, 1], result.describe())
    table = '\n'.join('%(procid)s %(node)s %(task)s %(address)s loss=%(loss)s'
                      % r for _, r in sorted(results.items()))
    print(table)
    for procid, r in sorted(results.items()):
      self.assertEqual(r['node'], NODES[procid], table)
      self.assertEqual(r['address'], '%s-ib:8888' % NODES[procid], table)
      self.assertEqual(r['workers'], 2, table)
      self.assertTrue(all(math.isfinite(v) for v in r['loss']), table)
    self.assertLen({r['weights_sha256'] for r in results.values()}, 1, table)
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
