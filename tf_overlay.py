"""Serves this repository's `tensorflow.*` modules in place of pip TensorFlow's.

The repository holds only the files the patch changes, laid out as in the
TensorFlow tree and with no `__init__.py` (an empty `tensorflow/__init__.py`
would hide pip TensorFlow). `install()` puts a finder first on `sys.meta_path`
that serves any `tensorflow.*` module whose `.py` file exists here from that
file; every other module falls through to pip TensorFlow; the public names
of new modules (API_ADDITIONS) are added to pip's generated API modules. It
must run before `tensorflow` is first imported, since TensorFlow's own
start-up imports `cluster_resolver/slurm_cluster_resolver.py` and copies its
names into `tf.distribute.cluster_resolver`: `sitecustomize.py` and
`conftest.py` call it.
The pip package ships a copy of this file, as `tf_slurm_resolver.tf_overlay`
beside a copy of the `tensorflow/` tree (ROOT is then that package's folder),
and calls it from a `.pth` file (see setup.py).
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys

# The repository root: the folder of this file (in Bazel, its runfiles copy).
ROOT = os.path.dirname(os.path.abspath(__file__))

# Public names that the repository adds to pip TensorFlow's generated API
# modules (in a TensorFlow tree, the API generator adds them from the
# module's `tf_export`): API module -> ((name, defining module), ...).
_SLURM_TERMINATION_CONFIG = (
    ('SlurmTerminationConfig',
     'tensorflow.python.distribute.failure_handling.slurm_termination_config'),
)
API_ADDITIONS = {
    'tensorflow._api.v2.distribute.experimental': _SLURM_TERMINATION_CONFIG,
    'tensorflow._api.v2.compat.v2.distribute.experimental':
        _SLURM_TERMINATION_CONFIG,
}


class _AddingLoader(importlib.abc.Loader):
  """Runs an API module's own loader, then adds API_ADDITIONS' names."""

  def __init__(self, loader, additions):
    self.loader = loader
    self.additions = additions

  def create_module(self, spec):
    return self.loader.create_module(spec)

  def exec_module(self, module):
    self.loader.exec_module(module)
    for name, source in self.additions:
      setattr(module, name, getattr(importlib.import_module(source), name))

  def __getattr__(self, name):  # get_source, get_filename, ...
    return getattr(self.loader, name)


class _OverlayFinder(importlib.abc.MetaPathFinder):
  """Finds `tensorflow.*` modules among this repository's files."""

  def __init__(self, root):
    self.root = root
    # Module name -> file, for every .py file under <root>/tensorflow. The
    # tree is small; scanning it once spares a stat per TensorFlow import.
    self.modules = {}
    for dirpath, _, filenames in os.walk(os.path.join(root, "tensorflow")):
      package = os.path.relpath(dirpath, root).replace(os.sep, ".")
      for filename in filenames:
        if filename.endswith(".py"):
          self.modules[package + "." + filename[:-3]] = os.path.join(
              dirpath, filename)

  def find_spec(self, fullname, path=None, target=None):
    # Only names of modules this root has (a patched tree may lack them).
    additions = tuple((name, source)
                      for name, source in API_ADDITIONS.get(fullname, ())
                      if source in self.modules)
    if additions:
      return self._api_spec(fullname, path, target, additions)
    filename = self.modules.get(fullname)
    if filename is None:
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


def install(root=ROOT):
  """Puts the overlay finder first on `sys.meta_path`; idempotent.

  Args:
    root: the folder holding the overlay's `tensorflow/` tree.

  Raises:
    RuntimeError: if `tensorflow` was imported before the overlay.
  """
  if any(isinstance(f, _OverlayFinder) for f in sys.meta_path):
    return
  if "tensorflow" in sys.modules:
    raise RuntimeError(
        "tensorflow was imported before tf_overlay.install(): the repository's "
        "modules would not replace pip TensorFlow's.")
  sys.meta_path.insert(0, _OverlayFinder(root))
