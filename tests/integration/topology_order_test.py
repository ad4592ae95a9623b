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
"""Steps that Slurm numbers in network-topology order (tools/slurm_lab).

On a lab of nodes n9..n12 with switches (or blocks) s1 = n11,n12 and
s2 = n9,n10, Slurm 26.05 deals the ranks of block steps (block or unset
distribution, `--ntasks-per-node`, the step of `sbatch -N4 -n8`) in topology
order: ranks 0,1 on n11, 2,3 on n12, 4,5 on n9, 6,7 on n10, while the node
list stays n[9-12]. Cyclic, plane and arbitrary steps, and the step of
`sbatch -N4` (SLURM_DISTRIBUTION=cyclic), keep list order;
`SelectTypeParameters=...,CR_NO_DIST_TOPO_BLOCK` restores it for block steps.
Slurm 24.11 never reorders; with `TopologyParam=SwitchAsNodeRank` its node
list itself is in switch order (n[11-12,9-10]).

For each lab, every step below records its tasks' environments
(topology_task.py; no TensorFlow) and one task resolves them all. Each test
checks first that Slurm placed the ranks as stated (the lab shows the
behaviour), then that every task resolves the same cluster, in which its own
address is on its own node, and its task index follows the resolver's rule:
node by node in block steps, SLURM_PROCID otherwise. On the 26.05 tree lab,
one reordered step also runs the resolver in its tasks, which bind and
connect to each other's addresses, and MultiWorkerMirroredStrategy trains
across another.

Needs root; run with pytest (the labs are fixtures in conftest.py):
  SLURM_LAB_SLURM=26.05 .venv/bin/python -m pytest \
      tests/integration/topology_order_test.py -v
"""

import collections
import json
import os
import sys

import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOPOLOGY_TASK = os.path.join(HERE, 'topology_task.py')
REPORT_TASK = os.path.join(HERE, 'report_task.py')
TRAIN_MWMS = os.path.join(ROOT, 'examples', 'train_mwms.py')

_SWITCHES = 'n11,n12 n9,n10'
_TREE = {'SLURM_LAB_TOPOLOGY': 'tree ' + _SWITCHES}
_BLOCKS = {'SLURM_LAB_TOPOLOGY': 'block ' + _SWITCHES}
_LIST = 'n9 n10 n11 n12'
_SWITCH_ORDER = 'n11 n12 n9 n10'
# (series, lab settings), the node order of list-ordered steps, and the
# node order in which Slurm deals the ranks of block steps.
_LABS = {
    'tree-26.05': (('26.05', _TREE), _LIST, _SWITCH_ORDER),
    'block-26.05': (('26.05', _BLOCKS), _LIST, _SWITCH_ORDER),
    'tree-no-dist-topo-block-26.05': (
        ('26.05', dict(_TREE, SLURM_LAB_SELECT_PARAMS=(
            'CR_Core,CR_NO_DIST_TOPO_BLOCK'))), _LIST, _LIST),
    'tree-24.11': (('24.11', _TREE), _LIST, _LIST),
    'tree-switch-as-node-rank-24.11': (
        ('24.11', dict(_TREE, SLURM_LAB_TOPOLOGY_PARAM='SwitchAsNodeRank')),
        _SWITCH_ORDER, _SWITCH_ORDER),
}
# The steps of a lab: srun's options, and whether Slurm deals the ranks in
# the block order (else in list order) and how: 'block' fills each node in
# turn, 'cyclic' deals one task per node in turn; all steps run 2 tasks per
# node.
_SRUN_STEPS = {
    'N4-n8': (['-N4', '-n8'], 'block', 'block'),
    'block': (['-N4', '-n8', '-m', 'block'], 'block', 'block'),
    'block-cyclic': (['-N4', '-n8', '-m', 'block:cyclic'], 'block', 'block'),
    'ntasks-per-node': (['-N4', '--ntasks-per-node=2'], 'block', 'block'),
    'cyclic': (['-N4', '-n8', '-m', 'cyclic'], 'list', 'cyclic'),
    'plane': (['-N4', '-n8', '-m', 'plane=2'], 'list', 'block'),
}
# Batch scripts: sbatch's options; each runs `srun` with no options. The
# step of `sbatch -N4` runs a task per node, cyclic.
_SBATCH_STEPS = {
    'sbatch-N4-n8': (['-N4', '-n8'], 'block', 'block'),
    'sbatch-N4': (['-N4'], 'list', 'cyclic'),
}
_TASKS_PER_NODE = {'sbatch-N4': 1}
# srun -N3 -n5: Slurm picks the nodes, so only the rule is checked.
_UNPLACED_STEPS = {'N3-n5': ['-N3', '-n5']}
# SLURM_HOSTFILE of the arbitrary step.
_HOSTFILE_NODES = ['n10', 'n9', 'n9', 'n10']
_STEP_SECONDS = 60


