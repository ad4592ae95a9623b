"""Installs the TensorFlow overlay in every Python run with this repo on PYTHONPATH.

Python imports `sitecustomize` at start-up. Bazel puts the runfiles copy of
this repository's root on PYTHONPATH; for plain Python use
`PYTHONPATH=<repo> .venv/bin/python ...`. See tf_overlay.py. (Installed with
pip, the overlay starts from a `.pth` file instead: see pyproject.toml.)

Python imports only the first `sitecustomize` on `sys.path`, so this one would
hide any other (e.g. Debian's /usr/lib/python3.X/sitecustomize.py, or a site's
own): after installing the overlay, it runs the next `sitecustomize` found on
`sys.path` after this file's folder, if there is one.
"""

import importlib.machinery
import importlib.util
import os
import sys

import tf_overlay

tf_overlay.install()


def _run_next_sitecustomize():
  """Runs the `sitecustomize` that this module hides, if any."""
  this_file = os.path.realpath(os.path.abspath(__file__))
  # Not dirname(this_file): in Bazel's runfiles this file is a symlink.
  here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
  folders = [os.path.realpath(entry or os.getcwd()) for entry in sys.path]
  if here not in folders:
    return  # Not imported from sys.path (not Python's start-up module).
  for entry in sys.path[folders.index(here) + 1:]:
    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', [entry])
    if spec is None or spec.origin is None:
      continue
    if os.path.realpath(spec.origin) == this_file:
      continue  # The repository is on sys.path more than once.
    module = importlib.util.module_from_spec(spec)
    # Run as Python would import it; this module stays
    # sys.modules['sitecustomize'].
    spec.loader.exec_module(module)
    return


_run_next_sitecustomize()
