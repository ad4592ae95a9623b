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
"""Slurm environments of the companion's tests, beside the core's.

`step_env`, `step_envs` and `BATCH_ENV` are the core's (slurm_test_util of
the cluster_resolver package); here are heterogeneous steps, MPI launchers'
ranks, GPU bindings and stand-ins for commands.
"""

import subprocess

from tensorflow.python.distribute.cluster_resolver import slurm_test_util

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs
BATCH_ENV = slurm_test_util.BATCH_ENV

# The shell of `salloc -N3 -n5` on the submit host
# (as recorded on Slurm 22.05): no task variables.
SALLOC_ENV = {
    'SLURM_JOB_CPUS_PER_NODE': '3,1(x2)',
    'SLURM_JOB_ID': '26',
    'SLURM_JOB_NODELIST': 'n[1-3]',
    'SLURM_NNODES': '3',
    'SLURM_NODELIST': 'n[1-3]',
    'SLURM_NPROCS': '5',
    'SLURM_NTASKS': '5',
    'SLURM_TASKS_PER_NODE': '3,1(x2)',
}

NVIDIA_SMI_TWO_GPUS = (
    'GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5c0b9c4e-4bd7-9a8c-1b1e)\n'
    '  MIG 1g.5gb      Device  0: (UUID: MIG-0f8e3c3a-5d09-5b0b-9d1e)\n'
    'GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-8d1e7a0f-2c44-8e1b-77a2)\n')


def completed(returncode=0, stdout='', stderr=''):
  return subprocess.CompletedProcess(['mocked'], returncode, stdout, stderr)


def fake_run_command(result=None):
  """A stand-in for `slurm_hostlist.run_command` that gives `result`.

  Args:
    result: None for a command that is not on PATH, a `completed` process,
      or an exception to raise.

  Returns:
    A function of `run_command`'s arguments that returns or raises as
    `run_command` does for a command that ends so.
  """

  def run_command(command, missing_ok=False, statuses=(0,)):
    shown = ' '.join(command)
    if isinstance(result, BaseException):
      raise result
    if result is None:
      if missing_ok:
        return None
      raise RuntimeError('`%s` cannot run: %s is not on PATH' %
                         (shown, command[0]))
    if result.returncode not in statuses:
      raise RuntimeError('`%s` failed (exit status %d): %s' %
                         (shown, result.returncode,
                          (result.stdout + result.stderr).strip()))
    return result.stdout, result.stderr

  return run_command


def cyclic_env(rank, **overrides):
  """Task `rank` of `srun -n5 -N2 -m cyclic`.

  As recorded on Slurm 22.05: ranks 0, 2, 3, 4 run on n1, rank
  1 on n2.
  """
  return step_env('n[1-2]', '4,1', 'n1 n2 n1 n1 n1', rank,
                  **dict({'SLURM_DISTRIBUTION': 'cyclic', 'SLURM_JOB_ID': '9'},
                         **overrides))


def het_variables(scheme, *component_nodelists):
  """The variables of a heterogeneous step (`srun A : B`), in every task.

  Args:
    scheme: 'slurm_22_05' for SLURM_HET_SIZE, SLURM_PACK_SIZE and
      SLURM_JOB_NODELIST_PACK_GROUP_<n>, as Slurm 22.05 sets them;
      'het_group' for SLURM_HET_SIZE and
      SLURM_JOB_NODELIST_HET_GROUP_<n>, as newer Slurm names them.
    *component_nodelists: The node list of each component, in order.

  Returns:
    The variables.
  """
  size = str(len(component_nodelists))
  if scheme == 'slurm_22_05':
    env, kind = {'SLURM_HET_SIZE': size, 'SLURM_PACK_SIZE': size}, 'PACK'
  else:
    env, kind = {'SLURM_HET_SIZE': size}, 'HET'
  for component, nodelist in enumerate(component_nodelists):
    env['SLURM_JOB_NODELIST_%s_GROUP_%d' % (kind, component)] = nodelist
  return env


HET_SCHEMES = (('_slurm_22_05', 'slurm_22_05'), ('_het_group', 'het_group'))

