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
"""The companion of TensorFlow's SlurmClusterResolver: what the core leaves out.

- `tf_slurm.resolver.SlurmClusterResolver`: the core resolver that also
  places the ranks of Open MPI's `mpirun` and `mpiexec.hydra`
  (`tf_slurm.launchers`), which the core refuses, and takes
  `hostlist_expansion` ('builtin', 'scontrol', 'check': `tf_slurm.scontrol`);
- `python -m tf_slurm.explain`: what the resolver reads and decides for a
  task, or its `TF_CONFIG`.

- `tf_slurm.termination.SlurmTerminationConfig`: a `TerminationConfig`
  that saves on Slurm's early warning and SIGTERM, then requeues the job
  once (`scontrol requeue`, or exit 43 for the batch script).

The core is `tf.distribute.cluster_resolver.SlurmClusterResolver` of the
TensorFlow tree (served over pip TensorFlow by the overlay of the
`tf-slurm-resolver` package, which installs this package too), and
`TerminationConfig(termination_signals=...)` of its `failure_handling`
package (in the patch only: pip TensorFlow's lacks the argument).

TensorFlow is imported first: while it starts, the overlay's API modules
take the companion's classes from their modules, which must not be half
imported then (as they would be if a program imported one of them first).
"""

import tensorflow  # pylint: disable=unused-import
