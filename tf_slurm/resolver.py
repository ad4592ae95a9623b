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
"""The core SlurmClusterResolver, with the ranks of MPI launchers and scontrol.

The resolver of the TensorFlow tree reads its step through `_read_step`, its
one extension point; this subclass reads there the ranks of `mpirun` and
`mpiexec.hydra` too (`tf_slurm.launchers`), which the core refuses, and
expands node lists as `hostlist_expansion` says (`tf_slurm.scontrol`).
"""

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tf_slurm import launchers
from tf_slurm import scontrol


class SlurmClusterResolver(slurm_cluster_resolver.SlurmClusterResolver):
  """SlurmClusterResolver that also resolves the ranks of MPI launchers.

  Everything is as in `tf.distribute.cluster_resolver.SlurmClusterResolver`
  of the TensorFlow tree, with its arguments, except that:
  - a process started by Open MPI's `mpirun` or by `mpiexec.hydra` inside a
    Slurm allocation gets the cluster of the launcher's ranks, placed by the
    launcher's rule over the job's nodes and checked by every rank
    (`tf_slurm.launchers.read_launch`), where the core refuses;
  - `hostlist_expansion` may have node lists expanded by Slurm's
    `scontrol show hostnames` (`tf_slurm.scontrol`).
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

    The arguments are the core's, in its order, and `hostlist_expansion`
    between `rpc_layer` and `het_jobs`, where earlier versions of this
    resolver had it, so that positional calls bind as before.

    Args:
      jobs: As the core's.
      port_base: As the core's.
      gpus_per_node: As the core's.
      gpus_per_task: As the core's.
      tasks_per_node: As the core's.
      auto_set_gpu: As the core's.
      rpc_layer: As the core's.
      hostlist_expansion: 'builtin' to expand node lists with the core's
        grammar, 'scontrol' to run `scontrol show hostnames` as TF r1.15 did,
        or 'check' to do both and raise if they differ.
      het_jobs: As the core's.
      node_host: As the core's.

    Raises:
      ValueError: If `hostlist_expansion` is none of these; else as the core.
      RuntimeError: As the core.
    """
    self._expand = scontrol.get_expander(hostlist_expansion)
    super().__init__(jobs, port_base, gpus_per_node, gpus_per_task,
                     tasks_per_node, auto_set_gpu, rpc_layer,
                     het_jobs=het_jobs, node_host=node_host)

  def _read_step(self, environ, tasks_per_node):
    """The core's step, or the ranks an MPI launcher placed."""
    return launchers.read_step(environ, tasks_per_node, self._expand)