def _dealt(order, how, tasks_per_node=2):
  """The node of every rank when Slurm deals `order`'s nodes `how`."""
  nodes = order.split()
  if how == 'cyclic':
    return nodes * tasks_per_node
  return [node for node in nodes for _ in range(tasks_per_node)]


def _rule_ids(tasks):
  """{SLURM_PROCID: task index} by the resolver's rule (step_checks)."""
  envs = {int(procid): task['env'] for procid, task in tasks.items()}
  return step_checks.node_by_node_ids(
      {procid: (env['SLURMD_NODENAME'], int(env['SLURM_LOCALID']))
       for procid, env in envs.items()}, envs[0]['SLURM_STEP_NODELIST'])


def resolution_problems(tasks, resolved):
  """Everything wrong with the resolutions of one recorded step.

  Args:
    tasks: {SLURM_PROCID (str): {'env': ..., 'hostname': ...}}.
    resolved: {SLURM_PROCID (str): topology_task.py's resolution}.
  """
  problems = []
  if sorted(resolved) != sorted(tasks):
    problems.append('resolved tasks %s of %s' % (sorted(resolved),
                                                 sorted(tasks)))
  for procid, r in sorted(resolved.items()):
    if 'error' in r:
      problems.append('rank %s: the resolver raised:\n%s' % (procid,
                                                             r['error']))
  good = {procid: r for procid, r in resolved.items() if 'error' not in r}
  clusters = collections.Counter(json.dumps(r['cluster'], sort_keys=True)
                                 for r in good.values())
  if len(clusters) > 1:
    problems.append('tasks resolved %d different clusters: %s' %
                    (len(clusters), dict(clusters)))
  want = _rule_ids(tasks)
  for procid, r in sorted(good.items()):
    env, hostname = tasks[procid]['env'], tasks[procid]['hostname']
    addresses = r['cluster'].get('worker', [])
    if len(set(addresses)) != len(tasks):
      problems.append('rank %s: %d distinct addresses for %d tasks: %s' %
                      (procid, len(set(addresses)), len(tasks), addresses))
    if (r['task_type'], r['task_id']) != ('worker', want[int(procid)]):
      problems.append('rank %s is %s:%s, expected worker:%d' %
                      (procid, r['task_type'], r['task_id'],
                       want[int(procid)]))
      continue
    own = addresses[r['task_id']]
    if own.rsplit(':', 1)[0] != env['SLURMD_NODENAME'] or (
        hostname != env['SLURMD_NODENAME']):
      problems.append('rank %s on %s (host name %s) has address %s' %
                      (procid, env['SLURMD_NODENAME'], hostname, own))
    if r['master'] != 'grpc://' + own:
      problems.append('rank %s: master() is %s, its address %s' %
                      (procid, r['master'], own))
  return problems


