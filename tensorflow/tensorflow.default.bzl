"""Stand-in for TensorFlow's file of this name (offline workspace only).

Not part of the patch: see tools/bazel/tensorflow_stand_ins.bzl.
"""

load(
    "//tools/bazel:tensorflow_stand_ins.bzl",
    _tf_py_strict_test = "tf_py_strict_test",
)

tf_py_strict_test = _tf_py_strict_test
