"""Installs the TensorFlow overlay in every Python run with this repo on PYTHONPATH.

Python imports `sitecustomize` at start-up. Bazel puts the runfiles copy of
this repository's root on PYTHONPATH; for plain Python use
`PYTHONPATH=<repo> .venv/bin/python ...`. See tf_overlay.py.
"""

import tf_overlay

tf_overlay.install()
