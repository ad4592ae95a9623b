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
"""The companion's model of a Slurm job step: where every task runs, its GPUs.

`read_step` reads the step of this task from Slurm's environment variables
into a frozen `SlurmStep`: the step's nodes in node list order, how many
tasks each runs, its tasks numbered node by node as the core numbers them
(whatever Slurm's distribution), the heterogeneous component of every node,
what Slurm says of this task's GPUs, and the ports it reserved. The task's
place is checked against what it can see (`SLURMD_NODENAME`,
`SLURM_LOCALID`, `SLURM_GTIDS`). Nothing here depends on TensorFlow; the
environment mapping is the only input.
"""

import collections
import dataclasses
import functools
import re
from typing import Mapping, Optional, Tuple

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_step as core_step
from tf_slurm import slurm_launcher
from tf_slurm import util

# The variables `read_step` reads: an srun step's, then those of the MPI
# launchers (slurm_launcher); `<n>` stands for a heterogeneous job
# component's number (0, 1, ...).
_SRUN_VARIABLES = (
    'SLURM_PROCID', 'SLURM_STEP_NODELIST', 'SLURM_STEP_TASKS_PER_NODE',
    'SLURM_STEP_NUM_TASKS', 'SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE',
    'SLURM_NTASKS', 'SLURM_HET_SIZE', 'SLURM_PACK_SIZE',
    'SLURM_JOB_NODELIST_HET_GROUP_<n>', 'SLURM_JOB_NODELIST_PACK_GROUP_<n>',
    'SLURMD_NODENAME', 'SLURM_LOCALID', 'SLURM_GTIDS',
    'CUDA_VISIBLE_DEVICES', 'SLURM_STEP_GPUS',
    'SLURM_JOB_GPUS', 'SLURM_GPUS_ON_NODE', 'SLURM_GPUS', 'SLURMD_TRES_BIND',
    'SLURM_STEP_RESV_PORTS', 'SLURM_JOB_ID', 'SLURM_STEP_ID')
VARIABLES = _SRUN_VARIABLES + slurm_launcher.VARIABLES

_NO_GPUS = ('', 'NoDevFiles')
# Upper bounds on what a step may hold; larger values are refused before
# anything is allocated for them.
# Tasks of a step: as many as a hostlist may name nodes.
MAX_TASKS = slurm_hostlist.MAX_HOSTS
# Tasks of one node: slurm.conf's MaxTasksPerNode may not exceed 65533.
MAX_TASKS_PER_NODE = 65533
# TCP ports.
MAX_PORT = 65535
# GPUs of one node, or of one task (MIG instances included).
MAX_GPUS_PER_NODE = 1024
# Slurm's job and step ids are 32-bit.
_MAX_ID = 2**32 - 1
_PORT_RANGE_RE = re.compile(r'([0-9]{1,5})(?:-([0-9]{1,5}))?')
# Device ids in CUDA_VISIBLE_DEVICES and co.: an index or a UUID such as
# GPU-5c0b9c4e-... or MIG-GPU-.../1/0.
_GPU_ID_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.:/-]*')
# An item of a map_gpu or mask_gpu list: [0x]DIGITS[*COUNT].
_BIND_ITEM_RE = re.compile(r'(0[xX])?([0-9a-fA-F]{1,256})(?:\*([0-9]{1,5}))?')
# GPU bindings that give each task its own GPUs (`--gpus-per-task`,
# `--gpu-bind=single:N|map_gpu:..|mask_gpu:..`, `--ntasks-per-gpu`).
_PER_TASK_BINDINGS = ('per_task', 'single', 'map_gpu', 'mask_gpu')


def _is_int_in(value, minimum, maximum):
  """Whether `value` is an int (not a bool) in minimum..maximum."""
  return (isinstance(value, int) and not isinstance(value, bool) and
          minimum <= value <= maximum)


def check_int(name, value, minimum, maximum, optional=False):
  """Returns `value` if it is an int (not a bool) in minimum..maximum.

  Args:
    name: The argument's name, for the error.
    value: Its value.
    minimum: The smallest valid value.
    maximum: The largest valid value.
    optional: Whether None is valid too.

  Raises:
    ValueError: Naming `name` and the value, if it is not.
  """
  if value is None and optional:
    return value
  if not _is_int_in(value, minimum, maximum):
    raise ValueError('%s=%r: expected %san integer in %d..%d' %
                     (name, value, 'None or ' if optional else '', minimum,
                      maximum))
  return value


@dataclasses.dataclass(frozen=True)
class SlurmGpus:
  """What Slurm says of the GPUs of this task.

  Attributes:
    visible: The GPU ids this task may use, as `CUDA_VISIBLE_DEVICES` names
      them, or None when nothing says which GPUs exist.
    source: The variable `visible` came from.
    bound_per_task: Whether Slurm already gave this task its own GPUs
      (`--gpus-per-task`, `--gpu-bind`), so that they are not to be split.
    on_node: GPUs Slurm gave this node (`SLURM_GPUS_ON_NODE`), if known.
    step_total: GPUs of the whole job when it asked for a total
      (`--gpus=N`: `SLURM_GPUS`), which Slurm may spread unevenly over the
      nodes; None otherwise.
    text: The value of `source`, as it stands.
    withheld: Whether Slurm manages GPUs of this node (the job's, or
      slurm.conf's GresTypes lists gpu) but gave this step none (`visible`
      is then `()`).
    bind: Slurm's GPU binding of the step's tasks (`SLURMD_TRES_BIND`
      without its `gpu:`), e.g. 'single:2', or ''.
  """
  visible: Optional[Tuple[str, ...]] = None
  source: str = 'CUDA_VISIBLE_DEVICES'
  bound_per_task: bool = False
  on_node: Optional[int] = None
  step_total: Optional[int] = None
  text: Optional[str] = None
  withheld: bool = False
  bind: str = ''

  @property
  def emptied(self):
    """Whether `CUDA_VISIBLE_DEVICES` is set to ''.

    Slurm never writes that (it writes `NoDevFiles`): the user hid the GPUs,
    and a GPU count the user passes explicitly wins over it, as in
    TensorFlow.
    """
    return self.source == 'CUDA_VISIBLE_DEVICES' and self.text == ''


