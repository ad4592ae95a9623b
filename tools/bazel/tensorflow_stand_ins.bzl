"""TensorFlow's Python rule kinds, as stand-ins for the offline workspace.

tensorflow/strict.default.bzl and tensorflow/tensorflow.default.bzl of this
repository (not part of the patch) re-export these under TensorFlow's names,
so that the Slurm targets of tensorflow/python/distribute/cluster_resolver/
BUILD are written as in TensorFlow's tree and that BUILD goes into the patch
as it is. Here each kind is the native rule, run by the .venv Python (whose
editable install's .pth serves this repository's modules over pip
TensorFlow); every target depends on //:tf_slurm_resolver, so that a change
of the overlay re-runs the tests.

`pip_tensorflow_targets` declares TensorFlow's own targets that the Slurm
targets depend on (//tensorflow/python/platform:tf_logging, ...): empty
libraries, since their modules come from pip TensorFlow.
"""

_OVERLAY = "//:tf_slurm_resolver"

# Attributes of TensorFlow's test macros that native py_test lacks.
_TF_ONLY_TEST_ATTRIBUTES = (
    "grpc_enabled",
    "xla_enabled",
    "xla_enable_strict_auto_jit",
)

def _with_overlay(kwargs):
    kwargs["deps"] = kwargs.get("deps", []) + [_OVERLAY]
    kwargs.setdefault("srcs_version", "PY3")
    return kwargs

def py_strict_library(**kwargs):
    native.py_library(**_with_overlay(kwargs))

def py_strict_binary(**kwargs):
    kwargs.setdefault("python_version", "PY3")
    native.py_binary(**_with_overlay(kwargs))

def tf_py_strict_test(**kwargs):
    for name in _TF_ONLY_TEST_ATTRIBUTES:
        kwargs.pop(name, None)
    kwargs.setdefault("python_version", "PY3")
    native.py_test(**_with_overlay(kwargs))

def pip_tensorflow_targets(names):
    for name in names:
        native.py_library(name = name, visibility = ["//visibility:public"])
