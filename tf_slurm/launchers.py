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
"""Where the ranks of an `mpirun` or `mpiexec.hydra` launch run.

The core resolver refuses a process that Open MPI's `mpirun` or
`mpiexec.hydra` started (`slurm_launcher.launcher_error`): its Slurm variables
describe the launcher's daemons, not the ranks. This module places every rank
of such a launch on the job's nodes by the launcher's mapping rule, and
checks the placement against what this rank knows of itself.

No variable names every rank's node, so the placement is a model, computed
only from values that every rank of the launch sees alike (the job's node
list and CPUs per node, the launcher's world size and mapping policy): every
rank computes the same placement. A rank then checks its own row (its node,
local rank and local size, and the launcher's universe size), so a placement
that differs from the launcher's fails the check on at least one rank: that
rank raises, naming the launcher, what disagreed and the `srun` line that
would work. `mpirun` then stops every rank; `mpiexec.hydra` leaves the others
running, which cannot train without it.

`read_step` is the step model of the core (`slurm_step.read_step`) with
these launches added; `tf_slurm.resolver.SlurmClusterResolver` reads its step
through it.
"""

import collections
import dataclasses
import socket
from typing import Tuple

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tf_slurm import slurm_launcher
from tf_slurm import slurm_step
from tf_slurm import util

# The variables read besides those of the core (slurm_step.VARIABLES).
VARIABLES = ('SLURM_JOB_CPUS_PER_NODE', 'OMPI_COMM_WORLD_LOCAL_RANK',
             'OMPI_COMM_WORLD_LOCAL_SIZE', 'OMPI_UNIVERSE_SIZE',
             'OMPI_MCA_rmaps_base_mapping_policy', 'MPI_LOCALNRANKS')
# Open MPI's mapping policies that this model follows, by the value mpirun
# exports to its ranks for `--map-by` (Open MPI 4 only; unset: by slot).
_OPEN_MPI_MAPPINGS = {'': 'slot', 'slot': 'slot', 'node': 'node'}


@dataclasses.dataclass(frozen=True)
class Launch:
  """Where every rank of an `mpirun` or `mpiexec.hydra` launch runs.

  Attributes:
    launcher: The launcher's name (`slurm_launcher.OPEN_MPI_4`, ...).
    nodes: The names of the job's nodes that run ranks, in the job's order
      (`SLURM_JOB_NODELIST`).
    rank_nodes: For every rank, the index into `nodes` of its node.
    rank: This process's rank.
    mapping: How the ranks were dealt: 'slot' (fill each node's slots in
      turn) or 'node' (one rank per node in turn).
  """
  launcher: str
  nodes: Tuple[str, ...]
  rank_nodes: Tuple[int, ...]
  rank: int
  mapping: str


def _parse_int(launcher, environ, name, minimum,
               maximum=slurm_hostlist.MAX_HOSTS):
  """Reads the integer variable `name`, set by `launcher`."""
  if name not in environ:
    raise RuntimeError('%s: %s is not set; this launcher sets it in every rank.'
                       % (launcher, name))
  try:
    return util.parse_int(name, environ[name], minimum, maximum)
  except ValueError as e:
    raise ValueError('%s: %s' % (launcher, e)) from None


def _job_slots(environ, expand):
  """The job's nodes and the slots of each, as every rank sees them."""
  for name in ('SLURM_JOB_NODELIST', 'SLURM_JOB_CPUS_PER_NODE'):
    if name not in environ:
      raise RuntimeError('%s is not set: not inside a Slurm job?' % name)
  nodelist = environ['SLURM_JOB_NODELIST']
  cpus = environ['SLURM_JOB_CPUS_PER_NODE']
  nodes = expand(nodelist)
  slots = slurm_hostlist.expand_tasks_per_node(cpus)
  if len(nodes) != len(slots) or len(set(nodes)) != len(nodes):
    raise ValueError(
        'SLURM_JOB_NODELIST=%r (%d nodes) and SLURM_JOB_CPUS_PER_NODE=%r '
        '(%d entries) do not describe one list of distinct nodes' %
        (nodelist, len(nodes), cpus, len(slots)))
  return nodes, slots


def placement(slots, num_ranks, mapping):
  """The node index of every rank, as the launcher deals them.

  Args:
    slots: The number of slots of every node.
    num_ranks: How many ranks to place; at most `sum(slots)`.
    mapping: 'slot': fill each node's slots before the next node's (Open
      MPI's default, `--map-by slot`, core or socket, and `mpiexec.hydra`'s
      block); 'node': one rank to each node in turn, skipping full nodes
      (Open MPI's `--map-by node`).

  Returns:
    A tuple: the node index of every rank.
  """
  chunk = 1 if mapping == 'node' else None
  return slurm_step.deal_ranks(slots, chunk)[:num_ranks]


