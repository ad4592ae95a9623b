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
"""Slurm environments as real steps set them, for tests; no TensorFlow.

The environments follow what Slurm 22.05 really set in every task of real
steps recorded on a test cluster.
"""


def step_env(nodelist, tasks_per_node, rank_hosts, rank, node_ids=None,
             **overrides):
  """Returns the environment Slurm gives task `rank` of an `srun` step.

  Args:
    nodelist: `SLURM_STEP_NODELIST`, e.g. 'n[1-2]'.
    tasks_per_node: `SLURM_STEP_TASKS_PER_NODE`, e.g. '4,1'.
    rank_hosts: The node every rank really runs on, in rank order, separated
      by spaces; e.g. 'n1 n2 n1 n1 n1' for `srun -n5 -N2 -m cyclic`.
    rank: `SLURM_PROCID` of the task.
    node_ids: The nodes in `SLURM_NODEID` order, separated by spaces. Defaults
      to the order in which they first appear in `rank_hosts`.
    **overrides: Variables to add or replace; a value of None removes one.

  Returns:
    The environment, with the task's own truth (`SLURMD_NODENAME`,
    `SLURM_NODEID`, `SLURM_LOCALID`, `SLURM_GTIDS`) as Slurm sets it.
  """
  hosts = rank_hosts.split()
  nodes = node_ids.split() if node_ids else list(dict.fromkeys(hosts))
  host = hosts[rank]
  env = {
      'SLURM_CONF': '/etc/slurm/slurm.conf',
      'SLURM_JOB_ID': '42',
      'SLURM_JOB_NODELIST': nodelist,
      'SLURM_NODELIST': nodelist,
      'SLURM_NNODES': str(len(nodes)),
      'SLURM_NTASKS': str(len(hosts)),
      'SLURM_NPROCS': str(len(hosts)),
      'SLURM_TASKS_PER_NODE': tasks_per_node,
      'SLURM_STEP_ID': '0',
      'SLURM_STEP_NODELIST': nodelist,
      'SLURM_STEP_NUM_NODES': str(len(nodes)),
      'SLURM_STEP_NUM_TASKS': str(len(hosts)),
      'SLURM_STEP_TASKS_PER_NODE': tasks_per_node,
      'SLURM_PROCID': str(rank),
      'SLURMD_NODENAME': host,
      'SLURM_NODEID': str(nodes.index(host)),
      'SLURM_LOCALID': str(hosts[:rank].count(host)),
      'SLURM_GTIDS': ','.join(
          str(other) for other, name in enumerate(hosts) if name == host),
  }
  for name, value in overrides.items():
    if value is None:
      env.pop(name, None)
    else:
      env[name] = value
  return env


def step_envs(nodelist, tasks_per_node, rank_hosts, **overrides):
  """Returns the environment of every task of a step, in rank order.

  The arguments are those of `step_env`, without `rank`.
  """
  return [
      step_env(nodelist, tasks_per_node, rank_hosts, rank, **overrides)
      for rank in range(len(rank_hosts.split()))
  ]


# The batch script of `sbatch -N2 --ntasks-per-node=2 --gres=gpu:2`
# (as recorded on Slurm 22.05): no SLURM_STEP_*.
BATCH_ENV = {
    'CUDA_VISIBLE_DEVICES': '0,1',
    'ENVIRONMENT': 'BATCH',
    'SLURMD_NODENAME': 'n1',
    'SLURM_GPUS_ON_NODE': '2',
    'SLURM_GTIDS': '0',
    'SLURM_JOB_CPUS_PER_NODE': '2(x2)',
    'SLURM_JOB_GPUS': '0,1',
    'SLURM_JOB_ID': '25',
    'SLURM_JOB_NODELIST': 'n[1-2]',
    'SLURM_LOCALID': '0',
    'SLURM_NNODES': '2',
    'SLURM_NODEID': '0',
    'SLURM_NODELIST': 'n[1-2]',
    'SLURM_NPROCS': '4',
    'SLURM_NTASKS': '4',
    'SLURM_NTASKS_PER_NODE': '2',
    'SLURM_PROCID': '0',
    'SLURM_TASKS_PER_NODE': '2(x2)',
}
