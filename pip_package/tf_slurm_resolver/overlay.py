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
"""Serves the repository's `tensorflow.*` modules in place of pip TensorFlow's.

The repository holds only the files the patch changes, laid out as in the
TensorFlow tree and with no `__init__.py` (an empty `tensorflow/__init__.py`
would hide pip TensorFlow). `install()` puts a finder first on
`sys.meta_path` that serves any `tensorflow.*` module whose `.py` file exists
under ROOT from that file; every other module falls through to pip
TensorFlow. It must run before `tensorflow` is first imported, since
TensorFlow's own start-up imports `cluster_resolver/slurm_cluster_resolver.py`
and copies its names into `tf.distribute.cluster_resolver`: the package's
`.pth` file runs it when Python starts (see setup.py).

The modules are tested over the TensorFlow releases in TESTED_RELEASES only
(pre-releases and vendors' builds of them included). Over any other, the
finder serves nothing, so TensorFlow keeps its own resolver, and says so once
on stderr, unless the environment variable named by OPT_IN names that release
(major.minor): then it serves the modules and says once that they are
untested there.
"""

# Imported at every Python start-up (the .pth): only light modules here;
# importlib.metadata only when TensorFlow asks for a served module.
import importlib
import importlib.util
import os
import re
import sys

# TensorFlow releases (major.minor) the modules are tested with. CI runs the
# tests over the pin of each requirements*.txt (tests/overlay_test.py checks
# that they are all here): 2.15, 2.17, 2.19, 2.21 and 2.22; the releases
# between them ship the same TensorFlow files the modules build on.
TESTED_RELEASES = ('2.15', '2.16', '2.17', '2.18', '2.19', '2.20', '2.21',
                   '2.22')
# Set to an untested release (e.g. '2.23'), serves the modules over it.
OPT_IN = 'TF_SLURM_RESOLVER_UNTESTED_RELEASE'

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The folder holding the `tensorflow/` tree served: in a wheel, the copy
# beside this file; in a development (editable) install, the repository.
ROOT = next((d for d in (_PACKAGE_DIR,
                         os.path.dirname(os.path.dirname(_PACKAGE_DIR)))
             if os.path.isdir(os.path.join(d, 'tensorflow'))), None)


# Public names of the companion (tf_slurm) that the overlay adds to (or
# replaces in) pip TensorFlow's generated API modules, where the companion
# is installed: API module -> ((name, defining module), ...). Its resolver
# is the core's, with the ranks of MPI launchers; its termination config, a
# TerminationConfig that saves on Slurm's warning and SIGTERM (which pip
# TensorFlow's cannot be told to), requeues the job.
_COMPANION_TERMINATION_CONFIG = (
    ('SlurmTerminationConfig', 'tf_slurm.termination'),)
_COMPANION_RESOLVER = (('SlurmClusterResolver', 'tf_slurm.resolver'),)
API_ADDITIONS = {
    'tensorflow._api.v2.distribute.experimental':
        _COMPANION_TERMINATION_CONFIG,
    'tensorflow._api.v2.compat.v2.distribute.experimental':
        _COMPANION_TERMINATION_CONFIG,
    'tensorflow._api.v2.distribute.cluster_resolver': _COMPANION_RESOLVER,
    'tensorflow._api.v2.compat.v1.distribute.cluster_resolver':
        _COMPANION_RESOLVER,
    'tensorflow._api.v2.compat.v2.distribute.cluster_resolver':
        _COMPANION_RESOLVER,
}


class _AddingLoader:
  """Runs an API module's own loader, then adds API_ADDITIONS' names."""

  def __init__(self, loader, additions):
    self.loader = loader
    self.additions = additions

  def create_module(self, spec):
    return self.loader.create_module(spec)

  def exec_module(self, module):
    self.loader.exec_module(module)
    # A v1 API module puts a wrapper of itself in sys.modules, which keeps
    # its own copy of the module's names: set them in both.
    targets = {id(t): t for t in (module, sys.modules.get(module.__name__))
               if t is not None}
    for name, source in self.additions:
      value = getattr(importlib.import_module(source), name)
      for target in targets.values():
        setattr(target, name, value)

  def __getattr__(self, name):  # get_source, get_filename, ...
    return getattr(self.loader, name)


def tensorflow_version():
  """The version of the installed TensorFlow distribution, or None."""
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  names = metadata.packages_distributions().get('tensorflow')
  return metadata.version(names[0]) if names else None


