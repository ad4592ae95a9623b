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
"""Which launcher started this process in a Slurm job.

Inside an allocation (`sbatch`, `salloc`) ranks are started by `srun` or by an
MPI launcher that starts its own daemons with `srun`: Open MPI's `mpirun`
(`orted`, 4.x; `prted`, 5.x) or MPICH's and Intel MPI's `mpiexec.hydra` (one
proxy per node). Under those launchers a rank sees the Slurm variables of the
daemon step, or of the batch script on `mpirun`'s own node, never of a step
that holds the ranks, so `SLURM_PROCID`, `SLURM_NTASKS` and
`SLURM_TASKS_PER_NODE` describe the daemons and would give a wrong cluster.
`detect_launcher` tells the launchers apart by their own variables; under
`mpirun` and `mpiexec.hydra` the step model refuses with `launcher_error`,
which names the `srun` line that starts the same ranks as a Slurm step.

Nothing here depends on TensorFlow.
"""

import re

# Launchers, as `detect_launcher` names them.
OPEN_MPI_4 = 'mpirun (Open MPI 4)'
OPEN_MPI_5 = 'mpirun (Open MPI 5)'
HYDRA = 'mpiexec.hydra'
SRUN_PMI2 = 'srun --mpi=pmi2'
SRUN_PMIX = 'srun --mpi=pmix'
# The launchers whose ranks are not the tasks of a Slurm step.
MPI_LAUNCHERS = (OPEN_MPI_4, OPEN_MPI_5, HYDRA)
# The variables read besides an srun step's (slurm_step.VARIABLES has both).
VARIABLES = ('SLURM_JOB_NUM_NODES', 'OMPI_COMM_WORLD_RANK',
             'OMPI_COMM_WORLD_SIZE', 'OMPI_MCA_orte_hnp_uri', 'PRTE_LAUNCHED',
             'PMI_RANK', 'PMI_SIZE', 'PMI_JOBID', 'MPI_LOCALRANKID',
             'PMIX_RANK', 'PMIX_NAMESPACE')
# The variable that holds a rank's number, by launcher (None: plain srun).
_RANK_VARIABLES = {
    OPEN_MPI_4: 'OMPI_COMM_WORLD_RANK', OPEN_MPI_5: 'OMPI_COMM_WORLD_RANK',
    HYDRA: 'PMI_RANK', SRUN_PMI2: 'SLURM_PROCID', SRUN_PMIX: 'SLURM_PROCID',
    None: 'SLURM_PROCID'}
# What an srun launch's own rank variable must equal.
_SRUN_RANKS = {SRUN_PMI2: 'PMI_RANK', SRUN_PMIX: 'PMIX_RANK'}
# The variable that holds the number of ranks under each MPI launcher.
_WORLD_SIZES = {OPEN_MPI_4: 'OMPI_COMM_WORLD_SIZE',
                OPEN_MPI_5: 'OMPI_COMM_WORLD_SIZE', HYDRA: 'PMI_SIZE'}


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


def rank_variable(environ):
  """The variable that holds this process's rank in its launch.

  Under `mpirun` and `mpiexec.hydra` it is the launcher's own;
  `SLURM_PROCID` there is that of the launcher's daemon (or of the batch
  script).

  Args:
    environ: The environment mapping.

  Returns:
    The variable's name.

  Raises:
    RuntimeError: As `detect_launcher`.
  """
  return _RANK_VARIABLES[detect_launcher(environ)]


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


def srun_line(environ, num_ranks):
  """The `srun` line that starts `num_ranks` ranks over the job's nodes."""
  nodes = environ.get('SLURM_JOB_NUM_NODES', '<nodes>')
  return ('srun -N%s -n%s <command> (inside the allocation, without the MPI '
          'launcher; add --mpi=pmix or --mpi=pmi2 if the program uses MPI)' %
          (nodes, num_ranks))


def launcher_error(environ, launcher):
  """The error for a process that `launcher` (`MPI_LAUNCHERS`) started.

  Args:
    environ: The environment mapping.
    launcher: One of `MPI_LAUNCHERS`.

  Returns:
    A RuntimeError naming the launcher and the `srun` line that works.
  """
  size = environ.get(_WORLD_SIZES[launcher], '')
  if not re.fullmatch('[0-9]{1,7}', size):
    size = '<ranks>'
  return RuntimeError(
      '%s started this process: its Slurm variables describe the launcher\'s '
      'daemons, not the ranks, so the ranks\' nodes cannot be read from '
      'them. Launch with %s.' %
      (launcher, srun_line(environ, size)))