def _open_mpi_mapping(launcher, environ):
  """The mapping policy mpirun gave its ranks, if the model follows it."""
  for name in sorted(environ):
    if (name.startswith(('OMPI_MCA_rmaps_', 'PRTE_MCA_rmaps_')) and
        name != 'OMPI_MCA_rmaps_base_mapping_policy'):
      raise RuntimeError(
          '%s=%r changes how mpirun places ranks, and the placement '
          'cannot be known from here' % (name, environ[name]))
  policy = environ.get('OMPI_MCA_rmaps_base_mapping_policy', '')
  if (launcher == slurm_launcher.OPEN_MPI_4 and
      policy.lower() in _OPEN_MPI_MAPPINGS):
    return _OPEN_MPI_MAPPINGS[policy.lower()]
  if launcher == slurm_launcher.OPEN_MPI_5 and not policy:
    return 'slot'
  raise RuntimeError(
      'OMPI_MCA_rmaps_base_mapping_policy=%r: only mpirun\'s default '
      'placement (by slot)%s can be modelled' %
      (policy,
       ' and --map-by node' if launcher == slurm_launcher.OPEN_MPI_4 else ''))


def _own_node(launcher, environ, hostname, nodes):
  """This rank's node: Slurm's under mpirun, the host name's under hydra.

  Under `mpiexec.hydra` every rank inherits `SLURMD_NODENAME` of the node
  `mpiexec` runs on; under `mpirun` a rank runs on the node of its daemon
  or of `mpirun` itself, whose `SLURMD_NODENAME` it has.
  """
  if launcher != slurm_launcher.HYDRA:
    name = environ.get('SLURMD_NODENAME')
    if name in nodes:
      return nodes.index(name)
    raise RuntimeError('SLURMD_NODENAME=%r is none of the job\'s nodes %s' %
                       (name, util.abbreviate(nodes)))
  for name in (hostname, hostname.split('.', 1)[0]):
    if name in nodes:
      return nodes.index(name)
  raise RuntimeError(
      'this rank\'s host name %r is none of the job\'s nodes %s, and '
      'mpiexec.hydra tells a rank nothing else of its node (SLURMD_NODENAME '
      'is mpiexec\'s)' % (hostname, util.abbreviate(nodes)))


def _own_facts(launcher, environ):
  """(rank, size, local rank, local size, universe size or None)."""
  if launcher == slurm_launcher.HYDRA:
    names = ('PMI_SIZE', 'MPI_LOCALRANKID', 'MPI_LOCALNRANKS')
  else:
    names = ('OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK',
             'OMPI_COMM_WORLD_LOCAL_SIZE')
  names = (slurm_launcher.rank_variable(environ),) + names
  size = _parse_int(launcher, environ, names[1], 1)
  rank = _parse_int(launcher, environ, names[0], 0, size - 1)
  local_size = _parse_int(launcher, environ, names[3], 1, size)
  local_rank = _parse_int(launcher, environ, names[2], 0, local_size - 1)
  universe = None
  if launcher != slurm_launcher.HYDRA:
    universe = _parse_int(launcher, environ, 'OMPI_UNIVERSE_SIZE', 1)
  return rank, size, local_rank, local_size, universe


def read_launch(environ, hostname, expand=slurm_hostlist.expand_hostlist):
  """Places every rank of an `mpirun` or `mpiexec.hydra` launch.

  The job's nodes are `SLURM_JOB_NODELIST` in its order; each has as many
  slots as `SLURM_JOB_CPUS_PER_NODE` gives it. (The launchers read
  `SLURM_NODELIST` and `SLURM_TASKS_PER_NODE` of their own environment,
  which equal the job's in `sbatch` and `salloc`; ranks on other nodes see
  the daemon step's `SLURM_TASKS_PER_NODE`, so the job's CPUs stand in for
  its tasks: they differ with `-c`, `--exclusive` and whole-node
  allocations, where the checks below refuse.) Ranks are dealt by the
  launcher's rule: by slot for Open MPI's default and hydra's block,
  round-robin for Open MPI 4's `--map-by node`.

  Args:
    environ: The environment mapping of this rank.
    hostname: This rank's host name (`socket.gethostname()`); under
      `mpiexec.hydra` the only fact that tells a rank its node.
    expand: The hostlist expander, for `SLURM_JOB_NODELIST`.

  Returns:
    A `Launch`, or None if neither `mpirun` nor `mpiexec.hydra` started this
    process (the Slurm step then describes the ranks).

  Raises:
    RuntimeError: If the launcher's mapping cannot be modelled, or this
      rank's own facts disagree with the placement: the message names the
      launcher, what disagreed and the `srun` line that would work.
    ValueError: If a variable is malformed.
  """
  launcher = slurm_launcher.detect_launcher(environ)
  if launcher not in slurm_launcher.MPI_LAUNCHERS:
    return None
  rank, size, local_rank, local_size, universe = _own_facts(launcher, environ)
  try:
    mapping = ('slot' if launcher == slurm_launcher.HYDRA else
               _open_mpi_mapping(launcher, environ))
    nodes, slots = _job_slots(environ, expand)
    if universe is not None and universe != sum(slots):
      raise RuntimeError(
          'OMPI_UNIVERSE_SIZE=%d (mpirun\'s slots) but the job has %d CPUs '
          '(SLURM_JOB_CPUS_PER_NODE=%r): mpirun did not count one slot per '
          'CPU (-c, --exclusive, a hostfile?)' %
          (universe, sum(slots), environ['SLURM_JOB_CPUS_PER_NODE']))
    if size > sum(slots):
      raise RuntimeError('%d ranks but the job has %d slots (CPUs): an '
                         'oversubscribed placement cannot be modelled' %
                         (size, sum(slots)))
    rank_nodes = placement(slots, size, mapping)
    own_node = _own_node(launcher, environ, hostname, nodes)
    model = 'by %s over SLURM_JOB_NODELIST=%r, SLURM_JOB_CPUS_PER_NODE=%r' % (
        mapping, environ['SLURM_JOB_NODELIST'],
        environ['SLURM_JOB_CPUS_PER_NODE'])
    _check_own_row(rank_nodes, rank, own_node, local_rank, local_size, nodes,
                   model)
  except ValueError as e:
    raise ValueError('%s: %s' % (launcher, e)) from None
  except RuntimeError as e:
    raise RuntimeError(
        '%s: cannot place the ranks for sure: %s. Launch with %s.' %
        (launcher, e, slurm_launcher.srun_line(environ, size))) from None
  used = sorted(set(rank_nodes))
  renumber = {node: index for index, node in enumerate(used)}
  return Launch(
      launcher=launcher,
      nodes=tuple(nodes[node] for node in used),
      rank_nodes=tuple(renumber[node] for node in rank_nodes),
      rank=rank,
      mapping=mapping)