@dataclasses.dataclass(frozen=True)
class SlurmStep:
  """Where every task of a Slurm step runs, and what this task may use.

  Attributes:
    nodes: The step's node names, in node list order.
    tasks_per_node: The number of tasks on each of `nodes`.
    rank_nodes: For every task index, the index into `nodes` of its node.
    task_index: This process's index among the step's tasks, numbered node
      by node (`_node_major_index`); `SLURM_PROCID` in block steps in list
      order.
    gpus: What Slurm says of this task's GPUs (`SlurmGpus`).
    node_components: For every node, its heterogeneous job component
      (`srun A : B`), or None if the step is not heterogeneous.
    counts_source: Where the tasks per node came from, for error messages.
    reserved_ports: The ports Slurm reserved for the step on every node
      (`srun --resv-ports`: `SLURM_STEP_RESV_PORTS`), or None.
    job_step: (`SLURM_JOB_ID`, `SLURM_STEP_ID`) as ints, 0 where unset.
    launcher: The MPI launcher that placed the ranks (`mpirun`,
      `mpiexec.hydra`, which `read_step` refuses; a reader of their launches
      may model them), or None for srun.
  """
  nodes: Tuple[str, ...]
  tasks_per_node: Tuple[int, ...]
  rank_nodes: Tuple[int, ...]
  task_index: int
  gpus: SlurmGpus = SlurmGpus()
  node_components: Optional[Tuple[int, ...]] = None
  counts_source: str = ''
  reserved_ports: Optional[Tuple[int, ...]] = None
  job_step: Tuple[int, int] = (0, 0)
  launcher: Optional[str] = None

  @property
  def num_tasks(self):
    return len(self.rank_nodes)

  @functools.cached_property
  def busiest(self):
    """The number of tasks on the busiest node."""
    return max(self.tasks_per_node, default=0)

  @functools.cached_property
  def rank_locals(self):
    """For every task index, its local index on its node (`SLURM_LOCALID`)."""
    return local_indices(self.rank_nodes, len(self.nodes))

  @property
  def heterogeneous(self):
    return self.node_components is not None

  @property
  def place(self):
    """(node index, local index) of this task."""
    return self.place_of(self.task_index)

  def place_of(self, rank):
    """(node index, local index) of rank `rank`."""
    return self.rank_nodes[rank], self.rank_locals[rank]

  def node_ranks(self, node):
    """Returns the ranks of the tasks on node index `node`, in order."""
    return [rank for rank, other in enumerate(self.rank_nodes)
            if other == node]

  def busiest_of_component(self, node):
    """Tasks on the busiest node of `node`'s heterogeneous component.

    Outside heterogeneous steps, on the busiest node of the step.
    """
    if not self.heterogeneous:
      return self.busiest
    return max(self.tasks_per_node[other]
               for other in self.component_nodes(node))

  def component_nodes(self, node):
    """Returns the indices of the nodes of `node`'s heterogeneous component.

    Outside heterogeneous steps, those of every node.
    """
    if not self.heterogeneous:
      return list(range(len(self.nodes)))
    component = self.node_components[node]
    return [other for other, other_component in enumerate(self.node_components)
            if other_component == component]


def deal_ranks(tasks_per_node, chunk=None):
  """Returns the node index of every rank, as Slurm deals the ranks.

  Ranks are dealt to the nodes in turns: in each turn every node that still
  has tasks takes its next `chunk` of them (fewer if it has fewer left), one
  node after the other. Cyclic takes one task per turn, plane N takes N, and
  block (`chunk` None) is one turn in which every node takes all of its
  tasks.

  Args:
    tasks_per_node: The number of tasks of each node, in node order.
    chunk: Tasks a node takes per turn, or None for block.

  Returns:
    `SlurmStep.rank_nodes`: for every rank, the index of its node.
  """
  busiest = max(tasks_per_node, default=0)
  chunk = chunk or max(busiest, 1)
  rank_nodes = []
  for first in range(0, busiest, chunk):
    for node, count in enumerate(tasks_per_node):
      if count > first:
        rank_nodes += [node] * (min(count, first + chunk) - first)
  return tuple(rank_nodes)


def local_indices(rank_nodes, num_nodes):
  """Returns the local index of every rank on its node, from its node."""
  taken = [0] * num_nodes
  rank_locals = []
  for node in rank_nodes:
    rank_locals.append(taken[node])
    taken[node] += 1
  return tuple(rank_locals)


@dataclasses.dataclass(frozen=True)
class _StepVariables:
  """The raw Slurm variables that describe a step, with their names."""
  nodelist_var: str
  tasks_per_node_var: str
  num_tasks_var: str
  is_batch: bool


_STEP_VARIABLES = _StepVariables(
    'SLURM_STEP_NODELIST', 'SLURM_STEP_TASKS_PER_NODE', 'SLURM_STEP_NUM_TASKS',
    is_batch=False)
_JOB_VARIABLES = _StepVariables(
    'SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE', 'SLURM_NTASKS',
    is_batch=True)


def _require(environ, name, hint=''):
  """Returns `environ[name]`; a RuntimeError names it, and `hint`, if unset."""
  try:
    return environ[name]
  except KeyError:
    raise RuntimeError('%s is not set: not running inside a Slurm task?%s' %
                       (name, hint)) from None


