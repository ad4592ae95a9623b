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

Besides pip_package/tf_slurm_resolver and the companion tf_slurm (without its
tests), a wheel gets, copied at build time so
that the repository keeps one copy of each:
- every `tensorflow/**.py` module of the repository except tests, under
  `tf_slurm_resolver/tensorflow/` (no `__init__.py`, as in the repository);
- `pip_package/tf_slurm_resolver.pth` at the top of site-packages: the line
  that installs the overlay when Python starts.
An editable wheel (`pip install -e`, as tools/setup.sh makes for .venv) gets
the same `.pth`; its overlay serves the repository's own files.
Nothing goes into a `tensorflow/` folder of site-packages.
"""

import glob
import os

import setuptools
from setuptools.command import build_py
from setuptools.command import editable_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = 'tf_slurm_resolver'
PTH = os.path.join(ROOT, 'pip_package', PACKAGE + '.pth')


def overlay_files(root=ROOT):
  """The modules copied into the package: paths relative to `root`."""
  files = []
  for path in sorted(glob.glob(os.path.join(root, 'tensorflow', '**', '*.py'),
                               recursive=True)):
    relative = os.path.relpath(path, root)
    if not relative.endswith('_test.py'):
      files.append(relative)
  return files


class BuildPy(build_py.build_py):
  """build_py that also copies the modules and the .pth; no tests."""

  def find_package_modules(self, package, package_dir):
    return [module for module in super().find_package_modules(
        package, package_dir) if not module[1].endswith('_test')]

  def run(self):
    super().run()
    if getattr(self, 'editable_mode', False):
      return  # The overlay serves the repository's files.
    for relative in overlay_files():
      target = os.path.join(self.build_lib, PACKAGE, relative)
      self.mkpath(os.path.dirname(target))
      self.copy_file(os.path.join(ROOT, relative), target)
    self.copy_file(PTH, os.path.join(self.build_lib, PACKAGE + '.pth'))


class _WithPth:
  """An editable-install strategy that also writes the package's .pth."""

  def __init__(self, strategy):
    self.strategy = strategy

  def __call__(self, wheel, files, mapping):
    self.strategy(wheel, files, mapping)
    with open(PTH, encoding='utf-8') as f:
      wheel.writestr(PACKAGE + '.pth', f.read())

  def __enter__(self):
    self.strategy.__enter__()
    return self

  def __exit__(self, *exc_info):
    return self.strategy.__exit__(*exc_info)


class EditableWheel(editable_wheel.editable_wheel):
  """editable_wheel whose wheel has the .pth too (setuptools >= 64)."""

  def _select_strategy(self, *args, **kwargs):
    return _WithPth(super()._select_strategy(*args, **kwargs))


setuptools.setup(cmdclass={'build_py': BuildPy,
                           'editable_wheel': EditableWheel})