def _read_step(folder):
  tasks = {}
  for name in os.listdir(folder):
    if name[0].isdigit() and name.endswith('.json'):
      with open(os.path.join(folder, name)) as f:
        tasks[name[:-len('.json')]] = json.load(f)
  resolved = {}
  if os.path.exists(os.path.join(folder, 'resolved.json')):
    with open(os.path.join(folder, 'resolved.json')) as f:
      resolved = json.load(f)
  return tasks, resolved


def _arbitrary_refused(lab):
  """Why the lab runs no arbitrary step, or None."""
  if lab.series == '24.11':
    return 'Slurm 24.11 with topology/tree leaves an arbitrary step pending'
  if lab.settings['SLURM_LAB_TOPOLOGY'].startswith('block'):
    return ('topology/block refuses an arbitrary step ("Requested operation '
            'not supported on this system")')
  return None


def _ranks_on(tasks):
  """The node of every rank, in rank order."""
  return [tasks[procid]['env']['SLURMD_NODENAME']
          for procid in sorted(tasks, key=int)]


_BATCH_SCRIPT = '''#!/bin/sh
exec srun --kill-on-bad-exit=1 "$@"
'''


@pytest.fixture(scope='module')
def recorded(topology_lab, tmp_path_factory):
  """Records every step on the lab, resolves them; returns the folder."""
  lab = topology_lab
  out = str(tmp_path_factory.mktemp('topology'))
  record = lambda label: ['record', os.path.join(out, label)]
  failures = []
  steps = {label: args for label, (args, _, _) in _SRUN_STEPS.items()}
  steps.update(_UNPLACED_STEPS)
  for label, args in steps.items():
    result = lab.srun(label, args, TOPOLOGY_TASK, record(label),
                      timeout=_STEP_SECONDS)
    if result.returncode:
      failures.append(result.describe())
  hostfile = os.path.join(out, 'hostfile')
  with open(hostfile, 'w') as f:
    f.write('\n'.join(_HOSTFILE_NODES) + '\n')
  if not _arbitrary_refused(lab):
    result = lab.srun('arbitrary', ['-n4', '-m', 'arbitrary'],
                      TOPOLOGY_TASK, record('arbitrary'),
                      timeout=_STEP_SECONDS,
                      env={'SLURM_HOSTFILE': hostfile})
    if result.returncode:
      failures.append(result.describe())
  script = os.path.join(out, 'batch.sh')
  with open(script, 'w') as f:
    f.write(_BATCH_SCRIPT)
  for label, (args, _, _) in _SBATCH_STEPS.items():
    submitted, job_id, fields = lab.sbatch(
        label, script, timeout=_STEP_SECONDS,
        sbatch_args=args + ['-o', os.path.join(out, label + '.out')],
        script_args=[lab.python, TOPOLOGY_TASK] + record(label))
    if fields.get('ExitCode') != '0:0':
      failures.append('%s: job %s %s\n%s' % (label, job_id, fields,
                                             submitted.describe()))
  result = lab.srun('resolve', ['-N1', '-n1', '-w', 'n9'], TOPOLOGY_TASK,
                    ['resolve', out], timeout=120)
  if result.returncode:
    failures.append(result.describe())
  assert not failures, '\n'.join(failures)
  return out


@pytest.mark.parametrize('topology_lab', [lab for lab, _, _ in
                                          _LABS.values()],
                         ids=list(_LABS), indirect=True, scope='module')
