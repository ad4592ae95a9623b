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
"""het_jobs, reserved/derived ports, the explain command and the scontrol
cross-check, each in real srun steps of the Slurm lab (tools/slurm_lab).

- Heterogeneous job: `srun -w n9 -n1 : -p mixed -w c09 -n1 : -w n10,n11 -n2`
  with `SlurmClusterResolver(het_jobs=['chief', 'ps', 'worker'])` trains with
  ParameterServerStrategy (het_ps_task.py): roles by component, one cluster
  in every task (also with hostlist_expansion='check' and from the explain
  command), loss decreasing, every task ends.
- Ports: four steps at once on the same two nodes, two with
  port_base='reserved' (`--resv-ports=1`) and two with 'derived', each a
  MultiWorkerMirroredStrategy of 2 workers (ports_task.py); all servers are
  up together (a rendezvous) before any trains. Default ports would collide
  here (TensorFlow then fails with "Could not start gRPC server").
  In a heterogeneous step Slurm reserves each component's ports on its own
  nodes only (`scontrol show step` shows each component's ResvPorts) but
  gives every task all of them: 'reserved' must refuse there, or use on
  each node only ports reserved on it.
- The explain command in a `--gres=gpu:2 -m cyclic` step (inspect_task.py):
  `--tf-config` equals the resolver's TF_CONFIG in every task, `--all` puts
  every rank on the node Slurm ran it on, and it leaves
  CUDA_VISIBLE_DEVICES alone. In the same step (`--resv-ports=0`)
  port_base='reserved' fails in every task with the clear error.
- The companion's hostlist_expansion='check' in a step over the mixed partition
  (`c[09-11],gpu1-ib,gpu2-ib,rack1-node01`): resolves, and the 'builtin',
  'scontrol' and 'check' expansions agree.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration -v -k ResolverOptions
"""

import json
import math
import os
import sys
import time

from absl.testing import absltest
import pytest

import step_checks

HERE = os.path.dirname(os.path.abspath(__file__))
HET_PS_TASK = os.path.join(HERE, 'het_ps_task.py')
PORTS_TASK = os.path.join(HERE, 'ports_task.py')
INSPECT_TASK = os.path.join(HERE, 'inspect_task.py')
CHIEF_TIMEOUT = 150
# What TensorFlow says when a server's port is taken (seen with two
# concurrent steps on port_base=8888), and the kernel's word for it.
BIND_ERRORS = ('Could not start gRPC server', 'Address already in use')


def _flat(cluster):
  """Task addresses in TensorFlow task order (jobs in sorted name order)."""
  return [address for job in sorted(cluster) for address in cluster[job]]


def _tf_config(resolved):
  return {'cluster': resolved['cluster'],
          'task': {'type': resolved['task_type'],
                   'index': resolved['task_id']},
          'rpc_layer': resolved['rpc_layer']}


def _explain_rows(text):
  """The task table of `--all`: rank -> (node, local, task, address, GPUs)."""
  rows, in_table = {}, False
  for line in text.splitlines():
    fields = line.split()
    if fields[:2] == ['rank', 'node']:
      in_table = True
    elif in_table and fields and fields[0].isdigit():
      rows[int(fields[0])] = dict(
          node=fields[1], local=int(fields[2]), task=fields[3],
          address=fields[4], gpus=fields[5],
          this=fields[6:] == ['<-', 'this', 'task'])
  return rows


def _gpus_column(cvd):
  """How the explain command writes a task's CUDA_VISIBLE_DEVICES."""
  return '-' if cvd is None else cvd or 'none'


