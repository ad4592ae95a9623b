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
"""The companion's resolution of a Slurm step: jobs, ports, hosts, GPUs.

`resolve` maps the companion's model of the step (`tf_slurm.slurm_step`) to
TensorFlow with the companion's options (`het_jobs`, `node_host`,
`port_base='reserved'|'derived'`, GPUs shared by the tasks of a node, GPUs
withheld where slurm.conf says Slurm manages them); the companion's
resolver hands the result to the core through TensorFlow's hooks.
"""

import dataclasses
import os
import re
from typing import Mapping, Sequence, Tuple

from tensorflow.python.platform import tf_logging as logging
from tf_slurm import slurm_step
from tf_slurm import util

# nvidia-smi's exit status when it finds no GPU ("No devices were found").
_NVIDIA_SMI_FOUND_NOTHING = 6
_JOB_NAME_RE = re.compile(r'[A-Za-z][A-Za-z0-9_]*')
# A host of an address: a DNS name or IPv4 address, or an IPv6 address in
# brackets.
_HOST_RE = re.compile(r'[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]')
# port_base='derived' picks a block of ports in [_DERIVED_PORTS_START,
# _DERIVED_PORTS_END) from the job and step ids.
# Below Linux's default ephemeral range (32768-60999), so that outgoing
# connections do not hold them.
_DERIVED_PORTS_START = 20000
_DERIVED_PORTS_END = 32768
_DERIVED_PORTS_BLOCK = 64


@dataclasses.dataclass(frozen=True)
class Resolution:
  """What the resolver decided: the cluster, this task's role and GPUs.

  Attributes:
    cluster: Job name -> task addresses (`host:port`), jobs in sorted order.
    task_type: This task's job name.
    task_id: This task's index in its job.
    gpus: The GPUs of this task's node and of this task
      (`slurm_step.GpuPlan`).
    addresses: The address of every task of the step, by rank.
  """
  cluster: Tuple[Tuple[str, Tuple[str, ...]], ...]
  task_type: str
  task_id: int
  gpus: slurm_step.GpuPlan
  addresses: Tuple[str, ...]


def check_text(name, value, optional=False):
  """Checks that argument `name` is a string (or None, if `optional`)."""
  if not (isinstance(value, str) or (optional and value is None)):
    raise ValueError('%s=%r: expected a string%s' %
                     (name, value, ' or None' if optional else ''))


def _check_job_name(argument, name):
  if not isinstance(name, str) or not _JOB_NAME_RE.fullmatch(name):
    raise ValueError('%s: job name %r is not a valid TensorFlow job name (a '
                     'letter, then letters, digits or _)' % (argument, name))


def _check_jobs(jobs):
  if not isinstance(jobs, Mapping) or not jobs:
    raise ValueError('jobs=%r: expected a non-empty dict of job name -> '
                     'number of tasks' % (jobs,))
  for name, count in jobs.items():
    _check_job_name('jobs', name)
    slurm_step.check_int('jobs[%r]' % name, count, 0, slurm_step.MAX_TASKS)


def _het_job_runs(step, het_jobs):
  """The jobs of a heterogeneous step's ranks, as (job, count) runs."""
  if isinstance(het_jobs, str) or not isinstance(het_jobs, Sequence):
    raise ValueError('het_jobs=%r: expected a list of job names, one per '
                     'heterogeneous component' % (het_jobs,))
  for name in het_jobs:
    _check_job_name('het_jobs', name)
  if not step.heterogeneous:
    raise RuntimeError(
        'het_jobs=%r needs a heterogeneous step (srun A : B, srun '
        '--het-group=0,1); this step runs one component, or SLURM_HET_SIZE '
        'is not set' % (list(het_jobs),))
  if max(step.node_components) >= len(het_jobs):
    raise ValueError('het_jobs=%r names %d components, but the step has tasks '
                     'of component %d' % (list(het_jobs), len(het_jobs),
                                          max(step.node_components)))
  # Ranks are numbered node by node in a heterogeneous step (slurm_step).
  job_runs = []
  for node, component in enumerate(step.node_components):
    name, count = het_jobs[component], step.tasks_per_node[node]
    if job_runs and job_runs[-1][0] == name:
      count += job_runs.pop()[1]
    job_runs.append((name, count))
  return job_runs


