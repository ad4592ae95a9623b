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
"""Builds the tf-slurm-resolver wheel; the metadata is in pyproject.toml.

Besides pip_package/tf_slurm_resolver, the wheel gets, copied at build time
so that the repository keeps one copy of each:
- `tf_overlay.py` as `tf_slurm_resolver/tf_overlay.py`: its root is the folder
  it is in, so there it serves `tf_slurm_resolver/tensorflow/`;
- every `tensorflow/**.py` module of the repository except tests, under
  `tf_slurm_resolver/tensorflow/` (no `__init__.py`, as in the repository);
- `pip_package/tf_slurm_resolver.pth` at the top of site-packages: the line
  that installs the overlay when Python starts.
Nothing goes into a `tensorflow/` folder of site-packages.
"""

import glob
import os

import setuptools
from setuptools.command import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = 'tf_slurm_resolver'


def overlay_files(root=ROOT):
  """Files copied into the package: [(path in the repo, path in PACKAGE)]."""
  files = [('tf_overlay.py', 'tf_overlay.py')]
  for path in sorted(glob.glob(os.path.join(root, 'tensorflow', '**', '*.py'),
                               recursive=True)):
    relative = os.path.relpath(path, root)
    if not relative.endswith('_test.py'):
      files.append((relative, relative))
  return files


class BuildPy(build_py.build_py):
  """build_py that also copies the overlay, the modules and the .pth."""

  def run(self):
    super().run()
    for source, target in overlay_files():
      target = os.path.join(self.build_lib, PACKAGE, target)
      self.mkpath(os.path.dirname(target))
      self.copy_file(os.path.join(ROOT, source), target)
    self.copy_file(os.path.join(ROOT, 'pip_package', PACKAGE + '.pth'),
                   os.path.join(self.build_lib, PACKAGE + '.pth'))


setuptools.setup(cmdclass={'build_py': BuildPy})
