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
"""The core SlurmClusterResolver, and the ranks of MPI launchers.

The resolver of the TensorFlow tree reads its step through `_read_step`, its
one extension point; this subclass reads there the ranks of `mpirun` and
`mpiexec.hydra` too (`tf_slurm.launchers`), which the core refuses.
"""

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tf_slurm import launchers


class SlurmClusterResolver(slurm_cluster_resolver.SlurmClusterResolver):
  """SlurmClusterResolver that also resolves the ranks of MPI launchers.

  Everything is as in `tf.distribute.cluster_resolver.SlurmClusterResolver`,
  with the same arguments, except that a process started by Open MPI's
  `mpirun` or by `mpiexec.hydra` inside a Slurm allocation gets the cluster
  of the launcher's ranks, placed by the launcher's rule over the job's nodes
  and checked by every rank (`tf_slurm.launchers.read_launch`), where the
  core refuses.
  """

  def _read_step(self, environ, tasks_per_node):
    """The core's step, or the ranks an MPI launcher placed."""
    return launchers.read_step(environ, tasks_per_node, self._expand)