def _check_own_row(rank_nodes, rank, own_node, local_rank, local_size, nodes,
                   model):
  """Checks this rank's row of the placement against its own facts."""
  placed = rank_nodes[rank]
  if placed != own_node:
    raise RuntimeError('rank %d runs on %s, but the model (%s) places it on %s'
                       % (rank, nodes[own_node], model, nodes[placed]))
  model_local = rank_nodes[:rank].count(placed)
  model_size = rank_nodes.count(placed)
  if (local_rank, local_size) != (model_local, model_size):
    raise RuntimeError(
        'rank %d is local rank %d of %d on %s, but the model (%s) makes it '
        '%d of %d' % (rank, local_rank, local_size, nodes[placed], model,
                      model_local, model_size))


def launch_step(environ, launch, tasks_per_node=None):
  """The step model of the ranks that `launch` placed.

  Args:
    environ: The environment mapping of this rank.
    launch: The `Launch` of `read_launch`.
    tasks_per_node: The user's override: None, an int, or a dict host ->
      count; it must agree with the placement.

  Returns:
    A `slurm_step.SlurmStep`.

  Raises:
    RuntimeError: If `tasks_per_node` disagrees with the placement.
  """
  ranks_of_node = collections.Counter(launch.rank_nodes)
  counts = tuple(ranks_of_node[node] for node in range(len(launch.nodes)))
  source = '%s by %s over SLURM_JOB_NODELIST=%r' % (
      launch.launcher, launch.mapping, environ.get('SLURM_JOB_NODELIST'))
  if tasks_per_node is not None and slurm_step.counts_from_argument(
      tasks_per_node, launch.nodes, environ.get('SLURM_JOB_NODELIST'),
      'SLURM_JOB_NODELIST') != list(counts):
    raise RuntimeError('tasks_per_node=%r, but %s places %s ranks on nodes %s'
                       % (tasks_per_node, launch.launcher, list(counts),
                          list(launch.nodes)))
  return slurm_step.SlurmStep(
      nodes=launch.nodes,
      tasks_per_node=counts,
      rank_nodes=launch.rank_nodes,
      task_index=launch.rank,
      gpus=slurm_step.read_gpus(environ),
      counts_source=source,
      # The ranks see the step ids of different daemons (or the batch
      # script's): only the job's id is the same in all of them.
      job_step=(slurm_step.job_id(environ), 0),
      launcher=launch.launcher)


def read_step(environ,
              tasks_per_node=None,
              expand=slurm_hostlist.expand_hostlist,
              hostname=None):
  """`slurm_step.read_step`, and the ranks of `mpirun` and `mpiexec.hydra`.

  Args:
    environ: The environment, e.g. `os.environ`.
    tasks_per_node: The user's override: None, an int, or a dict host ->
      count.
    expand: The hostlist expander.
    hostname: This machine's host name (default `socket.gethostname()`),
      which alone tells a rank its node under `mpiexec.hydra`.

  Returns:
    A `slurm_step.SlurmStep`.

  Raises:
    RuntimeError: If variables are missing or contradict each other, or a
      launcher's placement cannot be known for sure.
    ValueError: If a variable is malformed.
  """
  launch = read_launch(environ, hostname or socket.gethostname(), expand)
  if launch is None:
    step = slurm_step.read_step(environ, tasks_per_node, expand)
  else:
    step = launch_step(environ, launch, tasks_per_node)
  return slurm_step.node_major(step)
