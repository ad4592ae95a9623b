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
"""The core SlurmClusterResolver, with what TensorFlow itself leaves out.

The core resolver of the TensorFlow tree reads the step through
TensorFlow's hooks (`_resolve_own_rank`, `_resolve_num_tasks`,
`_resolve_hostlist`, `_resolve_task_configuration`) and `_task_address`;
this subclass answers them from the companion's model of the step
(`tf_slurm.launchers.read_step`, numbered node by node as the core numbers
tasks) and resolution (`tf_slurm.resolution.resolve`), which add the ranks
of `mpirun` and `mpiexec.hydra`, `hostlist_expansion`, `het_jobs`,
`node_host`, `port_base='reserved'|'derived'`, GPUs shared by the tasks of a
node (with TF_FORCE_GPU_ALLOW_GROWTH), GPUs withheld where slurm.conf says
Slurm manages them, and a log of what the GPU plan leaves out.
"""

import os

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tf_slurm import launchers
from tf_slurm import resolution as resolution_lib
from tf_slurm import scontrol
from tf_slurm import slurm_step


def _node_order(step, het_jobs):
  """The step's node indices, grouped by the job of their component."""
  order = list(range(len(step.nodes)))
  if het_jobs is not None:
    order.sort(key=lambda node: het_jobs[step.node_components[node]])
  return order


class SlurmClusterResolver(slurm_cluster_resolver.SlurmClusterResolver):
  """SlurmClusterResolver with the companion's launchers and options.

  Everything is as in `tf.distribute.cluster_resolver.SlurmClusterResolver`
  of the TensorFlow tree, with its arguments, and:
  - a process started by Open MPI's `mpirun` or by `mpiexec.hydra` inside a
    Slurm allocation gets the cluster of the launcher's ranks, placed by the
    launcher's rule over the job's nodes and checked by every rank
    (`tf_slurm.launchers.read_launch`);
  - `hostlist_expansion` may have node lists expanded by Slurm's
    `scontrol show hostnames` (`tf_slurm.scontrol`);
  - `het_jobs`, `node_host` and `port_base='reserved'|'derived'`
    (`tf_slurm.resolution.resolve`);
  - where a node has fewer GPUs than tasks and no count is given, its tasks
    share them round-robin (with TF_FORCE_GPU_ALLOW_GROWTH=true unless set).
  """

  def __init__(self,
               jobs=None,
               port_base=8888,
               gpus_per_node=None,
               gpus_per_task=None,
               tasks_per_node=None,
               auto_set_gpu=True,
               rpc_layer='grpc',
               hostlist_expansion='builtin',
               het_jobs=None,
               node_host=None):
    """Creates a new SlurmClusterResolver object.

    The arguments are the core's, in its order, then `hostlist_expansion`,
    `het_jobs` and `node_host`, where earlier versions of this resolver had
    them, so that positional calls bind as before.

    Args:
      jobs: As the core's.
      port_base: As the core's, or 'reserved' for the ports `srun
        --resv-ports=N` reserved (`SLURM_STEP_RESV_PORTS`), or 'derived' for
        a block in [20000, 32768) chosen from the job and step ids.
      gpus_per_node: As the core's.
      gpus_per_task: As the core's.
      tasks_per_node: As the core's; a value that contradicts Slurm's is an
        error here.
      auto_set_gpu: As the core's.
      rpc_layer: As the core's.
      hostlist_expansion: 'builtin' to expand node lists with the core's
        grammar, 'scontrol' to run `scontrol show hostnames` as TF r1.15 did,
        or 'check' to do both and raise if they differ.
      het_jobs: In a heterogeneous step (`srun A : B`), the job of each
        component, e.g. ['ps', 'worker'].
      node_host: The host to put in the addresses of a node's tasks, where it
        is not the node's name: a format of '{node}' (e.g. '{node}-ib'), or
        a callable node name -> host.

    Raises:
      ValueError: If an argument or a Slurm variable is malformed.
      RuntimeError: If more GPUs or other task counts are requested than
        Slurm gave, or the Slurm environment is missing or inconsistent.
    """
    if not isinstance(tasks_per_node, dict):
      slurm_step.check_int('tasks_per_node', tasks_per_node, 1,
                           slurm_step.MAX_TASKS_PER_NODE, optional=True)
    if not isinstance(auto_set_gpu, bool):
      raise ValueError('auto_set_gpu=%r: expected True or False' %
                       (auto_set_gpu,))
    resolution_lib.check_text('rpc_layer', rpc_layer, optional=True)
    expand = scontrol.get_expander(hostlist_expansion)
    step = launchers.read_step(os.environ, tasks_per_node, expand)
    resolved = resolution_lib.resolve(step, jobs, port_base, gpus_per_node,
                                      gpus_per_task,
                                      resolution_lib.unnamed_gpus, het_jobs,
                                      node_host)
    order = _node_order(step, het_jobs)
    own_node, local = step.place
    self._step = step
    self._resolution = resolved
    self._order = order
    self._hosts = resolution_lib.node_hosts(step, node_host)
    self._ports = resolution_lib.task_ports(step, port_base)
    self._own_rank = sum(step.tasks_per_node[node]
                         for node in order[:order.index(own_node)]) + local
    super().__init__(
        jobs={name: len(addresses) for name, addresses in resolved.cluster},
        port_base=min(self._ports),
        gpus_per_node=0,
        gpus_per_task=0,
        auto_set_gpu=False,
        rpc_layer=rpc_layer)
    self._gpus_per_task = resolved.gpus.per_task
    if auto_set_gpu:
      resolution_lib.set_cuda_visible_devices(resolved.gpus)

  def _resolve_own_rank(self):
    return self._own_rank

  def _resolve_num_tasks(self):
    return self._step.num_tasks

  def _resolve_hostlist(self):
    return [self._hosts[node] for node in self._order]

  def _resolve_task_configuration(self):
    # Through _resolve_hostlist, so that a subclass may rename the hosts.
    return dict(zip(self._resolve_hostlist(),
                    (self._step.tasks_per_node[node] for node in self._order)))

  def _task_address(self, host, local_index):
    return '%s:%d' % (host, self._ports[local_index])


def get_num_gpus():
  """Returns the number of GPUs this process may use on the current node.

  As the core's, and 0 where Slurm manages GPUs (slurm.conf's GresTypes
  lists gpu) but names none for this task.
  """
  visible = slurm_step.read_gpus(os.environ).visible
  if visible is None:
    visible = resolution_lib.unnamed_gpus().visible or ()
  return len(visible)
