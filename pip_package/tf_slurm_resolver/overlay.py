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
`.pth` file runs it when Python starts (see setup.py). Where Python runs no
`.pth` file of the package (a `pip install --target` folder on PYTHONPATH,
`python -S`), a program can call `install()` itself before it imports
TensorFlow; `python -m tf_slurm_resolver` says which resolver is served.

The modules are tested over the TensorFlow releases in TESTED_RELEASES only
(pre-releases and vendors' builds of them included). Over any other, the
finder serves nothing, so TensorFlow keeps its own resolver, and says so once
on stderr, unless the environment variable named by OPT_IN names that release
(major.minor): then it serves the modules and says once that they are
untested there.

Nothing that goes wrong here may break `import tensorflow`: a served module
that fails to import gives way to TensorFlow's own, a companion (tf_slurm)
that is not the one installed with this package or fails to import leaves
the core's resolver published, an unreadable distribution's metadata is
skipped; each says once on stderr (one line) what happened and what to do.
"""

# Imported at every Python start-up (the .pth): only light modules here;
# importlib.metadata only when TensorFlow asks for a served module.
import importlib
import importlib.machinery
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

# This package's folder.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The folder holding the `tensorflow/` tree served: in a wheel, the copy
# beside this file; in a development (editable) install, the repository.
ROOT = next((d for d in (PACKAGE_DIR,
                         os.path.dirname(os.path.dirname(PACKAGE_DIR)))
             if os.path.isdir(os.path.join(d, 'tensorflow'))), None)

# The companion package, installed beside this one (by a wheel) or in the
# repository (a development install).
COMPANION = 'tf_slurm'
# Public names of the companion that the overlay adds to (or replaces in)
# pip TensorFlow's generated API modules: API module -> ((name, defining
# module), ...). Its resolver is the core's with the companion's options and
# the ranks of MPI launchers; its termination config, a TerminationConfig
# that saves on Slurm's warning and SIGTERM (which pip TensorFlow's cannot be
# told to), requeues the job.
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
# What TensorFlow publishes when the companion is left out.
_WITHOUT_COMPANION = (
    'tf.distribute.cluster_resolver.SlurmClusterResolver is the core\'s, '
    'without the companion\'s MPI launchers and scontrol, and '
    'tf.distribute.experimental has no SlurmTerminationConfig')
_REINSTALL = 'fix that error or reinstall tf-slurm-resolver'


def companion_dir(root):
  """The folder of the companion installed with the tree at `root`, or None.

  It lies beside the `tensorflow/` tree served (in the repository, or in a
  tree that `root/tensorflow` links to), or beside `root` (a wheel's
  package, whose `tensorflow/` is a copy).

  Args:
    root: the folder holding the served `tensorflow/` tree.
  """
  tree = os.path.realpath(os.path.join(root, 'tensorflow'))
  for folder in (os.path.join(os.path.dirname(tree), COMPANION),
                 os.path.join(os.path.dirname(root), COMPANION)):
    if os.path.isfile(os.path.join(folder, '__init__.py')):
      return folder
  return None


class _AddingLoader:
  """Runs an API module's own loader, then adds the companion's names."""

  def __init__(self, finder, loader):
    self._finder = finder
    self.loader = loader

  def create_module(self, spec):
    return self.loader.create_module(spec)

  def exec_module(self, module):
    self.loader.exec_module(module)
    self._finder.add_companion(module)

  def __getattr__(self, name):  # get_source, get_filename, ...
    return getattr(self.loader, name)


class _ServedLoader:
  """Loads a served module; if that fails, TensorFlow's own module if any.

  Other attributes (`path`, `get_source`, ...) are its SourceFileLoader's.
  """

  def __init__(self, finder, fullname, filename, parent_path):
    self._finder = finder
    self._loader = importlib.machinery.SourceFileLoader(fullname, filename)
    self._parent_path = parent_path  # To find TensorFlow's module.

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    """Runs the served file in `module`, or TensorFlow's if that fails.

    Args:
      module: the module object the import made.

    Raises:
      Exception: what the served file raised, when TensorFlow has no module
        of that name.
    """
    try:
      self._loader.exec_module(module)
    except Exception as e:  # pylint: disable=broad-except
      cause = self._finder.stop(module.__name__, self._loader.path, e)
      own = self._finder.next_spec(module.__name__, self._parent_path)
      if own is None:
        raise  # Its importer (the core, the companion) says what failed.
      self._finder.say('%s: TensorFlow keeps its own SlurmClusterResolver; '
                       '%s.' % (cause, _REINSTALL))
      # TensorFlow's module, in the module object that the import made.
      for name in list(vars(module)):
        if not (name.startswith('__') and name.endswith('__')):
          delattr(module, name)
      module.__spec__ = own
      module.__loader__ = own.loader
      module.__file__ = own.origin
      module.__cached__ = own.cached
      own.loader.exec_module(module)

  def __getattr__(self, name):  # path, get_source, get_filename, ...
    return getattr(self._loader, name)


def _declared_packages(dist):
  """The top-level packages a distribution's top_level.txt names."""
  return (dist.read_text('top_level.txt') or '').split()


def _recorded_packages(dist):
  """The top-level names of the files a distribution's RECORD lists."""
  return {f.parts[0] for f in dist.files or () if f.parts}


class UnreadableVersionError(ValueError):
  """The metadata of TensorFlow's distribution cannot be read."""


def tensorflow_version():
  """The version of the installed TensorFlow distribution, or None.

  That distribution is the one whose top_level.txt (or else RECORD) names
  the package `tensorflow`, looked for first in the folder holding the
  package `import tensorflow` finds. The metadata of any other distribution
  that cannot be read (not UTF-8, say) is skipped.

  Raises:
    UnreadableVersionError: if the version of that distribution cannot be
      read.
  """
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  folders = list(sys.path)
  try:
    spec = importlib.util.find_spec('tensorflow')
  except (ImportError, ValueError):
    spec = None
  for location in (spec and spec.submodule_search_locations) or ():
    folders.insert(0, os.path.dirname(location))
  distributions = list(metadata.distributions(path=folders))
  for packages in (_declared_packages, _recorded_packages):
    for dist in distributions:
      try:
        if 'tensorflow' not in packages(dist):
          continue
      except Exception:  # pylint: disable=broad-except
        continue  # Not readable: not a distribution this can tell about.
      try:
        return dist.version
      except Exception as e:  # pylint: disable=broad-except
        raise UnreadableVersionError(
            'the version of TensorFlow cannot be read from %s (%s: %s)' %
            (os.path.join(str(getattr(dist, '_path', dist)), 'METADATA'),
             type(e).__name__, e)) from e
  return None


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
  """What to say when `version` is untested, and what is served."""
  if served:
    outcome = 'served all the same, as %s=%s asks.' % (OPT_IN,
                                                       release(version))
  else:
    outcome = 'TensorFlow keeps its own (%s=%s serves it all the same).' % (
        OPT_IN, release(version) or 'X.Y')
  return ('TensorFlow %s is not a release this SlurmClusterResolver is '
          'tested with (%s to %s): %s' %
          (version or '(version unknown)', TESTED_RELEASES[0],
           TESTED_RELEASES[-1], outcome))


def _location(spec):
  """The folder of a package's spec, or the file of a module's."""
  return next(iter(spec.submodule_search_locations or ()), None) or (
      spec.origin)


class _OverlayFinder:
  """A `sys.meta_path` finder of `tensorflow.*` modules under `root`.

  Attributes:
    said: what the finder wrote on stderr (one line at most), or None.
    stopped: why it serves nothing more (a served module failed), or None.
    companion_problem: why the companion's names are not published, or None.
  """

  def __init__(self, root, version_of_tensorflow=tensorflow_version):
    self.root = root
    self._version_of_tensorflow = version_of_tensorflow
    self._serving = None  # Decided when the first module is asked for.
    self.said = None
    self.stopped = None
    self.companion_problem = None
    self._cause = None  # The first failure of a served module.
    self._companion = None  # API module -> ((name, value), ...), once read.
    self._modules = None  # Scanned when TensorFlow is first imported.

  @property
  def modules(self):
    """Module name -> file, for every .py file under <root>/tensorflow.

    The tree is small; scanning it once spares a stat per TensorFlow import,
    and scanning it only then spares Python start-up the scan.
    """
    if self._modules is None:
      self._modules = {}
      for dirpath, _, filenames in os.walk(os.path.join(self.root,
                                                        'tensorflow')):
        package = os.path.relpath(dirpath, self.root).replace(os.sep, '.')
        for filename in filenames:
          if filename.endswith('.py'):
            self._modules[package + '.' + filename[:-3]] = os.path.join(
                dirpath, filename)
    return self._modules

  def say(self, text):
    """Writes `text` as the finder's one line on stderr, if none was."""
    if self.said is None:
      self.said = text
      sys.stderr.write('tf_slurm_resolver: %s\n' % text)

  def serving(self):
    """Whether the finder serves its modules.

    It does over a tested release of TensorFlow, and over the untested one
    that the OPT_IN variable names. Decided once; the first time over an
    untested release, or when the version cannot be read, says so on stderr.
    """
    if self._serving is None:
      try:
        version = self._version_of_tensorflow()
      except Exception as e:  # pylint: disable=broad-except
        self._serving = False
        self.say('%s: TensorFlow keeps its own SlurmClusterResolver; repair or '
                 'reinstall that distribution.' % (
                     e if isinstance(e, UnreadableVersionError) else
                     'the version of TensorFlow cannot be read (%s: %s)' %
                     (type(e).__name__, e)))
        return False
      self._serving = is_tested(version)
      if not self._serving:
        self._serving = (release(version) is not None and
                         os.environ.get(OPT_IN) == release(version))
        self.say(_untested_notice(version, self._serving))
    return self._serving

  def stop(self, fullname, filename, error):
    """Serves nothing more after `fullname` failed; the first failure."""
    if self._cause is None:
      self._cause = '%s (%s) failed to import (%s: %s)' % (
          fullname, filename, type(error).__name__, error)
    self.stopped = self.stopped or self._cause
    return self._cause

  def find_spec(self, fullname, path=None, target=None):
    """A served module's spec, an API module's, or None; never raises."""
    if self.stopped or not fullname.startswith('tensorflow.'):
      return None
    try:
      if fullname in API_ADDITIONS:
        return self._api_spec(fullname, path, target)
      filename = self.modules.get(fullname)
      if filename is None or not self.serving():
        return None
      return importlib.util.spec_from_file_location(
          fullname, filename,
          loader=_ServedLoader(self, fullname, filename, path))
    except Exception as e:  # pylint: disable=broad-except
      self.stopped = self.stopped or 'looking up %s failed (%s: %s)' % (
          fullname, type(e).__name__, e)
      self.say('%s: the overlay serves nothing more, TensorFlow its own '
               'modules; %s.' % (self.stopped, _REINSTALL))
      return None

  def next_spec(self, fullname, path, target=None):
    """The spec of `fullname` that the finders after this one give."""
    for finder in sys.meta_path:
      if finder is self or not hasattr(finder, 'find_spec'):
        continue
      spec = finder.find_spec(fullname, path, target)
      if spec is not None:
        return spec
    return None

  def _api_spec(self, fullname, path, target):
    """pip's spec of an API module, loaded by an `_AddingLoader`."""
    if not self.serving():
      return None
    spec = self.next_spec(fullname, path, target)
    if spec is not None:
      spec.loader = _AddingLoader(self, spec.loader)
    return spec

  def add_companion(self, module):
    """Sets the companion's names in API module `module`, if it can."""
    additions = self.companion().get(module.__name__, ())
    # A v1 API module puts a wrapper of itself in sys.modules, which keeps
    # its own copy of the module's names: set them in both.
    targets = {id(t): t for t in (module, sys.modules.get(module.__name__))
               if t is not None}
    for name, value in additions:
      try:
        for target in targets.values():
          setattr(target, name, value)
      except Exception as e:  # pylint: disable=broad-except
        self._leave_companion('%s could not be set in %s (%s: %s)' % (
            name, module.__name__, type(e).__name__, e), _REINSTALL)
        return

  def companion(self):
    """API module -> ((name, value), ...) of the companion; read once.

    Empty, and said once on stderr, when the importable `tf_slurm` is not
    the companion installed with this package or fails to import.
    """
    if self._companion is not None:
      return self._companion
    self._companion = {}
    if self.stopped:
      return self._companion
    expected = companion_dir(self.root)
    try:
      spec = importlib.util.find_spec(COMPANION)
      if spec is None and expected is None:
        # Nothing to publish, nothing in the way: the core is served.
        self.companion_problem = (
            'no companion %s is installed beside %s: %s.' %
            (COMPANION, self.root, _WITHOUT_COMPANION))
        return self._companion
      if spec is None:
        problem = ('the companion %s (%s) is not on sys.path' %
                   (COMPANION, expected), _REINSTALL)
      elif (not spec.origin or expected is None or
            os.path.realpath(spec.origin) !=
            os.path.realpath(os.path.join(expected, '__init__.py'))):
        problem = ('the %s on sys.path is %s, not the companion installed '
                   'with tf-slurm-resolver (%s)' %
                   (COMPANION, _location(spec),
                    expected or 'none beside %s' % self.root),
                   'rename or move that %s, or run from another folder' %
                   COMPANION)
      else:
        values = {}
        for api, names in API_ADDITIONS.items():
          values[api] = tuple(
              (name, getattr(importlib.import_module(source), name))
              for name, source in names)
        self._companion = values
        return values
    except Exception as e:  # pylint: disable=broad-except
      problem = ('the companion %s (%s) failed to import (%s)' % (
          COMPANION, expected, self._cause or '%s: %s' % (
              type(e).__name__, e)), _REINSTALL)
    self._leave_companion(*problem)
    return self._companion

  def publishes(self, value):
    """Whether `value` is a name of the companion this finder publishes."""
    return any(value is v for names in (self._companion or {}).values()
               for _, v in names)

  def serves(self, module):
    """Whether `module` was loaded from this finder's tree."""
    return isinstance(getattr(module, '__loader__', None), _ServedLoader)

  def _leave_companion(self, problem, todo):
    self.companion_problem = problem
    self.say('%s: %s; %s.' % (problem, _WITHOUT_COMPANION, todo))


def installed_finder():
  """The overlay's finder on `sys.meta_path`, or None."""
  return next((f for f in sys.meta_path if isinstance(f, _OverlayFinder)),
              None)


def install(root=None):
  """Puts the overlay finder first on `sys.meta_path`; idempotent.

  The package's `.pth` file calls it when Python starts. Where Python runs
  no `.pth` file of the package (a `pip install --target` folder on
  PYTHONPATH, `python -S`), a program can call it before it imports
  TensorFlow.

  Args:
    root: the folder holding the `tensorflow/` tree to serve (default: ROOT).

  Raises:
    RuntimeError: if `tensorflow` was imported before, or there is no tree.
  """
  if installed_finder() is not None:
    return
  root = root or ROOT
  if root is None or not os.path.isdir(os.path.join(root, 'tensorflow')):
    raise RuntimeError('no tensorflow/ folder to serve beside %s' %
                       PACKAGE_DIR)
  if 'tensorflow' in sys.modules:
    raise RuntimeError(
        'tensorflow was imported before the overlay was installed: the '
        'repository\'s modules would not replace pip TensorFlow\'s.')
  sys.meta_path.insert(0, _OverlayFinder(root))
