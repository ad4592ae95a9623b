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
"""Checks of a whole real Slurm step from its tasks' reports (report_task.py).

`step_problems` returns every way in which the tasks' resolutions disagree
with each other, with Slurm or with the nodes, as readable strings (empty if
the step is right); `step_table` shows the step for failure messages.
"""

import collections
import glob
import json
import os

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist

REPO_MODULE = os.path.join('tensorflow', 'python', 'distribute',
                           'cluster_resolver', 'slurm_cluster_resolver.py')
PORT_BASE = 8888


def read_reports(folder, suffix='.json'):
  """{SLURM_PROCID (int): report} from the tasks' files in `folder`."""
  reports = {}
  for path in glob.glob(os.path.join(folder, '*' + suffix)):
    name = os.path.basename(path)[:-len(suffix)]
    with open(path) as f:
      reports[int(name) if name.isdigit() else name] = json.load(f)
  return reports


def _host(address):
  return address.rsplit(':', 1)[0]


def _port(address):
  return int(address.rsplit(':', 1)[1])


def _gpus(value):
  return [] if value in (None, '', 'NoDevFiles') else value.split(',')


def node_by_node_ids(places, nodelist):
  """{SLURM_PROCID: task index}: the resolver numbers tasks node by node.

  A task's index is the number of the step's tasks on the nodes listed
  before its own in `nodelist` (SLURM_STEP_NODELIST) plus its SLURM_LOCALID,
  whatever order Slurm dealt the ranks in (where it dealt them node by node
  in list order, this is SLURM_PROCID).

  Args:
    places: {SLURM_PROCID: (node name, SLURM_LOCALID)} of every task of the
      step, the local ids as ints.
    nodelist: The step's SLURM_STEP_NODELIST.
  """
  nodes = slurm_hostlist.expand_hostlist(nodelist)
  per_node = collections.Counter(node for node, _ in places.values())
  return {procid: sum(per_node[other] for other in nodes[:nodes.index(node)])
                  + local
          for procid, (node, local) in places.items()}


def _expected_task_ids(reports):
  """{SLURM_PROCID: TF task id} of report_task's reports, by the rule."""
  first = next(iter(reports.values()), {})
  return node_by_node_ids(
      {procid: (r['nodename'], int(r['localid']))
       for procid, r in reports.items()},
      first.get('slurm', {}).get('SLURM_STEP_NODELIST', ''))


def step_table(reports):
  """One line per task: what Slurm said and what the resolver made of it."""
  lines = ['rank node     hostname localid task        address           '
           'GPUs Slurm -> resolver']
  for procid in sorted(reports, key=str):
    r = reports[procid]
    task = ('%s:%s' % (r.get('task_type'), r.get('task_id'))
            if 'task_type' in r else 'ERROR')
    address = (r.get('master') or '').split('://')[-1]
    lines.append('%-4s %-8s %-8s %-7s %-11s %-17s %s -> %s' %
                 (r.get('procid'), r.get('nodename'), r.get('hostname'),
                  r.get('localid'), task, address, r.get('cvd_before'),
                  r.get('cvd_after')))
    if 'error' in r:
      lines.append('     ' + r['error'].strip().splitlines()[-1])
  first = next(iter(reports.values()), {})
  if 'cluster' in first:
    lines.append('ClusterSpec: %s' % first['cluster'])
  lines.append('Slurm: %s' % {
      k: v for k, v in first.get('slurm', {}).items()
      if 'NODELIST' in k or 'TASKS' in k or 'DIST' in k or 'HET' in k})
  return '\n'.join(lines)