def _het_components(environ, nodes, expand):
  """Returns the component of each node of a heterogeneous step, or None.

  In a heterogeneous step (`srun A : B`, `srun --het-group=0,1`),
  `SLURM_STEP_NODELIST` is the merged, name-sorted list, while ranks run over
  the components in order, and `SLURM_NODEID` follows component order too.
  Every step of a heterogeneous allocation (`salloc A : B`, `#SBATCH
  hetjob`) carries the allocation's `SLURM_HET_SIZE` and each component's
  nodes in `SLURM_JOB_NODELIST_HET_GROUP_<n>` (also `..._PACK_GROUP_<n>`),
  also a step that runs one component only (a plain `srun` runs component
  0, `srun --het-group=1` component 1). Components never share a node
  (Slurm refuses it), so the components a step runs are those of its nodes;
  they are numbered 0, 1, ... in the allocation's order, as Slurm numbers
  the step's ranks. A step of one component is an ordinary step.

  Returns:
    The step's component of each of `nodes`, or None when the step runs
    one component or the job is not heterogeneous.

  Raises:
    RuntimeError: If a component's node list is missing, or the lists leave
      a node of the step out or name a node twice.
  """
  size_var = next((name for name in ('SLURM_HET_SIZE', 'SLURM_PACK_SIZE')
                   if name in environ), None)
  if size_var is None:
    return None
  # Components share no node: there are at most as many as a hostlist may
  # name nodes.
  size = util.parse_int(size_var, environ[size_var], 1,
                                  slurm_hostlist.MAX_HOSTS)
  read = []
  component_of = {}
  repeated = []
  for component in range(size):
    names = ['SLURM_JOB_NODELIST_%s_%d' % (kind, component)
             for kind in ('HET_GROUP', 'PACK_GROUP')]
    name = next((name for name in names if name in environ), None)
    if name is None:
      raise RuntimeError('%s is not set (nor %s, its Slurm 22.05 name) in a '
                         'heterogeneous job (%s=%d): the nodes of component '
                         '%d are unknown' %
                         (names[0], names[1], size_var, size, component))
    read.append('%s=%r' % (name, environ[name]))
    for node in _parse_variable(name, environ[name], expand):
      if node in component_of:
        repeated.append(node)
      component_of[node] = component
  if repeated:
    raise RuntimeError(
        'The node lists of the heterogeneous job\'s components name %s '
        'more than once (%s=%d: %s); each component has nodes of its own' %
        (util.abbreviate(repeated), size_var, size,
         ', '.join(read)))
  missing = [node for node in nodes if node not in component_of]
  if missing:
    raise RuntimeError(
        'Nodes %s of the step (SLURM_STEP_NODELIST=%r) are in none of the '
        'heterogeneous job\'s components\' node lists (%s=%d: %s)' %
        (util.abbreviate(missing),
         environ.get('SLURM_STEP_NODELIST'), size_var, size, ', '.join(read)))
  step_components = sorted({component_of[node] for node in nodes})
  if len(step_components) < 2:
    return None
  number = {component: i for i, component in enumerate(step_components)}
  return [number[component_of[node]] for node in nodes]


def _node_major_index(environ, nodes, counts):
  """Returns this task's index when tasks are numbered node by node.

  The index is the number of tasks on the nodes before this task's node plus
  its local index: every task computes its own from its node
  (`SLURMD_NODENAME`) and `SLURM_LOCALID`, and all of them number the step
  alike, whatever order Slurm dealt the ranks in (block, cyclic, plane,
  arbitrary, network-topology order, heterogeneous components).
  """
  name = _require(environ, 'SLURMD_NODENAME')
  if name not in nodes:
    raise RuntimeError(
        'SLURMD_NODENAME=%r is not in the step node list %s '
        '(SLURM_STEP_NODELIST=%r)' %
        (name, util.abbreviate(nodes),
         environ.get('SLURM_STEP_NODELIST')))
  node = nodes.index(name)
  local = util.parse_int('SLURM_LOCALID', _require(environ, 'SLURM_LOCALID'),
                         0, MAX_TASKS_PER_NODE - 1)
  if local >= counts[node]:
    raise RuntimeError('SLURM_LOCALID=%d but SLURMD_NODENAME=%r runs %d tasks '
                       'of the step' % (local, name, counts[node]))
  return sum(counts[:node]) + local


def _layout(environ, nodes, counts, expand, variables):
  """Places every task of the step node by node, in node list order.

  Whatever order Slurm dealt the ranks in (block, cyclic, plane, arbitrary,
  topology order, the components of a heterogeneous step), task i is the
  i-th task counted node by node: every task finds itself by its node
  (`SLURMD_NODENAME`) and `SLURM_LOCALID` (`_node_major_index`).

  Returns:
    (rank_nodes, the heterogeneous component of every node or None), as in
    `SlurmStep`.
  """
  components = None if variables.is_batch else _het_components(
      environ, nodes, expand)
  return deal_ranks(counts), None if components is None else tuple(
      components)


def _parse_variable(name, value, parse):
  """Returns `parse(value)`; a ValueError names the variable and its value."""
  try:
    return parse(value)
  except ValueError as e:
    raise ValueError('%s=%r: %s' % (name, value, e)) from None


def _check_counts(nodes, counts, source):
  """Raises ValueError naming a node whose count is not in 1..MAX."""
  for node, count in zip(nodes, counts):
    if not _is_int_in(count, 1, MAX_TASKS_PER_NODE):
      check_int('%s: tasks of node %r' % (source, node), count, 1,
                MAX_TASKS_PER_NODE)


