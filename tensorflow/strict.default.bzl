"""Stand-in for TensorFlow's file of this name (offline workspace only).

Not part of the patch: see tools/bazel/tensorflow_stand_ins.bzl.
"""

load(
    "//tools/bazel:tensorflow_stand_ins.bzl",
    _py_strict_binary = "py_strict_binary",
    _py_strict_library = "py_strict_library",
)

py_strict_binary = _py_strict_binary
py_strict_library = _py_strict_library