def step_problems(reports, num_tasks, repo_root, node_ips,
                  expect_nodes=None, expect_gpus=None, connected=True,
                  task_ids=None):
  """Everything wrong with one step, as a list of strings.

  Args:
    reports: {SLURM_PROCID: report} of every task of the step.
    num_tasks: The number of tasks Slurm should have started.
    repo_root: The repository whose resolver module the tasks must use.
    node_ips: Node name -> IPv4 address in the lab.
    expect_nodes: If given, the node of each rank, as the srun options
      determine it (shows the step has the intended layout).
    expect_gpus: If given, each rank's CUDA_VISIBLE_DEVICES after resolving.
    connected: Whether the tasks ran the TCP check (--connect).
    task_ids: If given, {SLURM_PROCID: TF task id}; else each task's id must
      be the resolver's rule (`node_by_node_ids`).
  """
  problems = []
  if sorted(reports) != list(range(num_tasks)):
    problems.append('expected reports of ranks 0..%d, got ranks %s' %
                    (num_tasks - 1, sorted(reports, key=str)))
  errors = {p: r['error'] for p, r in reports.items() if 'error' in r}
  for procid, error in sorted(errors.items()):
    problems.append('rank %s: the resolver raised:\n%s' % (procid, error))
  good = {p: r for p, r in reports.items() if 'error' not in r}
  if not good:
    return problems
  expected_module = os.path.join(repo_root, REPO_MODULE)
  for procid, r in sorted(good.items()):
    if os.path.realpath(r['module_file']) != os.path.realpath(
        expected_module):
      problems.append('rank %s used %s, not the repository\'s module %s' %
                      (procid, r['module_file'], expected_module))

  # One ClusterSpec, the same in every task, whichever hostlist expansion.
  clusters = collections.Counter(
      repr(sorted(r['cluster'].items())) for r in good.values())
  if len(clusters) != 1:
    problems.append('tasks resolved %d different ClusterSpecs: %s' %
                    (len(clusters), dict(clusters)))
  for procid, r in sorted(good.items()):
    if r['cluster_scontrol'] != r['cluster']:
      problems.append('rank %s: with scontrol show hostnames the ClusterSpec '
                      'is %s, with the builtin expansion %s' %
                      (procid, r['cluster_scontrol'], r['cluster']))
    # The core (the patch to TensorFlow) resolves as the companion does.
    core = r.get('core', {})
    if (core.get('cluster'), core.get('task')) != (
        r['cluster'], [r['task_type'], r['task_id']]):
      problems.append('rank %s: the core resolves %s as %s, the companion %s '
                      'as %s:%s' % (procid, core.get('cluster'),
                                    core.get('task'), r['cluster'],
                                    r['task_type'], r['task_id']))
  cluster = good[min(good)]['cluster']
  if sorted(cluster) != ['worker']:
    problems.append('default jobs should give one job "worker", got %s' %
                    sorted(cluster))
  addresses = cluster.get('worker', [])
  if len(addresses) != num_tasks:
    problems.append('ClusterSpec has %d workers, the step %d tasks' %
                    (len(addresses), num_tasks))
  duplicates = [a for a, n in collections.Counter(addresses).items() if n > 1]
  if duplicates:
    problems.append('addresses used by several tasks: %s' % duplicates)

  # Each task: its own index, its own address on the node Slurm ran it on.
  if task_ids is None:
    task_ids = _expected_task_ids(reports)
  for procid, r in sorted(good.items()):
    where = 'rank %s (SLURMD_NODENAME=%s, hostname %s)' % (
        procid, r['nodename'], r['hostname'])
    if r['nodename'] != r['hostname']:
      problems.append('%s: SLURMD_NODENAME is not the hostname' % where)
    want = task_ids[procid]
    if (r['task_type'], r['task_id']) != ('worker', want):
      problems.append('%s resolved to %s:%s, expected worker:%s' %
                      (where, r['task_type'], r['task_id'], want))
      continue
    if want >= len(addresses):
      continue
    own = addresses[want]
    if _host(own) != r['nodename']:
      problems.append('%s has address %s, on another node' % (where, own))
    if r['master'] != 'grpc://' + own:
      problems.append('%s: master() is %r, expected %r' %
                      (where, r['master'], 'grpc://' + own))

  # Ports count up from port_base on each node.
  by_node = collections.defaultdict(list)
  for address in addresses:
    by_node[_host(address)].append(_port(address))
  for node, ports in sorted(by_node.items()):
    want = list(range(PORT_BASE, PORT_BASE + len(ports)))
    if sorted(ports) != want:
      problems.append('node %s: ports %s, expected %s' % (node, ports, want))

  if expect_nodes is not None:
    actual = [good[p]['nodename'] if p in good else None
              for p in range(num_tasks)]
    if actual != list(expect_nodes):
      problems.append('Slurm ran the ranks on %s, the test expected %s (the '
                      'step does not have the intended layout)' %
                      (actual, list(expect_nodes)))

  problems.extend(_gpu_problems(good, expect_gpus))
  if connected:
    problems.extend(_network_problems(good, addresses, node_ips))
  return problems