def counts_from_argument(tasks_per_node, nodes, nodelist_text, nodelist_var):
  """The tasks of each node the user's `tasks_per_node` gives.

  Args:
    tasks_per_node: The user's int, or dict host -> count.
    nodes: The step's node names.
    nodelist_text: The node list they came from, for errors.
    nodelist_var: The variable that held it, for errors.

  Returns:
    A list: the count of each node.

  Raises:
    ValueError: If a host is not a string.
    RuntimeError: If the dict's hosts are not the step's nodes.
  """
  if not isinstance(tasks_per_node, Mapping):
    return [tasks_per_node] * len(nodes)
  for host in tasks_per_node:
    if not isinstance(host, str):
      raise ValueError('tasks_per_node: host %r is not a string' % (host,))
  if set(tasks_per_node) != set(nodes):
    raise RuntimeError('tasks_per_node names hosts %s, but %s=%r has hosts '
                       '%s' % (sorted(tasks_per_node), nodelist_var,
                               nodelist_text, list(nodes)))
  return [tasks_per_node[node] for node in nodes]


def _node_counts(environ, variables, tasks_per_node, expand):
  """Reads the node list and tasks per node; applies the user's override.

  Returns:
    (nodes, counts, where the counts came from).
  """
  nodelist = environ.get(variables.nodelist_var)
  if nodelist is None and not isinstance(tasks_per_node, Mapping):
    _require(environ, variables.nodelist_var, ' Launch the program with srun.')
  nodes = tuple(tasks_per_node if nodelist is None else _parse_variable(
      variables.nodelist_var, nodelist, expand))
  slurm_value = environ.get(variables.tasks_per_node_var)
  slurm_counts = None
  if slurm_value is not None:
    slurm_counts = _parse_variable(variables.tasks_per_node_var, slurm_value,
                                   slurm_hostlist.expand_tasks_per_node)
  if tasks_per_node is None:
    if slurm_counts is None:
      _require(environ, variables.tasks_per_node_var,
               ' Launch the program with srun.')
    counts = slurm_counts
    source = '%s=%r' % (variables.tasks_per_node_var, slurm_value)
  else:
    counts = counts_from_argument(tasks_per_node, nodes, nodelist,
                                  variables.nodelist_var)
    source = 'tasks_per_node=%r' % (tasks_per_node,)
  _check_counts(nodes, counts, source)
  if len(counts) != len(nodes):
    raise ValueError(
        '%s=%r has %d entries but %s=%r has %d nodes; expected one entry per '
        'node' % (variables.tasks_per_node_var, slurm_value, len(counts),
                  variables.nodelist_var, nodelist, len(nodes)))
  if slurm_counts is not None and slurm_counts != counts:
    raise RuntimeError(
        'tasks_per_node=%r asks for %s tasks on nodes %s, but Slurm assigned '
        '%s (%s=%r)' % (tasks_per_node, counts, list(nodes), slurm_counts,
                        variables.tasks_per_node_var, slurm_value))
  return nodes, counts, source


def _layout_variables(environ, variables, step):
  """The variables that gave the step's layout, for error messages."""
  return '%s=%r, %s' % (variables.nodelist_var,
                        environ.get(variables.nodelist_var),
                        step.counts_source)


def _parse_gtids(text):
  """Parses SLURM_GTIDS, the ranks of the step's tasks on this node."""
  if text.count(',') >= MAX_TASKS_PER_NODE:
    raise ValueError('more than %d ranks' % MAX_TASKS_PER_NODE)
  return [util.parse_int('rank', rank, 0, MAX_TASKS - 1)
          for rank in text.split(',')]


def _gtids_problem(environ, step, procid):
  """What SLURM_GTIDS (the ranks on this node) contradicts, or None.

  Every task checks that it holds as many ranks as the node runs tasks and
  that its own, at `SLURM_LOCALID`, is its `SLURM_PROCID`.
  """
  text = environ.get('SLURM_GTIDS')
  if text is None:
    return None
  ranks = _parse_variable('SLURM_GTIDS', text, _parse_gtids)
  node, local = step.place
  if len(ranks) != step.tasks_per_node[node] or ranks[local] != procid:
    return ('SLURM_GTIDS: Slurm says %r, expected the ranks of the %d tasks '
            'of this node with this task\'s, SLURM_PROCID %d, at its '
            'SLURM_LOCALID %d' % (text, step.tasks_per_node[node], procid,
                                  local))
  return None


def _check_against_task(environ, step, variables, procid, by_node):
  """Compares the derived layout with what this task's variables say.

  Args:
    environ: The environment.
    step: The `SlurmStep` derived.
    variables: The `_StepVariables` it was derived from.
    procid: `SLURM_PROCID`.
    by_node: Whether tasks are numbered node by node (`_node_major_index`).

  Raises:
    RuntimeError: Showing both sides, on any difference.
    ValueError: If SLURM_GTIDS is malformed.
  """
  node, local = step.place
  # SLURM_NODEID is not compared: in heterogeneous steps it follows the
  # components' order, not the node list's.
  derived = {
      'SLURMD_NODENAME': step.nodes[node],
      'SLURM_LOCALID': str(local),
  }
  mismatches = [
      '%s: Slurm says %r, derived %r' % (name, environ[name], value)
      for name, value in derived.items()
      if name in environ and environ[name].strip() != value
  ]
  # A batch script's SLURM_GTIDS is 0, whatever the job; in a heterogeneous
  # step, task indices are node-major slots of several components.
  if not variables.is_batch and not step.heterogeneous:
    gtids = _gtids_problem(environ, step, procid)
    if gtids:
      mismatches.append(gtids)
  if not mismatches:
    return
  who = 'SLURM_PROCID=%r' % environ.get('SLURM_PROCID')
  if by_node:
    who = 'SLURM_LOCALID=%r on SLURMD_NODENAME=%r (%s)' % (
        environ.get('SLURM_LOCALID'), environ.get('SLURMD_NODENAME'), who)
  raise RuntimeError(
      'The task layout derived from the Slurm environment does not match '
      'this task: %s is task %d of %d, which the layout (%s) puts on node '
      '%r as its local task %d; but %s' %
      (who, step.task_index, step.num_tasks,
       _layout_variables(environ, variables, step), step.nodes[node], local,
       '; '.join(mismatches)))