def release(version):
  """The major.minor of a version string, or None.

  Args:
    version: as distributions write it: '2.21.0', '2.22.0rc0', '2.22.0-rc0',
      '2.17.0+nv24.08', '2.15.0.post1', '2.21'; or None.
  """
  match = re.match(r'(\d+)\.(\d+)(?!\d)', version or '')
  return match and '%s.%s' % match.groups()


def is_tested(version):
  """Whether `version` ('2.21.0') is of a release in TESTED_RELEASES."""
  return release(version) in TESTED_RELEASES


def _untested_notice(version, served):
  """The line saying that `version` is untested, and what is served."""
  if served:
    outcome = 'served all the same, as %s=%s asks.' % (OPT_IN,
                                                       release(version))
  else:
    outcome = 'TensorFlow keeps its own (%s=%s serves it all the same).' % (
        OPT_IN, release(version) or 'X.Y')
  return ('tf_slurm_resolver: TensorFlow %s is not a release this '
          'SlurmClusterResolver is tested with (%s to %s): %s\n' %
          (version or '(version unknown)', TESTED_RELEASES[0],
           TESTED_RELEASES[-1], outcome))


def _is_installed(module):
  """Whether `module`'s top package can be imported (not importing it)."""
  return importlib.util.find_spec(module.split('.')[0]) is not None


class _OverlayFinder:
  """A `sys.meta_path` finder of `tensorflow.*` modules under `root`."""

  def __init__(self, root, version_of_tensorflow=tensorflow_version):
    self.root = root
    self._version_of_tensorflow = version_of_tensorflow
    self._serving = None  # Decided when the first module is asked for.
    # Module name -> file, for every .py file under <root>/tensorflow. The
    # tree is small; scanning it once spares a stat per TensorFlow import.
    self.modules = {}
    for dirpath, _, filenames in os.walk(os.path.join(root, 'tensorflow')):
      package = os.path.relpath(dirpath, root).replace(os.sep, '.')
      for filename in filenames:
        if filename.endswith('.py'):
          self.modules[package + '.' + filename[:-3]] = os.path.join(
              dirpath, filename)

  def serving(self):
    """Whether the finder serves its modules.

    It does over a tested release of TensorFlow, and over the untested one
    that the OPT_IN variable names. Decided once; the first time over an
    untested release, says so on stderr.
    """
    if self._serving is None:
      version = self._version_of_tensorflow()
      self._serving = is_tested(version)
      if not self._serving:
        self._serving = (release(version) is not None and
                         os.environ.get(OPT_IN) == release(version))
        sys.stderr.write(_untested_notice(version, self._serving))
    return self._serving

  def find_spec(self, fullname, path=None, target=None):
    # API modules: the companion's names, where it is installed.
    additions = tuple((name, source)
                      for name, source in API_ADDITIONS.get(fullname, ())
                      if _is_installed(source))
    if additions and self.serving():
      return self._api_spec(fullname, path, target, additions)
    filename = self.modules.get(fullname)
    if filename is None or not self.serving():
      return None
    return importlib.util.spec_from_file_location(fullname, filename)

  def _api_spec(self, fullname, path, target, additions):
    """pip's spec of an API module, loaded by an `_AddingLoader`."""
    for finder in sys.meta_path:
      if finder is self or not hasattr(finder, 'find_spec'):
        continue
      spec = finder.find_spec(fullname, path, target)
      if spec is not None:
        spec.loader = _AddingLoader(spec.loader, additions)
        return spec
    return None


def install(root=None):
  """Puts the overlay finder first on `sys.meta_path`; idempotent.

  Args:
    root: the folder holding the `tensorflow/` tree to serve (default: ROOT).

  Raises:
    RuntimeError: if `tensorflow` was imported before, or there is no tree.
  """
  if any(isinstance(f, _OverlayFinder) for f in sys.meta_path):
    return
  root = root or ROOT
  if root is None or not os.path.isdir(os.path.join(root, 'tensorflow')):
    raise RuntimeError('no tensorflow/ folder to serve beside %s' %
                       _PACKAGE_DIR)
  if 'tensorflow' in sys.modules:
    raise RuntimeError(
        'tensorflow was imported before the overlay was installed: the '
        'repository\'s modules would not replace pip TensorFlow\'s.')
  sys.meta_path.insert(0, _OverlayFinder(root))