# The GPU variables of each rank of `srun -N1 -n1 : -N2 -n3 --gpus-per-task=1`
# (as recorded on Slurm 22.05): component 0 has no GPUs (and
# no CUDA_VISIBLE_DEVICES); rank 3, alone on n3, gets no SLURMD_TRES_BIND.
HET_GPU_VARIABLES = (
    {},
    {'CUDA_VISIBLE_DEVICES': '0', 'SLURM_STEP_GPUS': '0',
     'SLURM_GPUS_ON_NODE': '2', 'SLURMD_TRES_BIND': 'gpu:per_task:1'},
    {'CUDA_VISIBLE_DEVICES': '1', 'SLURM_STEP_GPUS': '1',
     'SLURM_GPUS_ON_NODE': '2', 'SLURMD_TRES_BIND': 'gpu:per_task:1'},
    {'CUDA_VISIBLE_DEVICES': '0', 'SLURM_STEP_GPUS': '0',
     'SLURM_GPUS_ON_NODE': '1'},
)


def het_gpu_env(rank, scheme='slurm_22_05', **overrides):
  """Task `rank` of `srun -N1 -n1 : -N2 -n3 --gpus-per-task=1`.

  As recorded on Slurm 22.05: component 0 is rank 0 on n1,
  component 1 ranks 1-2 on n2 and rank 3 on n3; the step's node list is
  n[1-3] with tasks per node 1,2,1.

  Args:
    rank: `SLURM_PROCID`.
    scheme: How the heterogeneous variables are named (`het_variables`).
    **overrides: Variables to add or replace; None removes one.

  Returns:
    The environment.
  """
  env = dict(het_variables(scheme, 'n1', 'n[2-3]'), SLURM_JOB_ID='23',
             SLURM_DISTRIBUTION='block', **HET_GPU_VARIABLES[rank])
  env.update(overrides)
  return step_env('n[1-3]', '1,2,1', 'n1 n2 n2 n3', rank, **env)


def het_later_node_env(rank, scheme='slurm_22_05', **overrides):
  """Task `rank` of `srun -w n3 -n2 : -w n1 -n1`.

  The step's node list is sorted (n[1,3], tasks per node 1,2), but component
  0, ranks 0-1, runs on n3, which Slurm numbers node 0; rank 2 runs on n1.
  """
  env = dict(het_variables(scheme, 'n3', 'n1'), SLURM_DISTRIBUTION='block')
  env.update(overrides)
  return step_env('n[1,3]', '1,2', 'n3 n3 n1', rank, node_ids='n3 n1', **env)


def gres_env(rank, tasks_per_node, rank_hosts):
  """Task `rank` of `srun -N2 -n<N> --gres=gpu:2`: every task sees 0,1.

  E.g. `srun -N2 -n3 --gres=gpu:2` ('2,1', 'n1 n1 n2').
  """
  return step_env('n[1-2]', tasks_per_node, rank_hosts, rank,
                  CUDA_VISIBLE_DEVICES='0,1', SLURM_STEP_GPUS='0,1',
                  SLURM_GPUS_ON_NODE='2')


# sbatch -N3 -n5, as every rank of an MPI launch in it sees the job.
MPI_JOB = {
    'SLURM_JOB_NODELIST': 'n[9-11]',
    'SLURM_JOB_CPUS_PER_NODE': '3,1(x2)',
    'SLURM_JOB_NUM_NODES': '3',
}


def ompi_env(rank, local_rank, local_size, node, size=5, universe=5,
             version=4, **more):
  """An Open MPI rank of `mpirun -n SIZE` in the job above."""
  env = dict(MPI_JOB, SLURMD_NODENAME=node,
             OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(size),
             OMPI_COMM_WORLD_LOCAL_RANK=str(local_rank),
             OMPI_COMM_WORLD_LOCAL_SIZE=str(local_size),
             OMPI_UNIVERSE_SIZE=str(universe))
  if version == 4:
    env['OMPI_MCA_orte_hnp_uri'] = '1.0;tcp://10.0.0.1:1'
  else:
    env['PRTE_LAUNCHED'] = '1'
  env.update(more)
  return env


def hydra_env(rank, local_rank, local_size, size=5, **more):
  """A rank of `mpiexec.hydra -n SIZE` in the job above (mpiexec on n9)."""
  env = dict(MPI_JOB, SLURMD_NODENAME='n9', PMI_RANK=str(rank),
             PMI_SIZE=str(size), MPI_LOCALRANKID=str(local_rank),
             MPI_LOCALNRANKS=str(local_size), PMI_FD='5')
  env.update(more)
  return env


def launch_places(launch):
  """(node name, local index) of every rank of a `tf_slurm.launchers.Launch`."""
  return [(launch.nodes[node], launch.rank_nodes[:rank].count(node))
          for rank, node in enumerate(launch.rank_nodes)]


def ports(addresses):
  return [int(address.rsplit(':', 1)[1]) for address in addresses]