def _gpu_ids(name, value):
  """Parses the device list `value` of variable `name` into a tuple of ids.

  `''` and `NoDevFiles` mean no GPUs. Ids are indices or UUIDs, at most
  `MAX_GPUS_PER_NODE` of them.
  """
  text = value.strip()
  if text.count(',') >= MAX_GPUS_PER_NODE:
    raise ValueError('%s=%r: more than %d device ids' %
                     (name, value, MAX_GPUS_PER_NODE))
  ids = () if text in _NO_GPUS else tuple(
      gpu.strip() for gpu in text.split(','))
  if (not all(_GPU_ID_RE.fullmatch(gpu) for gpu in ids) or
      len(set(ids)) != len(ids)):
    raise ValueError('%s=%r: expected distinct comma-separated device ids '
                     '(indices or UUIDs)' % (name, value))
  return ids


def _slurm_gpu_ids(environ):
  """Returns (variable, ids) of the GPUs Slurm made visible to this task.

  `CUDA_VISIBLE_DEVICES` counts as it stands (`''` hides every GPU), then
  `SLURM_STEP_GPUS`, then `SLURM_JOB_GPUS` (see `read_gpus` for what that
  one means in a step).

  Returns:
    (variable, ids), or (None, None) when none of them is set.
  """
  for name in ('CUDA_VISIBLE_DEVICES', 'SLURM_STEP_GPUS', 'SLURM_JOB_GPUS'):
    if name in environ:
      return name, _gpu_ids(name, environ[name])
  return None, None


def _gpu_bind(tres_bind):
  """Returns the GPU binding of SLURMD_TRES_BIND, e.g. 'single:2', or ''.

  Slurm 22.05 writes `gpu:single:2`, 24.11 on `gres/gpu:single:2`; a
  `verbose,` may come first; lists go on after commas (`map_gpu:0,1`).
  """
  for binding in tres_bind.split(';'):
    kind, _, options = binding.partition(':')
    if kind in ('gpu', 'gres/gpu'):
      if options.startswith('verbose,'):
        options = options[len('verbose,'):]
      return options.strip()
  return ''


def _binding_masks(bind, tasks):
  """The GPUs (bit masks) of the first `tasks` local tasks under `bind`.

  `map_gpu:ID,...` (decimal or 0x hex ids) and `mask_gpu:MASK,...` (hex
  masks) name the GPUs of local tasks 0, 1, ..., reused from the start when
  the node has more tasks; `ITEM*N` repeats an item N times.
  """
  mode, _, items = bind.partition(':')
  masks = []
  for item in items.split(','):
    match = _BIND_ITEM_RE.fullmatch(item.strip())
    if not match or (mode == 'map_gpu' and match.group(1) is None and
                     not match.group(2).isdigit()):
      raise ValueError(
          'SLURMD_TRES_BIND=%r: expected %s:ITEM[*N],... with GPU ids '
          '(map_gpu) or hexadecimal masks (mask_gpu)' % (bind, mode))
    base = 16 if match.group(1) or mode == 'mask_gpu' else 10
    value = int(match.group(2), base)
    mask = value if mode == 'mask_gpu' else 1 << min(value, MAX_GPUS_PER_NODE)
    masks += [mask] * min(int(match.group(3) or 1), tasks - len(masks))
    if len(masks) == tasks:
      break
  return masks


def bound_sharers(bind, tasks, local):
  """How many of a node's `tasks` tasks use a GPU that Slurm bound to `local`.

  Slurm binds one GPU to every `N` tasks in local index order under
  `--gpu-bind=single:N` (also what `--ntasks-per-gpu=N` sets), and the GPUs
  of every local task under `map_gpu` and `mask_gpu` lists; other bindings
  give each task its own GPUs.

  Args:
    bind: The GPU binding (`SlurmGpus.bind`).
    tasks: The number of tasks of the step on the node.
    local: The task's local index.

  Returns:
    The number of the node's tasks (this one included) whose GPUs share one
    with the task's.

  Raises:
    ValueError: If a map_gpu or mask_gpu list is malformed.
  """
  mode, _, value = bind.partition(':')
  if mode == 'single':
    per_gpu = _parse_variable(
        'SLURMD_TRES_BIND', bind, lambda _: util.parse_int(
            'single', value, 1, MAX_TASKS_PER_NODE))
    first = local - local % per_gpu
    return min(first + per_gpu, tasks) - first
  if mode in ('map_gpu', 'mask_gpu'):
    masks = _binding_masks(bind, tasks)
    own = masks[local % len(masks)]
    return sum(1 for task in range(tasks) if masks[task % len(masks)] & own)
  return 1


def _parse_gpu_total(text):
  """Parses `--gpus`' `[type:]N[,[type:]N...]` (SLURM_GPUS) into a count."""
  most = MAX_GPUS_PER_NODE * MAX_TASKS
  try:
    return sum(
        util.parse_int('COUNT', item.rsplit(':', 1)[-1], 0, most)
        for item in text.split(','))
  except ValueError:
    raise ValueError('expected [TYPE:]COUNT, e.g. 4 or a100:4, with a '
                     'COUNT in 0..%d' % most) from None