class ResolverOptionsTest(absltest.TestCase):
  """het_jobs, port_base, the explain command, the hostlist cross-check."""

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  # ------------------------------------------------------------- het_jobs
  def test_het_step_chief_ps_worker_components_train_with_pss(self):
    out = os.path.join(self.tmp, 'reports')
    name = self.lab.job_name('het-ps')
    srun_args = [
        # --wait: Slurm ends the servers 30 s after the chief at the latest.
        '--wait=30', '-w', 'n9', '-n1', ':',
        '-p', 'mixed', '-w', 'c09', '-n1', ':',
        '-w', 'n10,n11', '-N2', '-n2']
    running = self.lab.start(
        self.lab.srun_argv(
            srun_args, HET_PS_TASK,
            ['--out', out, '--het-jobs', 'chief,ps,worker', '--steps', '10',
             '--max-seconds', str(CHIEF_TIMEOUT + 60)], job_name=name),
        job_name=name, cwd=self.tmp)
    try:
      deadline = time.monotonic() + CHIEF_TIMEOUT
      while (not os.path.exists(os.path.join(out, '0.json')) and
             running.poll() is None and time.monotonic() < deadline):
        time.sleep(0.25)
      chief_reported = os.path.exists(os.path.join(out, '0.json'))
      # The chief is done (or failed): end the ps and worker servers.
      self.lab.scancel('--signal=TERM', '--name', name)
      result = running.wait(timeout=60)
    finally:
      if running.poll() is None:
        running.stop()
    reports = step_checks.read_reports(out)
    self.assertTrue(chief_reported, 'no report from the chief within %d s\n%s'
                    % (CHIEF_TIMEOUT, result.describe()))
    self.assertEqual(sorted(reports), [0, 1, 2, 3], result.describe())
    for procid, r in sorted(reports.items()):
      self.assertNotIn('error', r, 'rank %s: %s' % (procid, r.get('error')))

    # Roles by component, each task on its component's node, one cluster.
    cluster = {'chief': ['n9:8888'], 'ps': ['c09:8888'],
               'worker': ['n10:8888', 'n11:8888']}
    expected = [('chief', 0, 'n9'), ('ps', 0, 'c09'), ('worker', 0, 'n10'),
                ('worker', 1, 'n11')]
    table = '\n'.join(
        'rank %s %s:%s on %s (%s) address %s' %
        (p, r['task_type'], r['task_id'], r['nodename'], r['hostname'],
         r['address']) for p, r in sorted(reports.items()))
    print(table)
    for procid, r in sorted(reports.items()):
      self.assertEqual(r['slurm'].get('SLURM_HET_SIZE'), '3', repr(r))
      self.assertEqual((r['task_type'], r['task_id'], r['nodename']),
                       expected[procid], table)
      self.assertEqual(r['hostname'], r['nodename'], table)
      self.assertEqual(r['cluster'], cluster, 'rank %s' % procid)
      self.assertEqual(r['address'], '%s:8888' % r['nodename'], table)
      # The same step with every node list also expanded by scontrol.
      self.assertEqual(r['cluster_check'], cluster, 'rank %s' % procid)
      # The explain command, as a user runs it in the task, agrees.
      explain = r['explain']
      self.assertEqual(explain['status'], 0, explain)
      self.assertEqual(
          json.loads(explain['stdout']),
          {'cluster': cluster,
           'task': {'type': r['task_type'], 'index': r['task_id']},
           'rpc_layer': 'grpc'}, 'rank %s' % procid)

    # The chief trained through the coordinator: 2 workers, variables on ps:0.
    chief = reports[0]
    print('chief: losses %s' % chief['losses'])
    self.assertTrue(chief.get('done'), repr(chief))
    self.assertEqual((chief['num_workers'], chief['num_ps']), (2, 1))
    self.assertEqual(set(chief['variable_devices'].values()),
                     {'/job:ps/replica:0/task:0/device:CPU:0'})
    self.assertLen(chief['losses'], 10)
    self.assertTrue(all(math.isfinite(v) for v in chief['losses']),
                    chief['losses'])
    # Steps run asynchronously: the first scheduled step's loss may come
    # from weights later steps already trained, so the reference is the
    # largest loss, that of the initial weights.
    self.assertLess(min(chief['losses'][-2:]), max(chief['losses']) / 10,
                    chief['losses'])

    # Every server ran until the chief was done, then ended with the step.
    ended = step_checks.read_reports(out, suffix='.term')
    self.assertEqual(sorted(ended), [1, 2, 3], result.describe())
    self.assertFalse(result.timed_out, result.describe())
    self.assertEqual(result.returncode, 0, result.describe())
    self.assertEqual(self.lab.wait_until_idle(), [])

  # ---------------------------------------------------------------- ports
  def test_concurrent_steps_on_same_nodes_train_on_reserved_and_derived_ports(
      self):
    nodes = ['-w', 'n9,n10', '-N2', '--ntasks-per-node=1']
    steps = {'reserved-a': ['--resv-ports=1'], 'reserved-b': ['--resv-ports=1'],
             'derived-a': [], 'derived-b': []}
    rendezvous = os.path.join(self.tmp, 'rendezvous')
    peers = 2 * len(steps)
    running, results = {}, {}
    try:
      for label, extra in steps.items():
        name = self.lab.job_name(label)
        running[label] = self.lab.start(
            self.lab.srun_argv(
                nodes + extra, PORTS_TASK,
                ['--out', os.path.join(self.tmp, label),
                 '--port-base', label.split('-')[0],
                 '--rendezvous', rendezvous, '--peers', str(peers),
                 '--rendezvous-seconds', '90'], job_name=name),
            job_name=name, cwd=self.tmp)
      deadline = time.monotonic() + 180
      results = {label: run.wait(timeout=deadline - time.monotonic())
                 for label, run in running.items()}
    finally:
      for run in running.values():
        if run.poll() is None:
          run.stop()
    described = '\n\n'.join(r.describe() for r in results.values())
    reports = {label: step_checks.read_reports(os.path.join(self.tmp, label))
               for label in steps}
    lines = []
    for label, step in sorted(reports.items()):
      for procid, r in sorted(step.items()):
        lines.append('%-10s job %s rank %s on %s: %s:%s at %s, reserved %s, '
                     'loss %s' % (label, r.get('job_id'), procid,
                                  r.get('nodename'), r.get('task_type'),
                                  r.get('task_id'), r.get('address'),
                                  r.get('resv_ports'),
                                  [round(v, 3) for v in r.get('losses', [])]))
    table = '\n'.join(lines)
    print(table)
    for label, result in sorted(results.items()):
      for text in BIND_ERRORS:
        self.assertNotIn(text, result.stderr + result.stdout,
                         '%s: %s' % (label, result.describe()))
      self.assertFalse(result.timed_out, result.describe())
      self.assertEqual(result.returncode, 0, result.describe())

    ports_of_step = {}
    for label, step in sorted(reports.items()):
      self.assertEqual(sorted(step), [0, 1], described)
      for procid, r in sorted(step.items()):
        self.assertNotIn('error', r, '%s rank %s: %s' % (label, procid,
                                                         r.get('error')))
      cluster = step[0]['cluster']
      self.assertLen(cluster['worker'], 2, table)
      ports = {int(a.rsplit(':', 1)[1]) for a in cluster['worker']}
      self.assertLen(ports, 1, table)  # One task per node: the same port.
      port = ports.pop()
      ports_of_step[label] = port
      for procid, r in sorted(step.items()):
        self.assertEqual(r['cluster'], cluster, table)
        self.assertEqual(r['address'], '%s:%d' % (r['nodename'], port), table)
        self.assertEqual(r['nodename'], ['n9', 'n10'][procid], table)
        self.assertEqual(r['workers'], 2, table)
        # All 8 servers of the 4 steps were up at once before training.
        self.assertGreaterEqual(r['ready_seen'], peers, table)
      if label.startswith('reserved'):
        # The first port Slurm reserved for the step (all tasks see them).
        resv = {r['resv_ports'] for r in step.values()}
        self.assertLen(resv, 1, table)
        first = int(resv.pop().replace('-', ',').split(',')[0])
        self.assertEqual(port, first, table)
        self.assertTrue(12000 <= port <= 12999, table)
      else:
        self.assertTrue(20000 <= port < 32768, table)
      # Synchronous training: same losses and weights in both workers;
      # the loss goes down.
      self.assertEqual(step[0]['weights'], step[1]['weights'], table)
      losses = step[0]['losses']
      self.assertEqual(step[1]['losses'], losses, table)
      self.assertTrue(all(math.isfinite(v) for v in losses), table)
      self.assertLess(losses[-1], losses[0] / 2, table)
    # The steps shared nodes n9 and n10 at the same time, on four ports.
    self.assertLen(set(ports_of_step.values()), len(steps),
                   '%s\n%s' % (ports_of_step, table))
    self.assertEqual(self.lab.wait_until_idle(), [])

  def test_het_step_reserved_ports_are_reserved_on_every_node(self):
    """Each task's port must be one Slurm reserved on the task's node."""
    out = os.path.join(self.tmp, 'het-resv')
    os.makedirs(out)
    name = self.lab.job_name('het-resv')
    # The explain command gives each task's address; the tasks then keep
    # the step (and its reservations) until cancelled.
    task = ('{py} -m {module} --tf-config --port-base reserved '
            '> {out}/$SLURM_PROCID.json 2> {out}/$SLURM_PROCID.err; '
            'touch {out}/$SLURM_PROCID.done; sleep 60').format(
                out=out, py=self.lab.python,
                module='tf_slurm.explain')
    holder = self.lab.start(
        ['srun', '--time=3', '--job-name', name, '-w', 'n9', '-n1', ':',
         '-w', 'n10', '-n2', 'sh', '-c', task], job_name=name, cwd=self.tmp)
    try:
      deadline = time.monotonic() + 60
      while (not all(os.path.exists(os.path.join(out, '%d.done' % p))
                     for p in range(3)) and holder.poll() is None and
             time.monotonic() < deadline):
        time.sleep(0.1)
      # Slurm's own record of each component's step: its nodes and ports.
      shown = self.lab.client('scontrol', '-o', 'show', 'step')
    finally:
      self.lab.scancel('--name', name)
      result = holder.wait(timeout=30)
    reports = {}
    for procid in range(3):
      with open(os.path.join(out, '%d.err' % procid)) as f:
        error = f.read()
      with open(os.path.join(out, '%d.json' % procid)) as f:
        text = f.read()
      reports[procid] = (json.loads(text) if text.strip() else None, error)
    if all(config is None and 'heterogeneous' in error
           for config, error in reports.values()):
      return  # A clear refusal is a fix too.
    for procid, (config, error) in sorted(reports.items()):
      self.assertIsNotNone(config, 'rank %d: %s\n%s' % (procid, error,
                                                          result.describe()))
    reserved_on = {}  # node -> ports Slurm reserved there for this step
    for line in shown.stdout.splitlines():
      fields = dict(item.split('=', 1) for item in line.split()
                    if '=' in item)
      if fields.get('Name') != name:
        continue
      ports = set()
      for item in fields.get('ResvPorts', '').split(','):
        first, _, last = item.partition('-')
        if first.isdigit():
          ports.update(range(int(first), int(last or first) + 1))
      reserved_on[fields['NodeList']] = ports  # One node per component here.
    self.assertEqual(sorted(reserved_on), ['n10', 'n9'], shown.stdout)
    cluster = reports[0][0]['cluster']['worker']
    wrong = [a for a in cluster
             if int(a.split(':')[1]) not in reserved_on[a.split(':')[0]]]
    self.assertEqual(
        wrong, [], 'cluster %s; Slurm reserved %s' %
        (cluster, {n: sorted(p) for n, p in reserved_on.items()}))
    self.assertEqual(self.lab.wait_until_idle(), [])

  # ------------------------------------------------ explain and 'reserved'
  def run_inspect_step(self, label, srun_args, num_tasks,
                       hostlist_expansion='builtin'):
    out = os.path.join(self.tmp, 'reports')
    result = self.lab.srun(
        label, srun_args, INSPECT_TASK,
        ['--out', out, '--hostlist-expansion', hostlist_expansion],
        timeout=120, cwd=self.tmp)
    reports = step_checks.read_reports(out)
    self.assertEqual(result.returncode, 0, result.describe())
    self.assertEqual(sorted(reports), list(range(num_tasks)),
                     result.describe())
    for procid, r in sorted(reports.items()):
      self.assertNotIn('error', r, 'rank %s: %s' % (procid, r.get('error')))
      self.assertEqual(r['hostname'], r['nodename'])
    return reports

  def test_explain_command_in_gpu_step_matches_resolver_in_every_task(self):
    # Cyclic: ranks 0, 2 on n9 and 1, 3 on n10, each node's 2 GPUs split;
    # tasks numbered node by node (rank 1 is task 2). --resv-ports=0: Slurm
    # reserves no ports for this step.
    reports = self.run_inspect_step(
        'explain', ['-w', 'n9,n10', '-N2', '--ntasks-per-node=2', '-m',
                    'cyclic', '--gres=gpu:2', '--resv-ports=0'], 4)
    nodes = ['n9', 'n10', 'n9', 'n10']
    gpus = ['0', '0', '1', '1']
    cluster = {'worker': ['n9:8888', 'n9:8889', 'n10:8888', 'n10:8889']}
    task_ids = {0: 0, 1: 2, 2: 1, 3: 3}
    procid_of = {task: procid for procid, task in task_ids.items()}
    timings = []
    for procid, r in sorted(reports.items()):
      where = 'rank %s on %s' % (procid, r['nodename'])
      resolved = r['resolved']
      self.assertEqual(r['nodename'], nodes[procid], where)
      self.assertEqual(resolved['cluster'], cluster, where)
      self.assertEqual((resolved['task_type'], resolved['task_id']),
                       ('worker', task_ids[procid]), where)
      self.assertEqual(r['cvd_before'], '0,1', where)
      self.assertEqual(resolved['env_after']['CUDA_VISIBLE_DEVICES'],
                       gpus[procid], where)

      # --tf-config: what the resolver gives this task, before the
      # resolver ran and after it changed CUDA_VISIBLE_DEVICES.
      for key, run in (('before', r['explain']['tf_config']),
                       ('after', r['explain_after'])):
        self.assertEqual(run['status'], 0, '%s %s: %s' % (where, key, run))
        self.assertEqual(json.loads(run['stdout']), _tf_config(resolved),
                         '%s (%s the resolver)' % (where, key))

      # --all: every rank on the node Slurm ran it on (as that task says),
      # with its address there, its role, and the GPUs a task can know.
      run = r['explain']['all']
      self.assertEqual(run['status'], 0, '%s: %s' % (where, run))
      rows = _explain_rows(run['stdout'])
      self.assertEqual(sorted(rows), list(range(4)), run['stdout'])
      for task, row in sorted(rows.items()):
        other = reports[procid_of[task]]
        self.assertEqual(row['node'], other['nodename'],
                         '%s lists task %s:\n%s' % (where, task,
                                                    run['stdout']))
        self.assertEqual(row['local'], int(other['localid']), run['stdout'])
        self.assertEqual(row['address'], _flat(cluster)[task], run['stdout'])
        self.assertEqual(row['task'], 'worker:%d' % task, run['stdout'])
        self.assertEqual(row['this'], task == task_ids[procid],
                         run['stdout'])
        # Its own GPUs and those of its node's tasks; '-' for other nodes.
        same_node = other['nodename'] == r['nodename']
        self.assertEqual(
            row['gpus'],
            _gpus_column(other['resolved']['env_after']['CUDA_VISIBLE_DEVICES']
                         if same_node else None), run['stdout'])

      # The hostlist modes agree; 'builtin' needs no scontrol, 'check'
      # does.
      expansions = r['expansions']
      for mode in ('builtin', 'scontrol', 'check'):
        self.assertEqual(expansions[mode].get('cluster'), cluster,
                         '%s, %s: %s' % (where, mode, expansions[mode]))
      self.assertIsNone(expansions['builtin_without_scontrol']['error'],
                        where)
      self.assertIn('cannot run: scontrol is not on PATH',
                    expansions['check_without_scontrol']['error']['message'],
                    where)

      # In this process, the same command prints the same and changes no
      # GPU variable.
      in_process = r['explain_in_process']
      self.assertEqual(in_process['status'], 0, where)
      self.assertEqual(in_process['stdout'], run['stdout'], where)
      self.assertEqual(in_process['env_after'], in_process['env_before'],
                       where)
      self.assertEqual(in_process['env_before'],
                       {'CUDA_VISIBLE_DEVICES': '0,1',
                        'GPU_DEVICE_ORDINAL': '0,1'}, where)

      # No ports reserved: port_base='reserved' fails with the clear error.
      self.assertIsNone(r['resv_ports'], where)
      self.assertEqual(r['reserved'].get('error', {}).get('type'),
                       'RuntimeError', '%s: %s' % (where, r['reserved']))
      message = r['reserved']['error']['message']
      self.assertIn("port_base='reserved' needs SLURM_STEP_RESV_PORTS",
                    message)
      self.assertIn('--resv-ports', message)
      timings.append('rank %s: --tf-config %.2f s, --all %.2f s, after the '
                     'resolver %.2f s, in process %.3f s' % (
                         procid, r['explain']['tf_config']['seconds'],
                         run['seconds'], r['explain_after']['seconds'],
                         in_process['seconds']))
    # Informational: the explain command's wall time inside a task (a child
    # Python; 4 tasks start at once on the lab's shared CPUs).
    print('explain command wall time per call:\n  ' + '\n  '.join(timings))
    self.assertEqual(self.lab.wait_until_idle(), [])

  # ------------------------------------------------------ hostlist 'check'
  def test_hostlist_check_in_mixed_partition_step_agrees_with_scontrol(self):
    reports = self.run_inspect_step(
        'hostlist-check', ['-p', 'mixed', '-N6', '-n6'], 6,
        hostlist_expansion='check')
    nodes = ['c09', 'c10', 'c11', 'gpu1-ib', 'gpu2-ib', 'rack1-node01']
    cluster = {'worker': ['%s:8888' % node for node in nodes]}
    for procid, r in sorted(reports.items()):
      where = 'rank %s on %s' % (procid, r['nodename'])
      self.assertEqual(r['step_nodelist'],
                       'c[09-11],gpu1-ib,gpu2-ib,rack1-node01', where)
      self.assertEqual(r['nodename'], nodes[procid], where)
      # The companion's SlurmClusterResolver(hostlist_expansion='check')
      # resolves.
      resolved = r['resolved']
      self.assertEqual(resolved['cluster'], cluster, where)
      self.assertEqual((resolved['task_type'], resolved['task_id']),
                       ('worker', procid), where)
      # The three modes agree; 'scontrol' equals 'builtin'.
      expansions = r['expansions']
      for mode in ('builtin', 'scontrol', 'check'):
        self.assertEqual(expansions[mode].get('cluster'), cluster,
                         '%s, %s: %s' % (where, mode, expansions[mode]))
      # 'check' really ran scontrol: without it on PATH it fails.
      error = expansions['check_without_scontrol']['error']
      self.assertIsNotNone(error, '%s: check succeeded' % where)
      self.assertIn('cannot run: scontrol is not on PATH', error['message'],
                    where)
      # The explain command with --hostlist-expansion check agrees.
      run = r['explain']['tf_config']
      self.assertEqual(run['status'], 0, '%s: %s' % (where, run))
      self.assertEqual(json.loads(run['stdout']), _tf_config(resolved), where)
      # With MpiParams=ports (the lab's slurm.conf), Slurm (22.05 and 24.11)
      # reserves ports for a step even without --resv-ports: 'reserved'
      # takes the first of them on every node.
      self.assertIsNotNone(r['resv_ports'], where)
      first = int(r['resv_ports'].replace('-', ',').split(',')[0])
      self.assertEqual(r['reserved'].get('cluster'),
                       {'worker': ['%s:%d' % (n, first) for n in nodes]},
                       '%s: %s' % (where, r['reserved']))
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