def _task_jobs(step, jobs, het_jobs):
  """Returns the job of every task of the step, by rank, as runs.

  Without `het_jobs`, ranks go to jobs in sorted job-name order, as
  TensorFlow always did. With it, every task of heterogeneous component c
  belongs to job `het_jobs[c]`.

  Returns:
    (job name, number of consecutive ranks in it) pairs, in rank order; no
    number is 0.

  Raises:
    RuntimeError: If `jobs` asks for other task counts than Slurm assigned.
    ValueError: If `jobs` or `het_jobs` is malformed.
  """
  if jobs is not None:
    _check_jobs(jobs)
  if het_jobs is None:
    jobs = {'worker': step.num_tasks} if jobs is None else jobs
    if sum(jobs.values()) != step.num_tasks:
      raise RuntimeError(
          'Requested %d tasks (jobs=%r) but Slurm assigned %d tasks to this '
          'step (%s)' % (sum(jobs.values()), dict(jobs), step.num_tasks,
                         step.counts_source))
    return [(name, jobs[name]) for name in sorted(jobs) if jobs[name]]
  job_runs = _het_job_runs(step, het_jobs)
  from_slurm = {}
  for name, count in job_runs:
    from_slurm[name] = from_slurm.get(name, 0) + count
  if jobs is not None and {k: v for k, v in jobs.items() if v} != from_slurm:
    raise RuntimeError(
        'jobs=%r does not match the heterogeneous components: het_jobs=%r '
        'gives %r (%s)' % (dict(jobs), list(het_jobs), from_slurm,
                           step.counts_source))
  return job_runs


def _reserved_ports(step, needed):
  """The ports `srun --resv-ports` reserved, for `needed` tasks a node."""
  reserved = step.reserved_ports
  if step.launcher is not None:
    raise ValueError(
        "port_base='reserved' under %s: SLURM_STEP_RESV_PORTS there are the "
        "ports of the launcher's daemon step, not of the ranks; pass a port "
        'number, or launch with srun --resv-ports.' % step.launcher)
  if step.heterogeneous:
    raise RuntimeError(
        "port_base='reserved' cannot work in a heterogeneous step: Slurm "
        'reserves each component\'s ports on its own nodes but gives every '
        'task all of them in SLURM_STEP_RESV_PORTS=%s; use '
        "port_base='derived' or a fixed port_base" %
        ','.join(map(str, reserved or ())))
  if reserved is None:
    raise RuntimeError("port_base='reserved' needs SLURM_STEP_RESV_PORTS: "
                       'launch the step with srun --resv-ports=N (Slurm '
                       'reserves ports from MpiParams=ports=LO-HI in '
                       'slurm.conf)')
  if len(reserved) < needed:
    raise RuntimeError(
        'SLURM_STEP_RESV_PORTS has %d ports %s, but the busiest node runs '
        '%d tasks' % (len(reserved), list(reserved), needed))
  return list(reserved[:needed])