def _is_srun_step(environ):
  """Whether the task runs in a step srun started (not the batch script)."""
  return ('SLURM_STEP_NODELIST' in environ or
          'SLURM_STEP_TASKS_PER_NODE' in environ)


def read_gpus(environ):
  """Reads what Slurm says of this task's GPUs into a `SlurmGpus`.

  `SLURM_JOB_GPUS` lists the job's GPUs on this node. The batch script has
  them all; in a step that srun started, Slurm sets `CUDA_VISIBLE_DEVICES`
  and `SLURM_STEP_GPUS` to the step's own and unsets both when the step has
  none (`--gres=none`, `--gpus=0`, `--gres=gpu:0`). There `SLURM_JOB_GPUS`
  alone means that this task has none. Under `--gpu-bind=none` Slurm 22.05
  names none of the step's GPUs either, and says only how many it holds on
  the node (`SLURM_GPUS_ON_NODE`): with device cgroups, every task sees
  exactly those, as CUDA devices 0..N-1. Where Slurm binds GPUs to tasks
  (`--gpus-per-task`, `--gpu-bind`: `SLURMD_TRES_BIND`), the task sees its
  own, fewer than Slurm gave the node.
  """
  on_node = environ.get('SLURM_GPUS_ON_NODE')
  if on_node is not None:
    on_node = util.parse_int('SLURM_GPUS_ON_NODE', on_node, 0,
                                       MAX_GPUS_PER_NODE)
  step_total = environ.get('SLURM_GPUS')
  if step_total is not None:
    step_total = _parse_variable('SLURM_GPUS', step_total, _parse_gpu_total)
  bind = _gpu_bind(environ.get('SLURMD_TRES_BIND', ''))
  source, visible = _slurm_gpu_ids(environ)
  if source in (None, 'SLURM_JOB_GPUS') and bind == 'none' and on_node:
    return SlurmGpus(tuple(str(gpu) for gpu in range(on_node)),
                     'SLURM_GPUS_ON_NODE', False, on_node, step_total,
                     environ['SLURM_GPUS_ON_NODE'].strip(), bind=bind)
  if visible is None:
    return SlurmGpus(on_node=on_node, step_total=step_total, bind=bind)
  if source == 'SLURM_JOB_GPUS' and _is_srun_step(environ):
    return SlurmGpus((), source, False, on_node, step_total,
                     environ[source].strip(), withheld=True, bind=bind)
  # Fewer GPUs than Slurm gave the node: Slurm bound them to the task, or a
  # wrapper, the user or an earlier resolver narrowed them; they stay.
  step_gpus = environ.get('SLURM_STEP_GPUS')
  narrowed = (source == 'CUDA_VISIBLE_DEVICES' and step_gpus is not None and
              len(visible) < len(_gpu_ids('SLURM_STEP_GPUS', step_gpus)))
  bound = (bind.partition(':')[0] in _PER_TASK_BINDINGS or narrowed or
           (on_node is not None and on_node > len(visible)))
  return SlurmGpus(visible, source, bound, on_node, step_total,
                   environ[source].strip(), bind=bind)


def deal_gpus(node_gpus, per_task, local):
  """Returns the GPUs of the task of local index `local` on a node.

  The node's tasks take `per_task` GPUs each, by value, in local index order;
  when the node has fewer GPUs than that allows (`per_task` is then 1), task
  l shares the (l mod G)-th of the node's G GPUs.

  Args:
    node_gpus: The node's GPU ids, as Slurm lists them.
    per_task: GPUs each task uses.
    local: The task's index among the step's tasks on its node.
  """
  if per_task * (local + 1) > len(node_gpus):
    return (node_gpus[local % len(node_gpus)],)
  return node_gpus[local * per_task:(local + 1) * per_task]


@dataclasses.dataclass(frozen=True)
class GpuPlan:
  """The GPUs of the tasks of this task's node.

  Attributes:
    per_task: GPUs each task of the step (or of its heterogeneous component)
      uses.
    node_gpus: The GPU ids dealt among the node's tasks by `deal_gpus`, or
      None when Slurm bound this task's own GPUs or nothing is to be dealt.
    task_gpus: This task's GPU ids for `CUDA_VISIBLE_DEVICES`, or None to
      leave it alone.
    source: Where `node_gpus` came from (a variable, an argument, a command).
    shared: Whether, with fewer GPUs than tasks, the node's tasks share
      GPUs round-robin.
    sharers: How many tasks of the node use this task's GPU (1: its own),
      whether the dealing or Slurm's binding (`bound_sharers`) shares it.
    slurm_gpus: What Slurm says of this node's GPUs (`SlurmGpus`), as the
      plan took it: the step's, or the node's where no variable names any.
  """
  per_task: int
  node_gpus: Optional[Tuple[str, ...]] = None
  task_gpus: Optional[Tuple[str, ...]] = None
  source: str = ''
  shared: bool = False
  sharers: int = 1
  slurm_gpus: SlurmGpus = SlurmGpus()


def _bound_gpu_plan(step, gpus_per_node, gpus_per_task):
  """The plan for GPUs Slurm bound to this task: they stay with it."""
  gpus = step.gpus
  visible = gpus.visible
  per_task = len(visible) if gpus_per_task is None else gpus_per_task
  if per_task > len(visible):
    raise RuntimeError(
        'Requested %d GPUs per task (gpus_per_task) but Slurm bound %d to '
        'this task (%s=%r)' % (per_task, len(visible), gpus.source,
                               gpus.text))
  if gpus_per_node is not None and per_task > gpus_per_node:
    raise RuntimeError(
        'Requested %d GPUs per task (gpus_per_task) but %d per node '
        '(gpus_per_node)' % (per_task, gpus_per_node))
  if (gpus_per_node is not None and gpus.on_node is not None and
      gpus_per_node > gpus.on_node):
    raise RuntimeError(
        'Requested more GPUs per node than available: gpus_per_node=%d but '
        'Slurm gave this node %d (SLURM_GPUS_ON_NODE)' %
        (gpus_per_node, gpus.on_node))
  node, local = step.place
  sharers = bound_sharers(gpus.bind, step.tasks_per_node[node], local)
  return GpuPlan(per_task, task_gpus=visible[:per_task], source=gpus.source,
                 sharers=sharers if per_task else 1, slurm_gpus=gpus)


