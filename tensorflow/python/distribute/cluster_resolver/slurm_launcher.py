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
"""Which launcher started this process in a Slurm job, and where ranks run.

Inside an allocation (`sbatch`, `salloc`) ranks are started by `srun` or by an
MPI launcher that starts its own daemons with `srun`: Open MPI's `mpirun`
(`orted`, 4.x; `prted`, 5.x) or MPICH's and Intel MPI's `mpiexec.hydra` (one
proxy per node). Under those launchers a rank sees the Slurm variables of the
daemon step, or of the batch script on `mpirun`'s own node, never of a step
that holds the ranks, so `SLURM_PROCID`, `SLURM_NTASKS` and
`SLURM_TASKS_PER_NODE` describe the daemons. `detect_launcher` tells the
launchers apart by their own variables; `read_launch` then places every rank
of an `mpirun` or `mpiexec.hydra` launch on the job's nodes by the launcher's
mapping rule, and checks the placement against what this rank knows of itself.

No variable names every rank's node, so the placement is a model, computed
only from values that every rank of the launch sees alike (the job's node
list and CPUs per node, the launcher's world size and mapping policy): every
rank computes the same placement. A rank then checks its own row (its node,
local rank and local size, and the launcher's universe size), so a placement
that differs from the launcher's fails the check on at least one rank: that
rank raises, naming the launcher, what disagreed and the `srun` line that
would work. `mpirun` then stops every rank; `mpiexec.hydra` leaves the others
running, which cannot train without it.

Nothing here depends on TensorFlow; the environment mapping and the host
name are the only inputs.
"""

import dataclasses
from typing import Tuple

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist

# Launchers, as `detect_launcher` names them.
OPEN_MPI_4 = 'mpirun (Open MPI 4)'
OPEN_MPI_5 = 'mpirun (Open MPI 5)'
HYDRA = 'mpiexec.hydra'
SRUN_PMI2 = 'srun --mpi=pmi2'
SRUN_PMIX = 'srun --mpi=pmix'
# The variables read besides an srun step's (slurm_step.VARIABLES has both).
VARIABLES = (
    'SLURM_JOB_CPUS_PER_NODE', 'SLURM_JOB_NUM_NODES', 'OMPI_COMM_WORLD_RANK',
    'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK',
    'OMPI_COMM_WORLD_LOCAL_SIZE', 'OMPI_UNIVERSE_SIZE',
    'OMPI_MCA_orte_hnp_uri', 'OMPI_MCA_rmaps_base_mapping_policy',
    'PRTE_LAUNCHED', 'PMI_RANK', 'PMI_SIZE', 'PMI_JOBID', 'MPI_LOCALRANKID',
    'MPI_LOCALNRANKS', 'PMIX_RANK', 'PMIX_NAMESPACE')
# Open MPI's mapping policies that this model follows, by the value mpirun
# exports to its ranks for `--map-by` (Open MPI 4 only; unset: by slot).
_OPEN_MPI_MAPPINGS = {'': 'slot', 'slot': 'slot', 'node': 'node'}
# What an srun launch's own rank variable must equal.
_SRUN_RANKS = {SRUN_PMI2: 'PMI_RANK', SRUN_PMIX: 'PMIX_RANK'}