def _derived_port_base(step, needed):
  """The first port of the step's block in [20000, 32768), from its ids."""
  block = -(-needed // _DERIVED_PORTS_BLOCK) * _DERIVED_PORTS_BLOCK
  blocks = (_DERIVED_PORTS_END - _DERIVED_PORTS_START) // block
  if not blocks:
    raise RuntimeError("port_base='derived': %d tasks on the busiest node "
                       'need more ports than [%d, %d) holds' %
                       (needed, _DERIVED_PORTS_START, _DERIVED_PORTS_END))
  job_id, step_id = step.job_step
  return _DERIVED_PORTS_START + block * ((job_id * 7919 + step_id) % blocks)


def task_ports(step, port_base):
  """Returns the port of a node's i-th task, for i up to the busiest node's.

  A task's port is port_base + its local index (its index among the step's
  tasks on its node).

  Args:
    step: The `slurm_step.SlurmStep`.
    port_base: As `SlurmClusterResolver`'s argument.

  Raises:
    ValueError: If `port_base` is malformed or a port falls outside 1..65535,
      or two tasks of a node would get the same port.
    RuntimeError: If Slurm reserved too few ports.
  """
  needed = step.busiest
  if port_base == 'reserved':
    ports = _reserved_ports(step, needed)
  else:
    first = _derived_port_base(step, needed) if port_base == 'derived' else (
        port_base)
    if isinstance(first, bool) or not isinstance(first, int):
      raise ValueError("port_base=%r: expected an integer port, 'reserved' or "
                       "'derived'" % (port_base,))
    last = first + needed - 1
    if first < 1 or last > slurm_step.MAX_PORT:
      raise ValueError('port_base=%d: tasks on the busiest node need ports '
                       '%d..%d, which must lie within 1..%d' %
                       (first, first, last, slurm_step.MAX_PORT))
    ports = list(range(first, last + 1))
  return ports


def _node_host_function(node_host):
  """Returns node name -> host for the `node_host` argument."""
  if callable(node_host):
    return node_host
  if not isinstance(node_host, str) or '{node}' not in node_host:
    raise ValueError("node_host=%r: expected a format with '{node}', such as "
                     "'{node}-ib' or '{node}.ib.example.org', or a callable "
                     'node name -> host' % (node_host,))
  try:
    node_host.format(node='n1')
  except (IndexError, KeyError, ValueError) as e:
    raise ValueError("node_host=%r: not a format of '{node}' alone (%s: %s)" %
                     (node_host, type(e).__name__, e)) from None
  return lambda node: node_host.format(node=node)


def node_hosts(step, node_host):
  """Returns the host in the addresses of each node's tasks.

  Args:
    step: The `slurm_step.SlurmStep`.
    node_host: None (the node name), a format of '{node}' or a callable
      node name -> host.

  Raises:
    ValueError: If `node_host` is malformed, gives something that is not a
      host, or gives two nodes the same host.
  """
  if node_host is None:
    return step.nodes
  host_of = _node_host_function(node_host)
  hosts = {}
  for node in step.nodes:
    host = host_of(node)
    if not isinstance(host, str) or not _HOST_RE.fullmatch(host):
      raise ValueError('node_host=%r maps node %r to %r; expected a host name '
                       'or address' % (node_host, node, host))
    if host in hosts:
      raise ValueError('node_host=%r maps nodes %r and %r to the same host %r'
                       % (node_host, hosts[host], node, host))
    hosts[host] = node
  return tuple(hosts)


def _addresses(hosts, step, ports):
  """Returns the `host:port` of every task, by rank, as a tuple."""
  port_texts = [':%d' % port for port in ports]
  addresses = [hosts[node] + port_texts[local]
               for node, local in zip(step.rank_nodes, step.rank_locals)]
  return tuple(addresses)


def _assign_jobs(job_runs, addresses, task_index):
  """Groups the task addresses by job; finds this task's job and index.

  Args:
    job_runs: The job of every task, as runs (`_task_jobs`).
    addresses: The address of every task, by rank, as a tuple.
    task_index: This task's rank.

  Returns:
    (cluster, task type, task id) as in `Resolution`.
  """
  cluster = {}
  task_type = task_id = None
  first = 0
  for name, count in job_runs:
    job = cluster.get(name, ())
    if first <= task_index < first + count:
      task_type, task_id = name, len(job) + task_index - first
    cluster[name] = job + addresses[first:first + count]
    first += count
  return (tuple((name, cluster[name]) for name in sorted(cluster)), task_type,
          task_id)


def _log_gpu_plan(step, plan, defaults):
  """Says what the GPU plan withholds, shares or leaves unused, once a task."""
  slurm = plan.slurm_gpus
  node = step.place[0]
  gpus, tasks = len(plan.node_gpus or ()), step.tasks_per_node[node]
  nodes = len(step.component_nodes(node))
  if slurm.withheld:
    # The job's GPUs that its step lacks are a mistake to warn of; slurm.conf's
    # GresTypes=gpu holds on every node, those of CPU-only steps too.
    level = logging.WARN if slurm.source == 'SLURM_JOB_GPUS' else logging.INFO
    note = ('Slurm manages the GPUs (%s) and gave this step none on this '
            "node: this task uses no GPU (CUDA_VISIBLE_DEVICES='')" %
            slurm.source)
  elif plan.shared or plan.sharers > 1:
    level = logging.WARN if plan.shared else logging.INFO
    note = ("this task's GPU is used by %d task(s) of this node (%s)%s" %
            (plan.sharers, 'SLURMD_TRES_BIND gpu:' + slurm.bind
             if slurm.bound_per_task else '%d GPUs for the %d tasks of the '
             'busiest node' % (gpus, step.busiest_of_component(node)),
             ', TF_FORCE_GPU_ALLOW_GROWTH=true unless set'
             if plan.sharers > 1 else ''))
  elif (defaults and slurm.step_total is not None and nodes > 1 and
        slurm.step_total != gpus * nodes):
    level = logging.WARN
    note = ('Slurm spread SLURM_GPUS=%d GPUs over %d nodes and gave this one '
            '%d: workers elsewhere may use other numbers of GPUs' %
            (slurm.step_total, nodes, gpus))
  elif gpus > plan.per_task * tasks:
    level = logging.INFO if plan.per_task else logging.WARN
    note = ('each task uses %d GPU(s): %d of this node\'s %d GPUs stay unused'
            % (plan.per_task, gpus - plan.per_task * tasks, gpus))
  else:
    return
  logging.log(level, '%s. Ask srun for other GPUs or pass gpus_per_task to '
              'choose otherwise.', note)


def resolve(step, jobs, port_base, gpus_per_node, gpus_per_task,
            unnamed_gpus, het_jobs=None, node_host=None):
  """Maps a Slurm step to TensorFlow. Pure apart from `unnamed_gpus`.

  Args:
    step: The `slurm_step.SlurmStep`.
    jobs: Job name -> number of tasks, or None for one 'worker' per task.
    port_base: As `SlurmClusterResolver`'s argument.
    gpus_per_node: The user's value or None.
    gpus_per_task: The user's value or None.
    unnamed_gpus: Returns a `slurm_step.SlurmGpus` of this node's GPUs where
      no variable names any (`slurm_step.plan_gpus`); called only then.
    het_jobs: The job of each heterogeneous component, or None.
    node_host: As `SlurmClusterResolver`'s argument.

  Returns:
    A `Resolution`.

  Raises:
    RuntimeError: If the arguments ask for more than Slurm gave.
    ValueError: If an argument is malformed.
  """
  for name, value in (('gpus_per_node', gpus_per_node),
                      ('gpus_per_task', gpus_per_task)):
    slurm_step.check_int(name, value, 0, slurm_step.MAX_GPUS_PER_NODE,
                         optional=True)
  job_runs = _task_jobs(step, jobs, het_jobs)
  ports = task_ports(step, port_base)
  # Host names are distinct (`slurm_step` checks them), so distinct ports per
  # node make every address distinct.
  if len(set(ports)) != len(ports):
    raise ValueError(
        'port_base=%r gives the tasks of one node the ports %s, some of them '
        'the same%s' % (port_base, util.abbreviate(ports),
                        ' (SLURM_STEP_RESV_PORTS)' if port_base == 'reserved'
                        else ''))
  addresses = _addresses(node_hosts(step, node_host), step, ports)
  cluster, task_type, task_id = _assign_jobs(job_runs, addresses,
                                             step.task_index)
  gpus = slurm_step.plan_gpus(step, gpus_per_node, gpus_per_task,
                              unnamed_gpus)
  _log_gpu_plan(step, gpus, gpus_per_node is None and gpus_per_task is None)
  return Resolution(cluster, task_type, task_id, gpus, addresses)


def _gres_types(path):
  """The GRES types the slurm.conf at `path` lists; None if unreadable.

  Unreadable is also what is not a regular file of at most
  `util.MAX_READ_BYTES` (`util.read_regular_file`).
  """
  if path is None:
    return None
  try:
    data = util.read_regular_file(path,
                                            util.MAX_READ_BYTES)
  except (OSError, ValueError):
    return None
  return slurm_step.gres_types(data.decode('utf-8', errors='replace'))


def unnamed_gpus(environ=os.environ):
  """This node's GPUs where no variable names any, as a `SlurmGpus`.

  A step on a node whose GPUs Slurm manages (slurm.conf's GresTypes lists
  gpu) has none of them then: other jobs may hold them. Only where no
  slurm.conf can be read or it lists no gpu GRES does nvidia-smi count them.

  Args:
    environ: The environment that names slurm.conf (`SLURM_CONF`).
  """
  path = util.slurm_conf_path(environ)
  types = _gres_types(path)
  if types and 'gpu' in types:
    return slurm_step.SlurmGpus((), path, withheld=True)
  count = _count_nvidia_gpus()
  if count and types is None:
    logging.warning(
        'No GPU variable is set and no slurm.conf (SLURM_CONF, or Slurm\'s '
        'usual places) can be read to tell whether Slurm manages GPUs: using '
        'the %d GPUs that nvidia-smi lists. Pass gpus_per_node=0 if Slurm '
        'gives them to other jobs.', count)
  return slurm_step.SlurmGpus(
      tuple(str(gpu) for gpu in range(count)) if count else None,
      'nvidia-smi --list-gpus')


def _count_nvidia_gpus():
  """Counts this node's GPUs with `nvidia-smi --list-gpus`; 0 without it.

  Raises:
    RuntimeError: If nvidia-smi fails (`util.run_command`) with
      another exit status than for finding no GPU, or lists more than
      `slurm_step.MAX_GPUS_PER_NODE`.
  """
  command = ['nvidia-smi', '--list-gpus']
  try:
    printed = util.run_command(
        command, missing_ok=True, statuses=(0, _NVIDIA_SMI_FOUND_NOTHING))
  except RuntimeError as e:
    raise RuntimeError('Could not count the GPUs: %s; pass gpus_per_node to '
                       'skip it' % e) from None
  if printed is None:  # No nvidia-smi.
    return 0
  count = sum(line.startswith('GPU ') for line in printed[0].splitlines())
  if count > slurm_step.MAX_GPUS_PER_NODE:
    raise RuntimeError(
        '`%s` lists %d GPUs, more than a node can have (%d); pass '
        'gpus_per_node to skip it' % (' '.join(command), count,
                                      slurm_step.MAX_GPUS_PER_NODE))
  return count


def set_cuda_visible_devices(gpus):
  """Sets CUDA_VISIBLE_DEVICES to this task's GPUs.

  A task that shares its GPU with other tasks of its node also sets
  TF_FORCE_GPU_ALLOW_GROWTH=true, unless the user set it, so that none of
  them reserves all of the GPU's memory.

  Args:
    gpus: The task's `slurm_step.GpuPlan`.
  """
  if gpus.task_gpus is None:
    return
  if gpus.sharers > 1:
    os.environ.setdefault('TF_FORCE_GPU_ALLOW_GROWTH', 'true')
  os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(gpus.task_gpus)