def gres_types(conf_text):
  """Returns the GRES types a slurm.conf text lists (`GresTypes=gpu,...`).

  Only the text's own lines count, not the files it includes; keys are
  case-insensitive, as Slurm reads them.
  """
  types = ()
  for line in conf_text.splitlines():
    key, equals, value = line.split('#', 1)[0].partition('=')
    if equals and key.strip().lower() == 'grestypes':
      types = tuple(name.strip().lower() for name in value.split(','))
  return types


def _node_gpus(gpus, gpus_per_node):
  """Returns (the GPU ids of this node to deal, where they came from).

  Raises:
    RuntimeError: If `gpus_per_node` is more than the node has.
  """
  if gpus.visible is None:
    return tuple(str(i) for i in range(gpus_per_node)), 'gpus_per_node'
  visible, source = gpus.visible, gpus.source
  if gpus_per_node is not None and gpus_per_node > len(visible):
    raise RuntimeError(
        'Requested more GPUs per node than available: gpus_per_node=%d but '
        'this node has %d (%s=%r%s)' %
        (gpus_per_node, len(visible), source, gpus.text,
         ': the job\'s, and this step has none of them' if gpus.withheld
         else ''))
  return visible[:gpus_per_node], source


def plan_gpus(step, gpus_per_node, gpus_per_task, unnamed_gpus):
  """Decides how many GPUs every task uses, and which this task gets.

  An explicit `gpus_per_node=0` hides every GPU, as in TensorFlow. GPUs that
  Slurm bound to this task stay with it. Where Slurm manages the node's
  GPUs but gave this step none (`SlurmGpus.withheld`), the task gets none.
  GPUs that Slurm gave the node are dealt among the node's tasks by local
  index (`deal_gpus`): each task of the step gets k = G // T GPUs, where G
  is the node's GPU count and T the number of tasks on the step's busiest
  node (of the task's heterogeneous component), so that every worker has
  the same number. When k would be 0 and neither count was given, each task
  gets one GPU, shared round-robin within its node. `CUDA_VISIBLE_DEVICES=''`
  hides every GPU unless a count is given (as TensorFlow, which then deals
  GPUs 0..gpus_per_node-1).

  Args:
    step: The `slurm_step.SlurmStep`.
    gpus_per_node: The user's value or None.
    gpus_per_task: The user's value or None.
    unnamed_gpus: Returns a `SlurmGpus` of this node's GPUs where no
      variable names any and no count is given (slurm.conf, nvidia-smi);
      called only then.

  Returns:
    A `GpuPlan`.

  Raises:
    RuntimeError: If more GPUs are requested than Slurm gave.
  """
  if gpus_per_node == 0 and not gpus_per_task:
    return GpuPlan(0, task_gpus=(), source='gpus_per_node')
  gpus = step.gpus
  defaults = gpus_per_node is None and gpus_per_task is None
  if gpus.emptied and not defaults:
    gpus = dataclasses.replace(gpus, visible=None, text=None)
  if gpus.bound_per_task:
    return _bound_gpu_plan(step, gpus_per_node, gpus_per_task)
  if gpus.visible is None and gpus_per_node is None:
    gpus = unnamed_gpus()
    if gpus.visible is None:
      # No GPU anywhere: CUDA_VISIBLE_DEVICES stays as it is.
      return GpuPlan(0, source=gpus.source, slurm_gpus=gpus)
  node_gpus, source = _node_gpus(gpus, gpus_per_node)
  node, local = step.place
  busiest = step.busiest_of_component(node)
  on_node = step.tasks_per_node[node]
  per_task = len(node_gpus) // busiest if gpus_per_task is None else (
      gpus_per_task)
  if per_task * busiest > len(node_gpus):
    raise RuntimeError(
        'Requested more GPUs per node than available: %d tasks on the busiest '
        'node x %d GPUs per task (gpus_per_task) > %d GPUs per node (%s)' %
        (busiest, per_task, len(node_gpus), source))
  shared = defaults and bool(node_gpus) and not per_task
  if shared:
    per_task = 1
  if gpus.withheld:
    return GpuPlan(per_task, task_gpus=(), source=source, slurm_gpus=gpus)
  if gpus.visible == ():
    # Slurm's value already hides every GPU.
    return GpuPlan(per_task, source=source, slurm_gpus=gpus)
  sharers = 1
  if shared and on_node > len(node_gpus):
    sharers = (on_node // len(node_gpus) +
               (local % len(node_gpus) < on_node % len(node_gpus)))
  return GpuPlan(per_task, node_gpus, deal_gpus(node_gpus, per_task, local),
                 source, shared, sharers, gpus)


def _parse_ports(text):
  """Parses a port list such as `12000-12003,12005` into distinct ports.

  The ranges are counted before any port is listed: there are at most 65535
  distinct ports.
  """
  ranges = []
  for item in text.split(','):
    match = _PORT_RANGE_RE.fullmatch(item.strip())
    low, high = (int(match.group(1)), int(match.group(2) or match.group(1))
                ) if match else (0, 0)
    if not 1 <= low <= high <= MAX_PORT:
      raise ValueError('%r is not a port or a range LO-HI of ports within '
                       '1..%d' % (item, MAX_PORT))
    ranges.append(range(low, high + 1))
  if sum(map(len, ranges)) > MAX_PORT:
    raise ValueError('more than %d ports: some are repeated' % MAX_PORT)
  ports = tuple(port for ports in ranges for port in ports)
  repeated = sorted(port for port, count in collections.Counter(ports).items()
                    if count > 1)
  if repeated:
    raise ValueError('ports %s are repeated; expected distinct ports' %
                     util.abbreviate(repeated))
  return ports