@dataclasses.dataclass(frozen=True)
class Launch:
  """Where every rank of an `mpirun` or `mpiexec.hydra` launch runs.

  Attributes:
    launcher: The launcher's name (`OPEN_MPI_4`, `OPEN_MPI_5`, `HYDRA`).
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


def detect_launcher(environ):
  """Names the launcher that started this process, from its own variables.

  Args:
    environ: The environment mapping.

  Returns:
    `OPEN_MPI_4`, `OPEN_MPI_5`, `HYDRA`, `SRUN_PMI2`, `SRUN_PMIX`, or None
    when no launcher's variables are set (plain `srun`, or no launcher).

  Raises:
    RuntimeError: If launcher variables are set that none of these launchers
      sets alone.
  """
  if 'OMPI_COMM_WORLD_RANK' in environ:
    if 'PRTE_LAUNCHED' in environ:
      return OPEN_MPI_5
    if 'OMPI_MCA_orte_hnp_uri' in environ:
      return OPEN_MPI_4
    raise RuntimeError(
        'OMPI_COMM_WORLD_RANK is set but neither PRTE_LAUNCHED (Open MPI 5) '
        'nor OMPI_MCA_orte_hnp_uri (Open MPI 4): this process was not started '
        'by a known mpirun, and its rank cannot be trusted.')
  if environ.get('PMIX_NAMESPACE', '').startswith('slurm.pmix.'):
    return SRUN_PMIX
  if 'PMI_RANK' in environ:
    if 'PMI_JOBID' in environ:
      return SRUN_PMI2
    if 'MPI_LOCALRANKID' in environ:
      return HYDRA
    raise RuntimeError(
        'PMI_RANK=%r is set without PMI_JOBID (srun --mpi=pmi2) or '
        'MPI_LOCALRANKID (mpiexec.hydra): an unknown launcher started this '
        'process.' % environ['PMI_RANK'])
  if 'PMIX_RANK' in environ:
    raise RuntimeError(
        'PMIX_RANK=%r is set with PMIX_NAMESPACE=%r, which is not srun\'s '
        '(slurm.pmix.<job>.<step>), and no Open MPI rank: an unknown launcher '
        'started this process.' %
        (environ['PMIX_RANK'], environ.get('PMIX_NAMESPACE')))
  return None


def check_srun_rank(environ, launcher):
  """Checks that srun's MPI plugin and Slurm agree on this task's rank.

  Args:
    environ: The environment mapping.
    launcher: `SRUN_PMI2` or `SRUN_PMIX`.

  Raises:
    RuntimeError: If `PMI_RANK` (pmi2) or `PMIX_RANK` (pmix) differs from
      `SLURM_PROCID`: another launcher's rank variables leaked into this
      task, and neither can be trusted.
  """
  name = _SRUN_RANKS[launcher]
  if environ.get(name) != environ.get('SLURM_PROCID'):
    raise RuntimeError(
        '%s: %s=%r but SLURM_PROCID=%r; srun sets both to the task\'s rank, '
        'so this task was not started by that srun alone (an MPI launcher '
        'inside an srun step?). Start the ranks with srun itself.' %
        (launcher, name, environ.get(name), environ.get('SLURM_PROCID')))


def _parse_int(launcher, environ, name, minimum,
               maximum=slurm_hostlist.MAX_HOSTS):
  """Reads the integer variable `name`, set by `launcher`."""
  if name not in environ:
    raise RuntimeError('%s: %s is not set; this launcher sets it in every rank.'
                       % (launcher, name))
  try:
    return slurm_hostlist.parse_int(name, environ[name], minimum, maximum)
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


def _srun_line(environ, num_ranks):
  nodes = environ.get('SLURM_JOB_NUM_NODES', '<nodes>')
  return ('srun -N%s -n%d <command> (inside the allocation, without the MPI '
          'launcher; add --mpi=pmix or --mpi=pmi2 if the program uses MPI)' %
          (nodes, num_ranks))


def _open_mpi_mapping(launcher, environ):
  """The mapping policy mpirun gave its ranks, if the model follows it."""
  for name in sorted(environ):
    if (name.startswith(('OMPI_MCA_rmaps_', 'PRTE_MCA_rmaps_')) and
        name != 'OMPI_MCA_rmaps_base_mapping_policy'):
      raise RuntimeError(
          '%s=%r changes how mpirun places ranks, and the placement '
          'cannot be known from here' % (name, environ[name]))
  policy = environ.get('OMPI_MCA_rmaps_base_mapping_policy', '')
  if launcher == OPEN_MPI_4 and policy.lower() in _OPEN_MPI_MAPPINGS:
    return _OPEN_MPI_MAPPINGS[policy.lower()]
  if launcher == OPEN_MPI_5 and not policy:
    return 'slot'
  raise RuntimeError(
      'OMPI_MCA_rmaps_base_mapping_policy=%r: only mpirun\'s default '
      'placement (by slot)%s can be modelled' %
      (policy, ' and --map-by node' if launcher == OPEN_MPI_4 else
       ''))


def _own_node(launcher, environ, hostname, nodes):
  """This rank's node: Slurm's under mpirun, the host name's under hydra.

  Under `mpiexec.hydra` every rank inherits `SLURMD_NODENAME` of the node
  `mpiexec` runs on; under `mpirun` a rank runs on the node of its daemon
  or of `mpirun` itself, whose `SLURMD_NODENAME` it has.
  """
  if launcher != HYDRA:
    name = environ.get('SLURMD_NODENAME')
    if name in nodes:
      return nodes.index(name)
    raise RuntimeError('SLURMD_NODENAME=%r is none of the job\'s nodes %s' %
                       (name, slurm_hostlist.abbreviate(nodes)))
  for name in (hostname, hostname.split('.', 1)[0]):
    if name in nodes:
      return nodes.index(name)
  raise RuntimeError(
      'this rank\'s host name %r is none of the job\'s nodes %s, and '
      'mpiexec.hydra tells a rank nothing else of its node (SLURMD_NODENAME '
      'is mpiexec\'s)' % (hostname, slurm_hostlist.abbreviate(nodes)))


def _own_facts(launcher, environ):
  """(rank, size, local rank, local size, universe size or None)."""
  if launcher == HYDRA:
    names = ('PMI_RANK', 'PMI_SIZE', 'MPI_LOCALRANKID', 'MPI_LOCALNRANKS')
  else:
    names = ('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE',
             'OMPI_COMM_WORLD_LOCAL_RANK', 'OMPI_COMM_WORLD_LOCAL_SIZE')
  size = _parse_int(launcher, environ, names[1], 1)
  rank = _parse_int(launcher, environ, names[0], 0, size - 1)
  local_size = _parse_int(launcher, environ, names[3], 1, size)
  local_rank = _parse_int(launcher, environ, names[2], 0, local_size - 1)
  universe = None
  if launcher != HYDRA:
    universe = _parse_int(launcher, environ, 'OMPI_UNIVERSE_SIZE', 1)
  return rank, size, local_rank, local_size, universe


def read_launch(environ, hostname, deal_ranks,
                expand=slurm_hostlist.expand_hostlist):
  """Places every rank of an `mpirun` or `mpiexec.hydra` launch.

  The job's nodes are `SLURM_JOB_NODELIST` in its order; each has as many
  slots as `SLURM_JOB_CPUS_PER_NODE` gives it. (The launchers read
  `SLURM_NODELIST` and `SLURM_TASKS_PER_NODE` of their own environment,
  which equal the job's in `sbatch` and `salloc`; ranks on other nodes see
  the daemon step's `SLURM_TASKS_PER_NODE`, so the job's CPUs stand in for
  its tasks: they differ with `-c`, `--exclusive` and whole-node
  allocations, where the checks below refuse.) Ranks are dealt by the
  launcher's rule, as Slurm deals a step's tasks over those slots, cut to the
  launch's ranks: by slot (Open MPI's default, hydra's block) as block, Open
  MPI 4's `--map-by node` as cyclic.

  Args:
    environ: The environment mapping of this rank.
    hostname: This rank's host name (`socket.gethostname()`); under
      `mpiexec.hydra` the only fact that tells a rank its node.
    deal_ranks: `slurm_step.deal_ranks`, which slurm_step passes in (it
      imports this module).
    expand: The hostlist expander, for `SLURM_JOB_NODELIST`.

  Returns:
    A `Launch`, or None if neither `mpirun` nor `mpiexec.hydra` started this
    process (the Slurm step then describes the ranks; under `srun --mpi`
    call `check_srun_rank` first).

  Raises:
    RuntimeError: If the launcher's mapping cannot be modelled, or this
      rank's own facts disagree with the placement: the message names the
      launcher, what disagreed and the `srun` line that would work.
    ValueError: If a variable is malformed.
  """
  launcher = detect_launcher(environ)
  if launcher not in (OPEN_MPI_4, OPEN_MPI_5, HYDRA):
    return None
  rank, size, local_rank, local_size, universe = _own_facts(launcher, environ)
  try:
    mapping = 'slot' if launcher == HYDRA else _open_mpi_mapping(
        launcher, environ)
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
    rank_nodes = deal_ranks(slots, 1 if mapping == 'node' else None)[:size]
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
        (launcher, e, _srun_line(environ, size))) from None
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
  node_ranks = [other for other, node in enumerate(rank_nodes)
                if node == placed]
  model_local, model_size = node_ranks.index(rank), len(node_ranks)
  if (local_rank, local_size) != (model_local, model_size):
    raise RuntimeError(
        'rank %d is local rank %d of %d on %s, but the model (%s) makes it '
        '%d of %d' % (rank, local_rank, local_size, nodes[placed], model,
                      model_local, model_size))
