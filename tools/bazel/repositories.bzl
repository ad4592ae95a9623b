"""Local repositories for an offline Bazel 4 build against pip TensorFlow.

Bazel 4 wants @rules_cc and @rules_java for toolchain resolution even in a
pure Python build, and @remote_coverage_tools for every test, and declares all
three as downloads. `stub_repository` writes local stand-ins that only forward
to Bazel's native rules (or fail clearly, for coverage). It also writes
@absl_py, whose targets TensorFlow's BUILD files name for absl: empty
libraries, since absl comes from .venv.

`venv_python_repository` writes the interpreter of the Python toolchain in
//tools/bazel: a script running this checkout's .venv/bin/python3.
"""

_FORWARDED_RULES = {
    "rules_cc": ("cc", [
        "cc_binary",
        "cc_import",
        "cc_library",
        "cc_proto_library",
        "cc_test",
        "cc_toolchain",
        "cc_toolchain_suite",
        "fdo_prefetch_hints",
        "fdo_profile",
        "objc_import",
        "objc_library",
    ]),
    "rules_java": ("java", [
        "java_binary",
        "java_import",
        "java_library",
        "java_lite_proto_library",
        "java_package_configuration",
        "java_plugin",
        "java_proto_library",
        "java_runtime",
        "java_test",
        "java_toolchain",
    ]),
}

_CC_TOOLCHAIN_TYPE = """
alias(
    name = "toolchain_type",
    actual = "@bazel_tools//tools/cpp:toolchain_type",
)
"""

_COVERAGE_BUILD = """\
# Stand-in for @remote_coverage_tools: both tools fail with a clear message.
package(default_visibility = ["//visibility:public"])

sh_binary(
    name = "coverage_report_generator",
    srcs = ["fail.sh"],
)

sh_binary(
    name = "lcov_merger",
    srcs = ["fail.sh"],
)
"""

_COVERAGE_FAIL_SH = """\
#!/bin/sh
echo "bazel coverage is not available offline; use coverage.py under pytest." >&2
exit 1
"""

def _stub_repository_impl(ctx):
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    if ctx.attr.kind == "absl_py":
        ctx.file("BUILD", "")
        for pkg, names in _ABSL_TARGETS.items():
            ctx.file(pkg + "/BUILD", _ABSL_BUILD.format(
                names = ", ".join(['"%s"' % n for n in names]),
            ))
        return
    if ctx.attr.kind == "remote_coverage_tools":
        ctx.file("BUILD", _COVERAGE_BUILD)
        ctx.file("fail.sh", _COVERAGE_FAIL_SH, executable = True)
        return
    pkg, rules = _FORWARDED_RULES[ctx.attr.kind]
    ctx.file("BUILD", "")
    ctx.file(pkg + "/defs.bzl", "".join([
        "def {r}(**kwargs):\n    native.{r}(**kwargs)\n\n".format(r = r)
        for r in rules
    ]))
    build = "package(default_visibility = [\"//visibility:public\"])\n"
    if pkg == "cc":
        build += _CC_TOOLCHAIN_TYPE
    ctx.file(pkg + "/BUILD", build)

stub_repository = repository_rule(
    implementation = _stub_repository_impl,
    attrs = {
        "kind": attr.string(
            mandatory = True,
            values = [
                "absl_py",
                "rules_cc",
                "rules_java",
                "remote_coverage_tools",
            ],
        ),
    },
    doc = "A local stand-in for @absl_py, @rules_cc, @rules_java or " +
          "@remote_coverage_tools.",
)

_ABSL_BUILD = """\
# Stand-in for @absl_py: absl itself comes from .venv.
package(default_visibility = ["//visibility:public"])

[py_library(name = n) for n in [{names}]]
"""

# Package of @absl_py -> the targets TensorFlow's BUILD files name there.
_ABSL_TARGETS = {
    "absl": ["app"],
    "absl/flags": ["flags"],
    "absl/logging": ["logging"],
    "absl/testing": ["absltest", "parameterized"],
}

_VENV_PYTHON3 = """\
#!/bin/sh
# Runs the Python of the checkout at {root}
# (written by //tools/bazel:repositories.bzl).
py="{root}/.venv/bin/python3"
if [ ! -x "$py" ]; then
  echo "$py is missing: run tools/test.sh once to create it." >&2
  exit 1
fi
exec "$py" "$@"
"""

def _venv_python_repository_impl(ctx):
    # The checkout's root, wherever it was cloned. Bazel keys its output base
    # on the workspace path, so a clone elsewhere fetches this afresh.
    root = str(ctx.path(Label("@//:WORKSPACE")).dirname)
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("BUILD", "exports_files([\"python3\"])\n")
    ctx.file("python3", _VENV_PYTHON3.format(root = root), executable = True)

venv_python_repository = repository_rule(
    implementation = _venv_python_repository_impl,
    local = True,
    doc = "A `python3` script that execs <workspace root>/.venv/bin/python3.",
)