def _check_num_tasks(environ, variables, total, counts_source):
  """Checks the step's task count variable against the tasks per node."""
  if total > MAX_TASKS:
    raise ValueError('%s: %d tasks in all; expected at most %d' %
                     (counts_source, total, MAX_TASKS))
  if variables.num_tasks_var in environ:
    num_tasks = util.parse_int(
        variables.num_tasks_var, environ[variables.num_tasks_var], 1,
        MAX_TASKS)
    if num_tasks != total:
      raise RuntimeError(
          '%s=%d but the tasks per node (%s) add up to %d; launch the program '
          'with srun so that the step variables are consistent' %
          (variables.num_tasks_var, num_tasks, counts_source, total))


def _check_distinct(nodes, variables, environ):
  """Raises ValueError naming a node the node list names twice."""
  if len(set(nodes)) == len(nodes):
    return
  repeated = next(node for node, count in collections.Counter(nodes).items()
                  if count > 1)
  raise ValueError('%s=%r names node %r twice' %
                   (variables.nodelist_var, environ[variables.nodelist_var],
                    repeated))


def _step_id(environ):
  """SLURM_STEP_ID as Slurm's 32-bit id, 0 where unset.

  Slurm 26.05 writes its special step ids as negative numbers: the batch
  script's SLURM_BATCH_SCRIPT (0xfffffffb) is -5.
  """
  text = environ.get('SLURM_STEP_ID', '0')
  if re.fullmatch(r'\s*-[1-9][0-9]?\s*', text):
    return 2**32 + int(text)
  return util.parse_int('SLURM_STEP_ID', text, 0, _MAX_ID)


def job_id(environ):
  """The job's id, `SLURM_JOB_ID` (0 if unset)."""
  return util.parse_int('SLURM_JOB_ID',
                                  environ.get('SLURM_JOB_ID', '0'), 0, _MAX_ID)


def read_step(environ,
              tasks_per_node=None,
              expand=slurm_hostlist.expand_hostlist):
  """Builds the model of this task's Slurm step from its environment.

  The tasks are those of the `srun` step (with `--mpi=pmi2|pmix` too), or of
  the job in a batch script without a step. A process that `mpirun` or
  `mpiexec.hydra` started is refused (`slurm_launcher.launcher_error`).

  Args:
    environ: The environment, e.g. `os.environ`.
    tasks_per_node: The user's override: None, an int, or a dict host ->
      count.
    expand: The hostlist expander.

  Returns:
    A `SlurmStep`.

  Raises:
    RuntimeError: If variables are missing or contradict each other, or an
      MPI launcher started the process.
    ValueError: If a variable is malformed.
  """
  launcher = slurm_launcher.detect_launcher(environ)
  if launcher in slurm_launcher.MPI_LAUNCHERS:
    raise slurm_launcher.launcher_error(environ, launcher)
  core_step.check_not_batch_script(environ)
  if launcher is not None:
    slurm_launcher.check_srun_rank(environ, launcher)
  variables = (_STEP_VARIABLES if _is_srun_step(environ) else
               _JOB_VARIABLES)
  _require(environ, 'SLURM_PROCID',
           ' Launch the program with srun (inside sbatch or salloc).')
  nodes, counts, counts_source = _node_counts(environ, variables,
                                             tasks_per_node, expand)
  total = sum(counts)
  _check_num_tasks(environ, variables, total, counts_source)
  _check_distinct(nodes, variables, environ)
  rank_nodes, node_components = _layout(environ, nodes, counts, expand,
                                        variables)
  procid = util.parse_int('SLURM_PROCID', environ['SLURM_PROCID'], 0,
                          MAX_TASKS - 1)
  if procid >= total:
    raise RuntimeError('SLURM_PROCID=%d but the step has only %d tasks (%s)' %
                       (procid, total, counts_source))
  # Without its node and local index (which srun sets in every task), a task
  # is numbered by SLURM_PROCID, as in a block step in list order.
  if not variables.is_batch:
    core_step.check_place_known(environ)
  by_node = not variables.is_batch and (
      'SLURMD_NODENAME' in environ and 'SLURM_LOCALID' in environ)
  rank = _node_major_index(environ, nodes, counts) if by_node else procid
  reserved_ports = environ.get('SLURM_STEP_RESV_PORTS')
  if reserved_ports is not None:
    reserved_ports = _parse_variable('SLURM_STEP_RESV_PORTS', reserved_ports,
                                     _parse_ports)
  step = SlurmStep(
      nodes=tuple(nodes),
      tasks_per_node=tuple(counts),
      rank_nodes=rank_nodes,
      task_index=rank,
      gpus=read_gpus(environ),
      node_components=node_components,
      counts_source=counts_source,
      reserved_ports=reserved_ports,
      job_step=(job_id(environ), _step_id(environ)))
  _check_against_task(environ, step, variables, procid, by_node)
  return step


def node_major(step):
  """The step with its tasks numbered node by node, as the core numbers them.

  A task's index is the number of tasks on the nodes before its own, plus
  its local index: the ranks of an MPI launcher, placed by its rule, are
  renumbered so.
  """
  node, local = step.place
  return dataclasses.replace(
      step,
      rank_nodes=deal_ranks(step.tasks_per_node),
      task_index=sum(step.tasks_per_node[:node]) + local)