class TestTopologyOrder:
  """Every step of every topology lab: Slurm's placement, then the rule."""

  @pytest.fixture
  def orders(self, request):
    """(list order, block order) of the lab of this test."""
    lab = request.node.callspec.params['topology_lab']
    return next(orders for settings, *orders in _LABS.values()
                if settings == lab)

  @pytest.mark.parametrize('step', list(_SRUN_STEPS) + list(_SBATCH_STEPS))
  def test_step_resolves_one_cluster_by_the_rule(self, recorded, orders,
                                                  step):
    _, order, how = dict(_SRUN_STEPS, **_SBATCH_STEPS)[step]
    tasks, resolved = _read_step(os.path.join(recorded, step))
    expected = _dealt(orders[1] if order == 'block' else orders[0], how,
                      _TASKS_PER_NODE.get(step, 2))
    assert _ranks_on(tasks) == expected, 'Slurm placed the ranks otherwise'
    assert resolution_problems(tasks, resolved) == []

  def test_uneven_step_resolves_one_cluster_by_the_rule(self, recorded):
    tasks, resolved = _read_step(os.path.join(recorded, 'N3-n5'))
    assert len(tasks) == 5
    assert resolution_problems(tasks, resolved) == []

  def test_arbitrary_step_resolves_in_hostfile_order(self, topology_lab,
                                                     recorded):
    if _arbitrary_refused(topology_lab):
      pytest.skip(_arbitrary_refused(topology_lab))
    tasks, resolved = _read_step(os.path.join(recorded, 'arbitrary'))
    assert _ranks_on(tasks) == _HOSTFILE_NODES
    assert resolution_problems(tasks, resolved) == []


@pytest.mark.parametrize('topology_lab', [_LABS['tree-26.05'][0]],
                         ids=['tree-26.05'], indirect=True, scope='module')
class TestTopologyOrderedTasks:
  """The resolver in the tasks of steps that Slurm 26.05 reorders."""

  def test_tasks_bind_and_reach_each_other_at_their_addresses(
      self, topology_lab, tmp_path):
    # -w n[10-12] -N3 -n5: 2, 2 and 1 tasks in list order (n10, n11, n12),
    # dealt in topology order: ranks 0,1 on n11, 2 on n12, 3,4 on n10.
    out = str(tmp_path / 'reports')
    result = topology_lab.srun(
        'reordered', ['-w', 'n[10-12]', '-N3', '-n5'], REPORT_TASK,
        ['--out', out, '--connect', '60'], timeout=180, cwd=str(tmp_path))
    reports = step_checks.read_reports(out)
    problems = step_checks.step_problems(
        reports, 5, topology_lab.root, topology_lab.addresses,
        expect_nodes=['n11', 'n11', 'n12', 'n10', 'n10'])
    if result.returncode != 0:
      problems.insert(0, 'srun exited with status %s' % result.returncode)
    assert problems == [], '%s\n%s' % (step_checks.step_table(reports),
                                        result.describe())

  def test_mwms_trains_across_a_reordered_step(self, topology_lab, tmp_path):
    # -w n10,n11 -N2 -n4: ranks 0,1 on n11 are workers 2,3; ranks 2,3 on
    # n10 workers 0,1.
    out = str(tmp_path / 'results')
    result = topology_lab.srun(
        'mwms', ['-w', 'n10,n11', '-N2', '-n4'], TRAIN_MWMS,
        ['--out', out, '--epochs', '1', '--steps-per-epoch', '3'],
        timeout=240, cwd=str(tmp_path))
    assert result.returncode == 0, result.describe()
    results = step_checks.read_reports(out)
    table = '\n'.join('%(procid)s %(node)s %(task)s %(address)s' % r
                      for _, r in sorted(results.items()))
    assert [(r['node'], r['task'], r['address'])
            for _, r in sorted(results.items())] == [
                ('n11', 'worker:2', 'n11:8888'),
                ('n11', 'worker:3', 'n11:8889'),
                ('n10', 'worker:0', 'n10:8888'),
                ('n10', 'worker:1', 'n10:8889')], table
    assert all(r['hostname'] == r['node'] for r in results.values()), table
    # One cluster of 4 workers, trained in step: the same weights in all.
    assert {r['workers'] for r in results.values()} == {4}, table
    assert len({r['weights_sha256'] for r in results.values()}) == 1, table
    assert topology_lab.wait_until_idle() == []


if __name__ == '__main__':
  # The labs are pytest fixtures (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
