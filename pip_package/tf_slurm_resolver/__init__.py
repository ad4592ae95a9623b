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
"""This repository's SlurmClusterResolver for an installed pip TensorFlow.

`pip install` of the repository (or of its wheel) into an environment that
has TensorFlow 2.15 to 2.22 installs this package and `tf_slurm_resolver.pth`
beside it in site-packages; `pip install -e` of the repository
(tools/setup.sh does so into .venv) installs the same `.pth` and serves the
repository's files themselves. A wheel holds a copy of the repository's
`tensorflow/**.py` modules under `tf_slurm_resolver/tensorflow/` (a plain
folder: `import tensorflow` still finds pip TensorFlow), and the companion
`tf_slurm` beside this package. The `.pth` line runs
`tf_slurm_resolver._startup` when Python starts, before any program can
import TensorFlow; it installs `tf_slurm_resolver.overlay`, whose finder,
first on `sys.meta_path`, makes TensorFlow's own start-up load the resolver
from here, so that `tf.distribute.cluster_resolver.SlurmClusterResolver` is
this one (over the TensorFlow releases it is tested with:
`overlay.TESTED_RELEASES`). Nothing is written into TensorFlow's folders:
`pip uninstall tf-slurm-resolver` restores TensorFlow's resolver.

`python -m tf_slurm_resolver` (`__main__.py`) says which resolver TensorFlow
serves in the Python that runs it, from which file, and why when it is not
this package's. Python runs a `.pth` file only in a site directory: where the
package is elsewhere on the path (`pip install --target` plus PYTHONPATH), a
program serves it by calling `tf_slurm_resolver.overlay.install()` before it
imports TensorFlow.
"""