def _gpu_problems(good, expect_gpus):
  """GPUs within Slurm's binding, as many in every task, shared only if short.

  Tasks of a node share a GPU only when the node has fewer GPUs than tasks,
  and a task sets TF_FORCE_GPU_ALLOW_GROWTH exactly when it shares its GPU.
  Outside heterogeneous steps every task that Slurm gave GPUs uses as many.
  """
  problems = []
  used = collections.defaultdict(list)  # node -> [(gpu, rank)]
  slurm_gpus = collections.defaultdict(set)  # node -> Slurm's GPUs there
  counts = {}
  for procid, r in sorted(good.items()):
    before, after = r['cvd_before'], r['cvd_after']
    count = r['num_accelerators'].get('GPU', 0)
    if before is None:
      # '' where the node's GPUs are Slurm's (the lab's slurm.conf lists
      # GresTypes=gpu): the task uses none of them.
      if after not in (None, '') or count:
        problems.append('rank %s: Slurm gave no GPUs, the resolver set '
                        'CUDA_VISIBLE_DEVICES=%r and %d GPUs' %
                        (procid, after, count))
      continue
    counts[procid] = count
    extra = set(_gpus(after)) - set(_gpus(before))
    if extra:
      problems.append('rank %s: GPUs %s are outside Slurm\'s binding %r' %
                      (procid, sorted(extra), before))
    if count != len(_gpus(after)):
      problems.append('rank %s: num_accelerators() says %d GPUs but '
                      'CUDA_VISIBLE_DEVICES=%r' % (procid, count, after))
    slurm_gpus[r['nodename']].update(_gpus(before))
    for gpu in _gpus(after):
      used[r['nodename']].append((gpu, procid))
  sharing = set()
  for node, pairs in sorted(used.items()):
    ranks = collections.defaultdict(list)
    for gpu, procid in pairs:
      ranks[gpu].append(procid)
    shared = {gpu: p for gpu, p in ranks.items() if len(p) > 1}
    tasks = len({procid for _, procid in pairs})
    if shared and len(slurm_gpus[node]) >= tasks:
      problems.append('node %s: %d GPUs for %d tasks, yet GPUs given to '
                      'several tasks: %s' % (node, len(slurm_gpus[node]),
                                             tasks, shared))
    for procids in shared.values():
      sharing.update(procids)
  for procid, r in sorted(good.items()):
    growth = r.get('allow_growth_after')
    set_by_resolver = growth == 'true' and r.get('allow_growth_before') is None
    if set_by_resolver != (procid in sharing):
      problems.append('rank %s: shares its GPU: %s, but '
                      'TF_FORCE_GPU_ALLOW_GROWTH is %r' %
                      (procid, procid in sharing, growth))
  heterogeneous = any('SLURM_HET_SIZE' in r['slurm'] for r in good.values())
  if not heterogeneous and len(set(counts.values())) > 1:
    problems.append('tasks use different numbers of GPUs: %s' % counts)
  if expect_gpus is not None:
    actual = [good[p]['cvd_after'] if p in good else '?'
              for p in range(len(expect_gpus))]
    if actual != list(expect_gpus):
      problems.append('CUDA_VISIBLE_DEVICES after resolving: %s, expected %s'
                      % (actual, list(expect_gpus)))
  return problems


def _network_problems(good, addresses, node_ips):
  """Every task bound its own address and talked to every other task."""
  problems = []
  # Tasks connect by TF task index, numbered node by node
  # (`node_by_node_ids`).
  procid_of = {r['task_id']: procid for procid, r in good.items()}
  for procid, r in sorted(good.items()):
    net = r.get('net')
    if net is None:
      problems.append('rank %s did not run the TCP check' % procid)
      continue
    for error in net['errors']:
      problems.append('rank %s (TCP): %s' % (procid, error))
    own = r['task_id']
    if not isinstance(own, int) or own >= len(addresses):
      continue
    own_ip = node_ips.get(r['nodename'])
    if net['bind_ip'] != own_ip:
      problems.append('rank %s on %s bound %s, the node\'s address is %s' %
                      (procid, r['nodename'], net['bind_ip'], own_ip))
    others = {str(i) for i in range(len(addresses)) if i != own}
    if set(net['reached']) != others:
      problems.append('rank %s reached tasks %s of %s' %
                      (procid, sorted(net['reached']), sorted(others)))
    if set(net['accepted']) != others:
      problems.append('rank %s was reached by tasks %s of %s' %
                      (procid, sorted(net['accepted']), sorted(others)))
    for index, said in sorted(net['reached'].items()):
      peer = good.get(procid_of.get(int(index)))
      if peer is None:
        continue
      if (said['procid'], said['hostname'], said['address']) != (
          peer['procid'], peer['nodename'], addresses[int(index)]):
        problems.append('rank %s connected to %s and met %s, expected rank %s '
                        'on %s' % (procid, addresses[int(index)], said,
                                   peer['procid'], peer['nodename']))
    for index, peer_ip in sorted(net['accepted'].items()):
      peer = good.get(procid_of.get(int(index)))
      if peer is not None and peer_ip != node_ips.get(peer['nodename']):
        problems.append('rank %s: task %s connected from %s, not from its '
                        'node %s (%s)' % (procid, index, peer_ip,
                                          peer['nodename'],
                                          node_ips.get(peer['nodename'])))
  return problems
