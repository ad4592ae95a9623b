"""Turns this repository's tensorflow/ files into a patch for a TensorFlow tree.

    .venv/bin/python tools/make_tf_patch.py --tf-version 2.21 \\
        --tf-tree ~/src/tensorflow --out slurm.patch
    cd ~/src/tensorflow && git apply --check slurm.patch && git apply slurm.patch

The patch is a git-style unified diff (`git apply`, or `patch -p1`) that,
against a TensorFlow tree of the given release, in
tensorflow/python/distribute/cluster_resolver/:
  - replaces slurm_cluster_resolver.py and slurm_cluster_resolver_test.py
    with this repository's (their license headers stay TensorFlow's; the
    tool refuses a repository file whose header differs from the tree's);
  - adds the modules slurm_hostlist.py, slurm_step.py, slurm_launcher.py,
    slurm_explain.py (the command `python -m ...slurm_explain`), the test
    helpers slurm_test_util.py and slurm_resolver_test_util.py, and the
    tests slurm_hostlist_test.py, slurm_step_test.py, slurm_launcher_test.py,
    slurm_explain_test.py and the resolver's tests beside TensorFlow's
    (slurm_*_test.py: TARGETS);
  - edits that folder's BUILD: the `deps` of the existing targets
    `slurm_cluster_resolver_py` and `slurm_cluster_resolver_py_test` (the
    tree's rule kinds, attributes and labels stay; labels for imports the
    files add are added with the release's label names, labels of imports
    they dropped are removed), and adds a target for every new file, just
    before those two, in the tree's own rule kinds: the kind of
    `slurm_cluster_resolver_py` for libraries, that of its test for tests,
    and the matching binary kind (for TensorFlow 2.21 `py_strict_binary`,
    added to the load of the .bzl file that gives `py_strict_library`: an
    assumption, which the patch's notes state); their deps are computed from
    their imports the same way (TARGETS);
  - replaces README_Slurm.md (the resolver's user doc) with this
    repository's;
and, elsewhere in the tree:
  - replaces the v1 and v2 API goldens of the class
    (tensorflow/tools/api/golden/v*/tensorflow.distribute.cluster_resolver.
    -slurm-cluster-resolver.pbtxt), spelled in the tree's style;
  - adds the release note (tools/tf_release_note.md) to the tree's
    RELEASE.md, under its topmost "# Release ..." heading: each "## X"
    section of the note goes to the end of the release's subsection of that
    title (or an alias, RELEASE_SUBSECTIONS), which is added if missing.
It leaves out everything that only serves this repository: the import
overlay (tf_overlay.py, sitecustomize.py, conftest.py), the Bazel workspace
(WORKSPACE, BUILD files, tools/bazel), tests/ and their fixtures, the goldens'
BUILD, tools/, docs and examples.

The diff needs the release's original files. With `--tf-tree` it takes them
from that checkout: the patch is then exact. Without it, it builds them from
the installed pip TensorFlow, which must be of that release: the module is
pip's own file, the goldens are generated from pip's class, and the BUILD
targets are rebuilt from the release's facts (RELEASES). Pip ships neither
the test file nor README_Slurm.md, so the patch then adds them as new files
(which a real checkout, which has them, refuses: use `--tf-tree` there), and
it has no RELEASE.md, so the release note is left out (the notes say so).
The same pip-built tree, `pip_tree_files()`, is what the check
(tests/tf_patch_test.py, or `--check`) applies the patch to, with `git
apply` and with `patch -p1`; it then runs every carried test file
(slurm_*_test.py) of the patched tree in a Python that serves `tensorflow.*`
from that tree over pip TensorFlow, with nothing of this repository on its
import path (`run_carried_tests`).
"""

import argparse
import ast
import collections
import difflib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
  from tools import api_golden  # Imported as tools.make_tf_patch.
except ImportError:
  import api_golden  # Run as a script: tools/ is sys.path[0].

# The repository root: the parent of this file's folder.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PACKAGE = 'tensorflow/python/distribute/cluster_resolver'
MODULE = PACKAGE + '/slurm_cluster_resolver.py'
TEST = PACKAGE + '/slurm_cluster_resolver_test.py'
README = PACKAGE + '/README_Slurm.md'
BUILD = PACKAGE + '/BUILD'
RELEASE_NOTES = 'RELEASE.md'
# This repository's entry for RELEASE_NOTES.
RELEASE_NOTE = 'tools/tf_release_note.md'
GOLDENS = tuple(
    api_golden.golden_relpath(api, symbol) for api, symbol in api_golden.SYMBOLS)
LIBRARY_TARGET = 'slurm_cluster_resolver_py'
TEST_TARGET = 'slurm_cluster_resolver_py_test'

# The Bazel targets of the package's Slurm files, in the order they are
# added. `role` is 'library', 'test_library' (testonly), 'binary' or 'test';
# a tree that lacks a target gets it just before LIBRARY_TARGET (libraries
# and the binary) or before TEST_TARGET (test helpers and tests).
Target = collections.namedtuple('Target', ['name', 'role', 'src'])

TARGETS = (
    Target('slurm_cluster_resolver_py', 'library', 'slurm_cluster_resolver.py'),
    Target('slurm_hostlist_py', 'library', 'slurm_hostlist.py'),
    Target('slurm_step_py', 'library', 'slurm_step.py'),
    Target('slurm_launcher_py', 'library', 'slurm_launcher.py'),
    Target('slurm_explain', 'binary', 'slurm_explain.py'),
    Target('slurm_cluster_resolver_py_test', 'test',
           'slurm_cluster_resolver_test.py'),
    Target('slurm_test_util', 'test_library', 'slurm_test_util.py'),
    Target('slurm_resolver_test_util', 'test_library',
           'slurm_resolver_test_util.py'),
    Target('slurm_hostlist_py_test', 'test', 'slurm_hostlist_test.py'),
    Target('slurm_step_py_test', 'test', 'slurm_step_test.py'),
    Target('slurm_resolver_api_test', 'test', 'slurm_resolver_api_test.py'),
    Target('slurm_gpus_test', 'test', 'slurm_gpus_test.py'),
    Target('slurm_node_host_test', 'test', 'slurm_node_host_test.py'),
    Target('slurm_ports_test', 'test', 'slurm_ports_test.py'),
    Target('slurm_het_test', 'test', 'slurm_het_test.py'),
    Target('slurm_extension_points_test', 'test',
           'slurm_extension_points_test.py'),
    Target('slurm_bad_input_test', 'test', 'slurm_bad_input_test.py'),
    Target('slurm_scontrol_test', 'test', 'slurm_scontrol_test.py'),
    Target('slurm_launcher_py_test', 'test', 'slurm_launcher_test.py'),
    Target('slurm_explain_test', 'test', 'slurm_explain_test.py'),
)
# The package's Python files the patch carries, and its test files.
SOURCES = tuple(PACKAGE + '/' + t.src for t in TARGETS)
CARRIED_TESTS = tuple(PACKAGE + '/' + t.src for t in TARGETS if t.role == 'test')

# The binary rule kind that goes with a tree's library rule kind: TensorFlow
# writes `py_strict_binary` (from the same //tensorflow:strict.default.bzl
# as `py_strict_library`) where it writes `py_strict_library`.
BINARY_KINDS = {
    'py_strict_library': 'py_strict_binary',
    'py_library': 'py_binary',
}

# RELEASE.md subsections by the title of the release note's sections: the
# note's "## Behavioral changes" goes to the first of these titles the
# tree's release has (any heading level, any case), else to a new
# subsection of the note's title.
RELEASE_SUBSECTIONS = {
    'behavioral changes': ('behavioral changes', 'behavior changes',
                           'breaking changes'),
    'bug fixes and other changes': ('bug fixes and other changes',),
}

# Python module -> its Bazel label(s) in a TensorFlow release: the label to
# add first, then other spellings a tree may already use for it (kept as
# they are). An empty tuple means the release has no label for the module;
# the note then says what to do.
Dep = collections.namedtuple('Dep', ['labels', 'note'])

Release = collections.namedtuple(
    'Release', ['version', 'golden_style', 'deps', 'build_file'])


def _module_name(relpath):
  return relpath[:-len('.py')].replace('/', '.')


def _package_deps():
  """The package's own modules -> their targets (tests are no dependency)."""
  return {
      _module_name(PACKAGE + '/' + t.src): Dep((':' + t.name,), None)
      for t in TARGETS if t.role != 'test'
  }


_DEPS_2_21 = {
    'tensorflow.python.distribute.cluster_resolver.cluster_resolver':
        Dep((':base_cluster_resolver_py',), None),
    'tensorflow.core.protobuf.cluster_pb2':
        Dep(('//tensorflow/core:protos_all_py',), None),
    'tensorflow.python.training.server_lib':
        Dep(('//tensorflow/python/training:server_lib',
             '//tensorflow/python:training_server_lib'), None),
    'tensorflow.python.util.tf_export':
        Dep(('//tensorflow/python/util:tf_export',
             '//tensorflow/python:util'), None),
    'tensorflow.python.platform.tf_logging':
        Dep(('//tensorflow/python/platform:tf_logging',
             '//tensorflow/python:platform'), None),
    'tensorflow.python.platform.test':
        Dep(('//tensorflow/python/platform:client_testlib',
             '//tensorflow/python:client_testlib'), None),
    'tensorflow.python.framework.test_util':
        Dep(('//tensorflow/python/framework:test_lib',
             '//tensorflow/python:framework_test_lib'), None),
    'absl.flags': Dep(('@absl_py//absl/flags',), None),
    'absl.logging': Dep(('@absl_py//absl/logging',), None),
    'absl.testing.absltest': Dep(('@absl_py//absl/testing:absltest',), None),
    'absl.testing.parameterized':
        Dep(('@absl_py//absl/testing:parameterized',), None),
    'tensorflow':
        Dep(('//tensorflow:tensorflow_py',),
            'imports the public `tensorflow` package, so the test depends on '
            'all of TensorFlow (//tensorflow:tensorflow_py); TensorFlow\'s '
            'own tests import the internal modules instead'),
    'mock':
        Dep((), 'imports the PyPI package `mock`, which TensorFlow does not '
            'depend on: `from unittest import mock` needs no dependency'),
}
_DEPS_2_21.update(_package_deps())

# The Slurm targets of TensorFlow 2.21's cluster_resolver/BUILD (their rule
# kinds and labels; the package's other targets are left out).
_BUILD_2_21 = '''\
# Description: Operations defined for Cluster Resolvers
# (the Slurm targets of TensorFlow {version}; other targets left out)

load("//tensorflow:strict.default.bzl", "py_strict_library")
load("//tensorflow:tensorflow.default.bzl", "tf_py_strict_test")

package(
    default_visibility = [
        "//tensorflow:internal",
    ],
    licenses = ["notice"],
)

py_strict_library(
    name = "slurm_cluster_resolver_py",
    srcs = ["slurm_cluster_resolver.py"],
    deps = [
        ":base_cluster_resolver_py",
        "//tensorflow/python/training:server_lib",
        "//tensorflow/python/util:tf_export",
    ],
)

tf_py_strict_test(
    name = "slurm_cluster_resolver_py_test",
    size = "small",
    srcs = ["slurm_cluster_resolver_test.py"],
    main = "slurm_cluster_resolver_test.py",
    tags = [],
    deps = [
        ":slurm_cluster_resolver_py",
        "//tensorflow/python/platform:client_testlib",
        "//tensorflow/python/training:server_lib",
    ],
)
'''

RELEASES = {
    '2.21': Release('2.21', 'type', _DEPS_2_21, _BUILD_2_21),
}


class PatchError(Exception):
  """The patch cannot be made or does not apply."""


# ------------------------------------------------------------------------------
# The release's original files: from a TensorFlow tree, or from pip.
# ------------------------------------------------------------------------------


def _read(root, relpath):
  try:
    with open(os.path.join(root, relpath), encoding='utf-8') as f:
      return f.read()
  except FileNotFoundError:
    return None


def tree_version(tree):
  """Returns the TensorFlow version ('2.21.0') of a source tree, or None."""
  probes = (
      ('tensorflow/tf_version.bzl', r'^TF_VERSION = "([^"]+)"'),
      ('tensorflow/tools/pip_package/setup.py', r"^_VERSION = '([^']+)'"),
  )
  for relpath, pattern in probes:
    text = _read(tree, relpath)
    match = text and re.search(pattern, text, re.M)
    if match:
      return match.group(1)
  text = _read(tree, 'tensorflow/core/public/release_version.h') or _read(
      tree, 'tensorflow/core/public/version.h')
  if text:
    parts = [re.search(r'#define TF_%s_VERSION (\d+)' % p, text)
             for p in ('MAJOR', 'MINOR', 'PATCH')]
    if all(parts):
      return '.'.join(p.group(1) for p in parts)
  return None


def _same_release(version, release):
  return version == release or version.startswith(release + '.')


def tree_base(tree, release):
  """The release's files as a TensorFlow checkout at `tree` has them.

  Returns:
    (files, description): {relative path: text or None if absent}.

  Raises:
    PatchError: if the tree is of another release or lacks the module/BUILD.
  """
  version = tree_version(tree)
  if version is not None and not _same_release(version, release.version):
    raise PatchError('%s is TensorFlow %s, not %s' %
                     (tree, version, release.version))
  files = {
      p: _read(tree, p)
      for p in SOURCES + (README, BUILD, RELEASE_NOTES) + GOLDENS
  }
  for required in (MODULE, BUILD):
    if files[required] is None:
      raise PatchError('%s has no %s: not a TensorFlow tree?' % (tree, required))
  return files, 'the TensorFlow %s tree at %s' % (version or '(version unknown)',
                                                  os.path.abspath(tree))


def pip_tensorflow():
  """Returns (pip TensorFlow's package folder, its version)."""
  spec = importlib.util.find_spec('tensorflow')  # Imports nothing.
  if spec is None or not spec.submodule_search_locations:
    raise PatchError('no pip TensorFlow installed; pass --tf-tree')
  folder = list(spec.submodule_search_locations)[0]
  versions = [importlib.metadata.version(d) for d in
              importlib.metadata.packages_distributions().get('tensorflow', [])]
  if not versions:
    raise PatchError('cannot tell the version of the TensorFlow in %s' % folder)
  return folder, versions[0]


def _clean_env():
  """The environment for a Python that must not load this repo's overlay."""
  env = dict(os.environ)
  env.pop('PYTHONPATH', None)
  env.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
  return env


def pip_goldens(style):
  """Generates the goldens of pip TensorFlow's own class (no overlay)."""
  with tempfile.TemporaryDirectory() as cwd:  # No sitecustomize.py there.
    result = subprocess.run(
        [sys.executable, os.path.abspath(api_golden.__file__),
         '--print-json', '--style', style],
        cwd=cwd, env=_clean_env(), capture_output=True, text=True,
        check=False, timeout=600)
  if result.returncode:
    raise PatchError('generating pip TensorFlow\'s goldens failed:\n' +
                     result.stderr[-3000:])
  return json.loads(result.stdout)


def pip_tree_files(release, style=None):
  """Files of a tree laid out like TensorFlow's, from the pip package.

  Every .py file of pip's cluster_resolver package at its path, the Slurm
  targets of the release's BUILD, the goldens of pip's class, and
  tensorflow/tf_version.bzl. Pip ships no test file, README_Slurm.md or
  RELEASE.md, so there are none.

  Returns:
    (files, description): {relative path: text}.

  Raises:
    PatchError: if the installed TensorFlow is of another release.
  """
  folder, version = pip_tensorflow()
  if not _same_release(version, release.version):
    raise PatchError(
        'the installed pip TensorFlow is %s, not %s: install that release or '
        'pass --tf-tree' % (version, release.version))
  files = {}
  pip_package = os.path.join(folder, 'python', 'distribute', 'cluster_resolver')
  for name in sorted(os.listdir(pip_package)):
    if name.endswith('.py'):
      with open(os.path.join(pip_package, name), encoding='utf-8') as f:
        files[PACKAGE + '/' + name] = f.read()
  files[BUILD] = release.build_file.format(version=release.version)
  files.update(pip_goldens(style or release.golden_style))
  files['tensorflow/tf_version.bzl'] = 'TF_VERSION = "%s"\n' % version
  return files, ('pip TensorFlow %s (module and goldens from pip; the Slurm '
                 'targets of BUILD rebuilt from the release\'s labels; no test '
                 'file, README_Slurm.md or RELEASE.md)' % version)


def write_tree(files, dest):
  """Writes `files` under `dest` and commits them to a new git repository."""
  for relpath, text in files.items():
    if text is None:
      continue
    path = os.path.join(dest, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
      f.write(text)
  git = ['git', '-c', 'init.defaultBranch=main', '-c', 'user.name=tf-patch',
         '-c', 'user.email=tf-patch@localhost', '-c', 'commit.gpgsign=false']
  for args in (['init', '-q'], ['add', '-A'], ['commit', '-q', '-m', 'base']):
    subprocess.run(git + args, cwd=dest, check=True, capture_output=True)


# ------------------------------------------------------------------------------
# BUILD: the Slurm targets' deps, in the tree's own labels.
# ------------------------------------------------------------------------------


def imported_modules(source, table):
  """The non-standard-library modules a Python file imports.

  `from a.b import c` counts as `a.b.c` if that is a module `table` knows,
  else as `a.b`.
  """
  modules = set()
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import):
      modules.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and not node.level:
      for alias in node.names:
        full = node.module + '.' + alias.name
        modules.add(full if full in table else node.module)
  return {m for m in modules if m.split('.')[0] not in sys.stdlib_module_names}


def _label_key(label):
  """Buildifier's order of labels: ':x' first, then '//x', then '@x'."""
  phase = 1 if label.startswith(':') else 2 if label.startswith(
      '//') else 3 if label.startswith('@') else 0
  return phase, label.replace(':', '.').split('.')


def find_rule(lines, name):
  """Returns (first, last) line index of the rule named `name`, or None."""
  start = None
  for i, line in enumerate(lines):
    if re.match(r'[A-Za-z_][\w.]*\($', line):
      start = i
    elif line.rstrip('\n') == ')' and start is not None:
      if any(re.match(r'\s+name = "%s",$' % re.escape(name), l)
             for l in lines[start:i]):
        return start, i
      start = None
  return None


def _deps_span(block):
  """Locates `deps = [...]` in a rule's lines.

  Returns:
    (first, last, labels, suffix): the lines it spans, its labels, and what
    follows the list (e.g. ' + tf_additional_rpc_deps(),'); or None if the
    rule has no deps.
  """
  for i, line in enumerate(block):
    if not re.match(r'\s+deps = ', line):
      continue
    match = re.match(r'(\s+)deps = \[(.*)$', line.rstrip('\n'))
    if not match:
      raise PatchError('deps is not a plain list of labels: %r' % line)
    rest = match.group(2)
    one_line = re.match(r'(.*?)\](.*)$', rest)
    if one_line:
      items, suffix, last = one_line.group(1), one_line.group(2), i
    else:
      for last in range(i + 1, len(block)):
        closing = re.match(r'\s*\](.*)$', block[last].rstrip('\n'))
        if closing:
          break
      else:
        raise PatchError('unterminated deps list: %r' % line)
      items = ''.join(block[i + 1:last])
      suffix = closing.group(1)
    code = re.sub(r'#.*', '', items)
    labels = re.findall(r'"([^"]*)"', code)
    if re.sub(r'"[^"]*"|[\s,]', '', code):
      raise PatchError('deps is not a plain list of labels: %r' % items)
    return i, last, labels, suffix
  return None


def _add_labels(labels, needed, table, target, notes):
  """Appends to `labels` one label for each module in `needed` they lack."""
  for module in sorted(needed):
    dep = table.get(module)
    if dep is None:
      notes.append('%s: no label known for `%s`; add its dependency by hand' %
                   (target, module))
      continue
    if dep.note:
      notes.append('%s: %s' % (target, dep.note))
    if dep.labels and not any(l in labels for l in dep.labels):
      labels.append(dep.labels[0])


def _deps_lines(labels, indent='    ', suffix=','):
  return (['%sdeps = [\n' % indent] +
          ['%s    "%s",\n' % (indent, l) for l in labels] +
          ['%s]%s\n' % (indent, suffix)])


def edit_deps(block, needed, table, target, notes):
  """Rewrites a rule's deps so that they cover the modules in `needed`.

  Labels the tree has stay as they are, unless `table` maps them only to
  modules no longer imported; modules without a label get the release's.

  Args:
    block: the rule's lines.
    needed: modules the target's file imports.
    table: the release's module -> Dep table.
    target: the rule's name, for notes.
    notes: a list that gets a note for every module needing attention.

  Returns:
    The rule's new lines.
  """
  span = _deps_span(block)
  old = span[2] if span else []
  provides = collections.defaultdict(set)
  for module, dep in table.items():
    for label in dep.labels:
      provides[label].add(module)
  labels = [l for l in old if l not in provides or provides[l] & needed]
  _add_labels(labels, needed, table, target, notes)
  labels.sort(key=_label_key)
  if labels == old:
    return list(block)
  if span:
    first, last, _, suffix = span
    new = _deps_lines(labels, re.match(r'\s*', block[first]).group(0), suffix)
  else:  # A new attribute, before the closing parenthesis.
    first = last = len(block) - 1
    new = _deps_lines(labels) + block[-1:]
  return block[:first] + new + block[last + 1:]


def _attribute(block, name):
  """The value of a one-line attribute `name = value,` of a rule, or None."""
  for line in block:
    match = re.match(r'\s+%s = (.+),$' % re.escape(name), line.rstrip('\n'))
    if match:
      return match.group(1)
  return None


# One-line attributes a new target takes over from the tree's Slurm target
# of its kind (e.g. `srcs_version = "PY3"` in older trees).
_COPIED_ATTRIBUTES = ('python_version', 'srcs_version')


def new_rule(target, kind, model, needed, table, notes):
  """The lines of a new rule for `target`, in the tree's style.

  Args:
    target: a Target.
    kind: the rule kind (e.g. 'py_strict_library').
    model: the lines of the tree's Slurm rule of the same role (library or
      test), whose `size` (tests) and _COPIED_ATTRIBUTES it takes over.
    needed: modules the target's file imports.
    table: the release's module -> Dep table.
    notes: a list that gets a note for every module needing attention.
  """
  lines = ['%s(\n' % kind, '    name = "%s",\n' % target.name]
  if target.role == 'test':
    lines.append('    size = %s,\n' % (_attribute(model, 'size') or '"small"'))
  if target.role == 'test_library':
    lines.append('    testonly = True,\n')
  lines.append('    srcs = ["%s"],\n' % target.src)
  if target.role == 'test':
    lines.append('    main = "%s",\n' % target.src)
  for name in _COPIED_ATTRIBUTES:
    value = _attribute(model, name)
    if value is not None:
      lines.append('    %s = %s,\n' % (name, value))
  labels = []
  _add_labels(labels, needed, table, target.name, notes)
  if labels:
    lines += _deps_lines(sorted(labels, key=_label_key))
  return lines + [')\n']


def _rule_kind(line):
  return re.match(r'([A-Za-z_][\w.]*)\($', line.rstrip('\n')).group(1)


def _loads(lines):
  """The load statements: [(first, last, [file, symbol, ...], plain)].

  `plain` is False if the statement has anything but string arguments
  (e.g. `alias = "symbol"`).
  """
  loads, i = [], 0
  while i < len(lines):
    if not lines[i].startswith('load('):
      i += 1
      continue
    first = i
    while ')' not in re.sub(r'"[^"]*"', '', lines[i]) and i + 1 < len(lines):
      i += 1
    text = ''.join(lines[first:i + 1])
    code = text[len('load('):text.rindex(')')]
    strings = re.findall(r'"([^"]*)"', code)
    plain = not re.sub(r'"[^"]*"|[\s,]|#[^\n]*', '', code)
    loads.append((first, i, strings, plain))
    i += 1
  return loads


def _load_edit(lines, kind, provider_kind, notes):
  """Adds `kind` to the load statement that loads `provider_kind`.

  Returns:
    (first, last, new lines) of the statement, or None if none is needed:
    `kind` is loaded already, or `provider_kind` is loaded by no statement
    (a native rule, whose binary is native too).
  """
  loads = _loads(lines)
  if any(kind in strings[1:] for _, _, strings, _ in loads):
    return None
  for first, last, strings, plain in loads:
    if provider_kind not in strings[1:]:
      continue
    if not plain:
      notes.append('%s: its load of %s is not a plain list of names; load '
                   '%s from %s by hand' % (BUILD, provider_kind, kind,
                                           strings[0]))
      return None
    symbols = sorted(strings[1:] + [kind])
    if first == last:
      new = ['load(%s)\n' % ', '.join('"%s"' % s for s in
                                      [strings[0]] + symbols)]
    else:
      new = (['load(\n'] + ['    "%s",\n' % s for s in [strings[0]] + symbols]
             + [')\n'])
    return first, last, new
  return None


def _header(text):
  """A file's license header: its lines up to the first '# ====' line."""
  lines = text.splitlines(True)
  for i, line in enumerate(lines[:30]):
    if line.startswith('# ====='):
      return ''.join(lines[:i + 1])
  return None


# ------------------------------------------------------------------------------
# The diff.
# ------------------------------------------------------------------------------


def _blob(text):
  data = text.encode('utf-8')
  return hashlib.sha1(b'blob %d\0' % len(data) + data).hexdigest()


def _range(start, length):
  """A unified diff range: 0-based `start`, as `diff` and git write it."""
  if length == 0:
    return '%d,0' % start
  if length == 1:
    return '%d' % (start + 1)
  return '%d,%d' % (start + 1, length)


def _line(mark, line):
  if line.endswith('\n'):
    return mark + line
  return mark + line + '\n\\ No newline at end of file\n'


def _hunks(old, new, old_offset=0, new_offset=0, context=3, symmetric=False):
  """Unified diff hunks of two lists of lines, numbered from the offsets.

  With `symmetric`, each hunk keeps as many context lines before its changes
  as after them (at least one): patch(1) reads a hunk with less context on
  one side as anchored to that end of the file.
  """
  out = []
  matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
  for group in matcher.get_grouped_opcodes(context):
    lead = group[0][2] - group[0][1] if group[0][0] == 'equal' else 0
    trail = group[-1][2] - group[-1][1] if group[-1][0] == 'equal' else 0
    if symmetric and min(lead, trail) > 0 and lead != trail:
      keep = min(lead, trail)
      tag, a1, a2, b1, b2 = group[0]
      group[0] = (tag, a2 - keep, a2, b2 - keep, b2)
      tag, a1, a2, b1, b2 = group[-1]
      group[-1] = (tag, a1, a1 + keep, b1, b1 + keep)
    i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
    out.append('@@ -%s +%s @@\n' % (_range(old_offset + i1, i2 - i1),
                                   _range(new_offset + j1, j2 - j1)))
    for tag, a1, a2, b1, b2 in group:
      if tag == 'equal':
        out += [_line(' ', l) for l in old[a1:a2]]
        continue
      out += [_line('-', l) for l in old[a1:a2]]
      out += [_line('+', l) for l in new[b1:b2]]
  return out


def file_diff(relpath, old, new, hunks=None):
  """A git diff of one file; `old` None for a new file. '' if unchanged."""
  if old == new:
    return ''
  out = ['diff --git a/%s b/%s\n' % (relpath, relpath)]
  if old is None:
    out += ['new file mode 100644\n',
            'index %s..%s\n' % ('0' * 40, _blob(new)),
            '--- /dev/null\n', '+++ b/%s\n' % relpath]
    return ''.join(out + _hunks([], new.splitlines(True)))
  out += ['index %s..%s 100644\n' % (_blob(old), _blob(new)),
          '--- a/%s\n' % relpath, '+++ b/%s\n' % relpath]
  if hunks is None:
    hunks = _hunks(old.splitlines(True), new.splitlines(True))
  return ''.join(out + hunks)


def _body_hunk(body, old_start, new_start):
  """A hunk of (mark, line) pairs whose old side starts at `old_start`."""
  old_len = sum(1 for mark, _ in body if mark != '+')
  new_len = sum(1 for mark, _ in body if mark != '-')
  return (['@@ -%s +%s @@\n' % (_range(old_start, old_len),
                                _range(new_start, new_len))] +
          [_line(mark, line) for mark, line in body])


def _insertion_body(lines, first, last, block, inserted):
  """The hunk body that inserts `inserted` before the rule lines[first:last].

  The rule's lines up to its name are written as removed and added again
  after the inserted lines, so that the hunk is anchored to that rule (its
  name is unique in the file) rather than to the blank lines around it; the
  rest of the rule (`block`: its new lines, e.g. with new deps) follows as
  usual. One line of context on each side: patch(1) needs as many after a
  hunk's changes as before them, and the lines outside the rule belong to
  other targets.

  Returns:
    (body, old start): the (mark, line) pairs and the first old line's index.
  """
  old = lines[first:last + 1]
  name = [i for i, l in enumerate(old) if re.match(r'\s+name = "', l)][0]
  new_name = [i for i, l in enumerate(block) if re.match(r'\s+name = "', l)][0]
  body = [(' ', lines[first - 1])] if first else []
  body += [('-', l) for l in old[:name + 1]]
  body += [('+', l) for l in inserted + block[:new_name + 1]]
  rest_old, rest_new = old[name + 1:], block[new_name + 1:]
  rest = []
  matcher = difflib.SequenceMatcher(None, rest_old, rest_new, autojunk=False)
  for tag, a1, a2, b1, b2 in matcher.get_opcodes():
    if tag == 'equal':
      rest += [(' ', l) for l in rest_old[a1:a2]]
    else:
      rest += [('-', l) for l in rest_old[a1:a2]]
      rest += [('+', l) for l in rest_new[b1:b2]]
  changed = [i for i, (mark, _) in enumerate(rest) if mark != ' ']
  rest = rest[:changed[-1] + 1] if changed else []
  following = rest_old[sum(1 for mark, _ in rest if mark != '+'):]
  following += lines[last + 1:]
  body += rest + ([(' ', following[0])] if first and following else [])
  return body, max(first - 1, 0)


def _build_diff(build, imports, table, notes):
  """Edits the Slurm targets of BUILD text; returns (new text, hunks).

  Args:
    build: the tree's BUILD text.
    imports: {target name: modules its file imports} for every Target.
    table: the release's module -> Dep table.
    notes: a list that gets notes for reviewers.

  Targets the tree has get their deps edited; the others are added in the
  tree's rule kinds, before LIBRARY_TARGET (libraries and the binary) and
  before TEST_TARGET (test helpers and tests), and the binary kind is added
  to the load statement that gives the library kind. Hunks that only edit
  deps keep their context within the rule; a hunk that adds targets before
  a rule, and one that edits a one-line load, reach one line out on each
  side: the patch depends as little as it can on the targets around them.
  """
  lines = build.splitlines(True)
  spans = {t.name: find_rule(lines, t.name) for t in TARGETS}
  for anchor in (LIBRARY_TARGET, TEST_TARGET):
    if spans[anchor] is None:
      raise PatchError('%s has no target %s' % (BUILD, anchor))
  models = {
      group: lines[spans[anchor][0]:spans[anchor][1] + 1]
      for group, anchor in (('library', LIBRARY_TARGET), ('test', TEST_TARGET))
  }
  library_kind = _rule_kind(models['library'][0])
  kinds = {
      'library': library_kind,
      'test_library': library_kind,
      'test': _rule_kind(models['test'][0]),
      'binary': BINARY_KINDS.get(library_kind),
  }
  inserted = {LIBRARY_TARGET: [], TEST_TARGET: []}
  edits = []  # (first, last, new lines, inserted lines)
  for target in TARGETS:
    if spans[target.name] is not None:
      continue
    group = 'test' if target.role in ('test', 'test_library') else 'library'
    kind = kinds[target.role]
    if kind is None:
      kind = 'py_binary'
      notes.append('%s: no binary rule kind known for libraries of kind %s; '
                   'made it a py_binary' % (target.name, library_kind))
    if target.role == 'binary':
      load = _load_edit(lines, kind, library_kind, notes)
      if load:
        edits.append(load + ([],))
      users = [t.name for t in TARGETS
               if ':' + target.name in _labels_of(t, imports, table)]
      notes.append(
          '%s is a new %s target: assumed to be TensorFlow\'s rule kind for '
          'Python binaries in a package of %s targets%s%s' %
          (target.name, kind, library_kind,
           ' (loaded from the same .bzl file)' if load else '',
           '; %s depends on it as on a library' % ', '.join(users)
           if users else ''))
    anchor = LIBRARY_TARGET if group == 'library' else TEST_TARGET
    inserted[anchor] += new_rule(target, kind, models[group],
                                 imports[target.name], table, notes) + ['\n']
  for target in TARGETS:
    if spans[target.name] is None:
      continue
    first, last = spans[target.name]
    block = lines[first:last + 1]
    new = edit_deps(block, imports[target.name], table, target.name, notes)
    if new != block or inserted.get(target.name):
      edits.append((first, last, new, inserted.get(target.name, [])))
  edits.sort(key=lambda e: e[0])
  new_lines, hunks, offset, done, end = [], [], 0, 0, -1
  for first, last, block, before in edits:
    if before:
      body, start = _insertion_body(lines, first, last, block, before)
      hunk = _body_hunk(body, start, start + offset)
    elif len(block) == last + 1 - first == 1:  # A one-line load statement.
      start, stop = max(first - 1, 0), min(last + 2, len(lines))
      hunk = _hunks(lines[start:stop], lines[start:first] + block +
                    lines[last + 1:stop], start, start + offset,
                    symmetric=True)
    else:  # Deps only: the context stays within the rule.
      hunk = _hunks(lines[first:last + 1], block, first, first + offset,
                    symmetric=True)
    start, stop = _old_span(hunk)
    if start <= end:
      raise PatchError('%s: the edits around lines %d and %d are too close '
                       'for separate hunks' % (BUILD, end, start + 1))
    end = stop
    hunks += hunk
    new_lines += lines[done:first] + before + block
    offset += len(before) + len(block) - (last + 1 - first)
    done = last + 1
  new_lines += lines[done:]
  return ''.join(new_lines), hunks


def _old_span(hunk):
  """The first and last old line (0-based) that hunk lines cover."""
  spans = []
  for line in hunk:
    match = re.match(r'@@ -(\d+)(?:,(\d+))? ', line)
    if match:
      start, length = int(match.group(1)), int(match.group(2) or 1)
      spans.append((start - 1, start + length - 2) if length else
                    (start, start - 1))
  return spans[0][0], spans[-1][1]


def _labels_of(target, imports, table):
  """The labels the release gives the modules `target` imports."""
  return [label for module in imports[target.name]
          for label in (table[module].labels if module in table else ())]


def repo_files(root=ROOT):
  """This repository's files that go into the patch, by path."""
  files = {
      p: _read(root, p)
      for p in SOURCES + (README,) + GOLDENS + (RELEASE_NOTE,)
  }
  missing = [p for p, text in files.items() if text is None]
  if missing:
    raise PatchError('missing in %s: %s' % (root, ', '.join(missing)))
  return files


# ------------------------------------------------------------------------------
# RELEASE.md: the release note under the topmost release.
# ------------------------------------------------------------------------------


def _headings(lines):
  """[(index, level, title)] of the Markdown headings outside code blocks."""
  out, fenced = [], False
  for i, line in enumerate(lines):
    if re.match(r'\s*(```|~~~)', line):
      fenced = not fenced
    match = not fenced and re.match(r'(#+)\s+(.*?)\s*$', line)
    if match:
      out.append((i, len(match.group(1)), match.group(2)))
  return out


def _title_key(title):
  return title.strip(' :`*').lower()


def release_note_sections(note):
  """The note's sections: [(title, lines)] for each '## title'."""
  sections = []
  for line in note.splitlines(True):
    match = re.match(r'## (.*?)\s*$', line)
    if match:
      sections.append((match.group(1), []))
    elif sections:
      sections[-1][1].append(line)
  out = []
  for title, lines in sections:
    while lines and not lines[0].strip():
      lines.pop(0)
    while lines and not lines[-1].strip():
      lines.pop()
    out.append((title, lines))
  return out


_KNOWN_SUBSECTIONS = frozenset(
    [a for aliases in RELEASE_SUBSECTIONS.values() for a in aliases] +
    ['major features and improvements', 'known caveats'])


def _after_content(section, first, stop):
  """The index after the last non-blank line of section[first:stop]."""
  while stop > first and not section[stop - 1].strip():
    stop -= 1
  return stop


def _spaced(insert, lines, at):
  """`insert`, with a blank line after it if lines[at] is not blank."""
  if at < len(lines) and lines[at].strip():
    return insert + ['\n']
  return insert


def insert_release_note(release_md, note):
  """Puts the note's sections under the topmost '# Release' of RELEASE.md.

  Each '## title' section of the note goes at the end of the release's
  subsection with that title (or its first alias the release has,
  RELEASE_SUBSECTIONS), at any heading level; a missing subsection is added
  at the level of the release's usual subsections, before the next of the
  note's subsections, else after the last usual subsection.

  Returns:
    (new text, hunks, description of where it went), or None if RELEASE.md
    has no '# Release' heading.
  """
  lines = release_md.splitlines(True)
  tops = [(i, t) for i, level, t in _headings(lines) if level == 1]
  releases = [(n, i, t) for n, (i, t) in enumerate(tops)
              if t.lower().startswith('release')]
  if not releases:
    return None
  n, start, release_title = releases[0]
  end = tops[n + 1][0] if n + 1 < len(tops) else len(lines)
  section = lines[start:end]
  sections = release_note_sections(note)
  placed = []
  for number, (title, body) in enumerate(sections):
    if ''.join(body) in ''.join(section):
      placed.append('%s (already there)' % title)
      continue
    heads = [(i, level, _title_key(t)) for i, level, t in _headings(section)
             if level > 1]
    aliases = RELEASE_SUBSECTIONS.get(title.lower(), (title.lower(),))
    found = [h for alias in aliases for h in heads if h[2] == alias]
    if found:
      i, level, _ = found[0]
      stop = next((j for j, l, _ in heads if j > i and l <= level),
                  len(section))
      at = _after_content(section, i + 1, stop)
      previous = section[at - 1]
      if at == i + 1 or not re.match(r'\s*([*+-]|\d+\.)\s|\s', previous):
        body = ['\n'] + body
      section[at:at] = _spaced(body, section, at)
      placed.append('%s %s' % ('#' * level, section[i].strip('# \n')))
      continue
    usual = [(i, l) for i, l, t in heads if t in _KNOWN_SUBSECTIONS]
    level = usual[0][1] if usual else 2
    later = [i for other, _ in sections[number + 1:] for alias in
             RELEASE_SUBSECTIONS.get(other.lower(), (other.lower(),))
             for i, l, t in heads if t == alias and l == level]
    if later:
      stop = min(later)
    elif usual:
      last = usual[-1][0]
      stop = next((j for j, l, _ in heads if j > last and l <= level),
                  len(section))
    else:
      stop = len(section)
    at = _after_content(section, 1, stop)
    section[at:at] = _spaced(
        ['\n', '%s %s\n' % ('#' * level, title), '\n'] + body, section, at)
    placed.append('%s %s (added)' % ('#' * level, title))
  tail = lines[end:end + 3]
  hunks = _hunks(lines[start:end] + tail, section + tail, start, start,
                 symmetric=True)
  text = ''.join(lines[:start] + section + lines[end:])
  return text, hunks, '"%s", in %s' % (release_title.strip(),
                                       ' and '.join(placed))


def _repo_revision(root):
  try:
    head = subprocess.run(['git', 'rev-parse', '--short=12', 'HEAD'], cwd=root,
                          capture_output=True, text=True, check=True).stdout
    dirty = subprocess.run(
        ['git', 'status', '--porcelain', '--', 'tensorflow'], cwd=root,
        capture_output=True, text=True, check=True).stdout
  except (OSError, subprocess.CalledProcessError):
    return None
  return head.strip() + (' with uncommitted changes' if dirty else '')


def make_patch(release, base, base_description, repo=None, golden_style=None,
               root=ROOT):
  """Makes the patch.

  Args:
    release: a Release.
    base: {relative path: text or None}: the release's original files.
    base_description: where `base` comes from, for the patch's header.
    repo: {relative path: text}: the new files (default: `repo_files(root)`).
    golden_style: spelling of builtin types in the goldens; default: the
      style of the base's goldens, else the release's.
    root: this repository, for its revision in the header.

  Returns:
    (patch text, notes): notes are things a reviewer of the patch must see,
    such as imports without a TensorFlow label.

  Raises:
    PatchError: if the BUILD cannot be edited, or a file the base has would
      get another license header.
  """
  repo = repo if repo is not None else repo_files(root)
  table = release.deps
  style = golden_style
  for golden in GOLDENS:
    style = style or (base.get(golden) and
                      api_golden.detect_style(base[golden]))
  style = style or release.golden_style
  for relpath in SOURCES:
    if base.get(relpath) and _header(base[relpath]) != _header(repo[relpath]):
      raise PatchError('%s: the repository\'s license header differs from the '
                       'tree\'s; TensorFlow\'s headers must stay as they are' %
                       relpath)
  notes = []
  imports = {
      t.name: imported_modules(repo[PACKAGE + '/' + t.src], table) -
      {_module_name(PACKAGE + '/' + t.src)} for t in TARGETS
  }
  build, build_hunks = _build_diff(base[BUILD], imports, table, notes)
  for relpath in (TEST, README):
    if base.get(relpath) is None:
      notes.append('the base has no %s, so the patch adds it as a new file; '
                   'against a TensorFlow checkout, make the patch with '
                   '--tf-tree so that it replaces the checkout\'s' % relpath)
  diffs = [file_diff(p, base.get(p), repo[p]) for p in SOURCES + (README,)]
  diffs.append(file_diff(BUILD, base[BUILD], build, build_hunks))
  diffs += [file_diff(g, base.get(g), api_golden.restyle(repo[g], style))
            for g in GOLDENS]
  release_md = base.get(RELEASE_NOTES)
  inserted = release_md and insert_release_note(release_md,
                                                repo[RELEASE_NOTE])
  if inserted:
    text, hunks, where = inserted
    diffs.append(file_diff(RELEASE_NOTES, release_md, text, hunks))
    notes.append('%s: the release note (%s) went under %s; move it if the '
                 'change ships in another release' % (RELEASE_NOTES,
                                                      RELEASE_NOTE, where))
  else:
    notes.append('the base has no %s%s, so the release note (%s) is left '
                 'out; make the patch with --tf-tree to have it added' %
                 (RELEASE_NOTES, '' if release_md is None else
                  ' with a "# Release" heading', RELEASE_NOTE))
  revision = _repo_revision(root)
  header = [
      'SlurmClusterResolver for TensorFlow %s\n' % release.version,
      '\n',
      'Made by tools/make_tf_patch.py%s.\n' %
      (' from revision %s' % revision if revision else ''),
      'Against: %s.\n' % base_description,
      'API goldens spelled in the %r style.\n' % style,
      'Apply at the root of the TensorFlow tree: git apply FILE (or patch -p1'
      ' < FILE).\n',
  ]
  if notes:
    header += ['\n', 'Notes:\n'] + ['  * %s\n' % n for n in notes]
  return ''.join(header + ['\n'] + [d for d in diffs if d]), notes


# ------------------------------------------------------------------------------
# The check: apply to a tree, then use the result.
# ------------------------------------------------------------------------------


def git_apply(tree, patch, check_only=False):
  """Runs `git apply [--check]` in `tree`; raises PatchError if it fails."""
  args = ['git', 'apply', '--verbose'] + (['--check'] if check_only else [])
  result = subprocess.run(args + ['-'], cwd=tree, input=patch, text=True,
                          capture_output=True, check=False)
  if result.returncode:
    raise PatchError('git apply%s failed in %s:\n%s' %
                     (' --check' if check_only else '', tree,
                      result.stderr.strip()))
  return result.stderr


def patch_p1(tree, patch):
  """Applies the patch in `tree` with `patch -p1`, after a dry run.

  Raises:
    PatchError: if patch(1) is missing or refuses the patch (no fuzz).
  """
  if shutil.which('patch') is None:
    raise PatchError('no patch(1) on PATH')
  for args in (['--dry-run'], []):
    result = subprocess.run(['patch', '-p1', '--batch', '--fuzz=0'] + args,
                            cwd=tree, input=patch, text=True,
                            capture_output=True, check=False)
    if result.returncode:
      raise PatchError('patch -p1 %sfailed in %s:\n%s' %
                       ('--dry-run ' if args else '', tree,
                        (result.stdout + result.stderr).strip()))


def tree_contents(tree):
  """{relative path: bytes} of every file under `tree` but .git."""
  contents = {}
  for dirpath, dirnames, filenames in os.walk(tree):
    dirnames[:] = [d for d in dirnames if d != '.git']
    for name in filenames:
      path = os.path.join(dirpath, name)
      with open(path, 'rb') as f:
        contents[os.path.relpath(path, tree)] = f.read()
  return contents


def differing_files(tree_a, tree_b):
  """The relative paths whose bytes differ, or that only one tree has."""
  a, b = tree_contents(tree_a), tree_contents(tree_b)
  return sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))


# Run by a Python started with the folder of _SITECUSTOMIZE on PYTHONPATH,
# which serves `tensorflow.*` from the tree under test: constructs the tree's
# resolver through the public API, then runs the named test modules.
_RUN_TESTS = r"""
import importlib, inspect, json, os, sys, unittest
from absl import flags
names = sys.argv[1:]
del sys.argv[1:]
flags.FLAGS.mark_as_parsed()  # As absltest.main() would, for its helpers.
report = {}
saved = dict(os.environ)
os.environ.update({
    'SLURM_PROCID': '3', 'SLURM_STEP_NODELIST': 'n[9-10]',
    'SLURM_STEP_TASKS_PER_NODE': '2(x2)', 'SLURM_STEP_NUM_TASKS': '4',
    'SLURMD_NODENAME': 'n10', 'SLURM_NODEID': '1', 'SLURM_LOCALID': '1',
    'CUDA_VISIBLE_DEVICES': ''})
import tensorflow as tf
cls = tf.distribute.cluster_resolver.SlurmClusterResolver
resolver = cls()
report['resolver'] = {
    'source': inspect.getsourcefile(cls),
    'v1_is_v2':
        cls is tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver,
    'cluster': resolver.cluster_spec().as_dict(),
    'task': list(resolver.get_task_info()),
    'master': resolver.master(),
}
os.environ.clear()
os.environ.update(saved)
report['tests'] = {}
for name in names:
  module = importlib.import_module(name)
  suite = unittest.defaultTestLoader.loadTestsFromModule(module)
  result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
  report['tests'][name] = {
      'file': module.__file__, 'run': result.testsRun,
      'failures': len(result.failures), 'errors': len(result.errors),
      'skipped': len(result.skipped),
      'unexpected_successes': len(result.unexpectedSuccesses)}
report['modules'] = {
    n: getattr(m, '__file__', None) for n, m in sorted(sys.modules.items())
    if n.startswith('tensorflow.python.distribute.cluster_resolver.slurm')}
print('CARRIED-TESTS ' + json.dumps(report))
"""

_SITECUSTOMIZE = '''\
"""Serves `tensorflow.*` modules from %(tree)s over pip TensorFlow."""
import importlib.util
_spec = importlib.util.spec_from_file_location('tf_overlay', %(overlay)r)
_overlay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_overlay)
_overlay.install(root=%(tree)r)
'''


def run_carried_tests(tree, root=ROOT, timeout=1200):
  """Runs every slurm_*_test.py of a patched tree against the tree's modules.

  One fresh Python runs them all, as a TensorFlow build of `tree` would
  have them: `tensorflow.*` modules come from `tree` where it has their
  file and from pip TensorFlow otherwise (this repository's overlay,
  installed by a sitecustomize.py in a temporary folder, which also reaches
  the Python processes the tests start); nothing of this repository is on
  its path. First it constructs the tree's resolver through the public API
  under the environment of task 3 of a 4-task step on n9 and n10 (then puts
  the environment back), then runs the test modules with unittest.

  Returns:
    {'resolver': what the resolver said ('source', 'v1_is_v2', 'cluster',
    'task', 'master'), 'tests': {module: {'file', 'run', 'failures',
    'errors', 'skipped', 'unexpected_successes'}}, 'modules': {the Slurm
    modules loaded: their files}, 'seconds': the run's wall time}.

  Raises:
    PatchError: if a carried test file is missing, any test fails, a module
      ran no test, or a Slurm module or the resolver came from outside
      `tree`.
  """
  tree = os.path.realpath(tree)
  package = os.path.join(tree, PACKAGE)
  found = sorted(n for n in os.listdir(package)
                 if n.startswith('slurm_') and n.endswith('_test.py'))
  missing = [p for p in CARRIED_TESTS if os.path.basename(p) not in found]
  if missing:
    raise PatchError('the patched tree lacks %s' % ', '.join(missing))
  names = [_module_name(PACKAGE + '/' + n) for n in found]
  started = time.monotonic()
  with tempfile.TemporaryDirectory() as helper:
    with open(os.path.join(helper, 'sitecustomize.py'), 'w',
              encoding='utf-8') as f:
      f.write(_SITECUSTOMIZE % {
          'tree': tree,
          'overlay': os.path.join(os.path.abspath(root), 'tf_overlay.py')})
    env = _clean_env()
    env.update(PYTHONPATH=helper, PYTHONDONTWRITEBYTECODE='1',
               TEST_TMPDIR=os.path.join(helper, 'tmp'))
    os.mkdir(env['TEST_TMPDIR'])
    result = subprocess.run([sys.executable, '-c', _RUN_TESTS] + names,
                            cwd=helper, env=env, capture_output=True,
                            text=True, check=False, timeout=timeout)
  lines = [l for l in result.stdout.splitlines()
           if l.startswith('CARRIED-TESTS ')]
  if result.returncode or not lines:
    raise PatchError('running the carried tests failed (status %d):\n%s' %
                     (result.returncode, result.stderr[-5000:]))
  report = json.loads(lines[-1][len('CARRIED-TESTS '):])
  report['seconds'] = time.monotonic() - started
  problems = []
  for name in names:
    counts = report['tests'][name]
    if (counts['failures'] or counts['errors'] or
        counts['unexpected_successes']):
      problems.append('%s: %d failures, %d errors' %
                      (name, counts['failures'], counts['errors']))
    elif not counts['run']:
      problems.append('%s ran no test' % name)
  outside = {n: f for n, f in report['modules'].items()
             if not f or not os.path.realpath(f).startswith(tree + os.sep)}
  resolver = report['resolver']
  if not os.path.realpath(resolver['source']).startswith(tree + os.sep):
    outside['SlurmClusterResolver'] = resolver['source']
  if outside:
    problems.append('not from the patched tree: %s' % outside)
  if not resolver['v1_is_v2']:
    problems.append('tf.compat.v1 has another SlurmClusterResolver')
  if problems:
    raise PatchError('the carried tests failed against the patched tree: %s'
                     '\n%s' % ('; '.join(problems), result.stderr[-5000:]))
  return report


def _check_notes(notes, out):
  """Shows the patch's notes; a dependency without a label is an error."""
  for note in notes:
    out.write('note: %s\n' % note)
  missing = [note for note in notes if 'no label known' in note]
  if missing:
    raise PatchError('the BUILD targets lack dependencies: %s' %
                     '; '.join(missing))


def check(release, tree=None, root=ROOT, out=sys.stdout):
  """Checks that the patch applies; on scratch pip trees, also tests it.

  With `tree` (a TensorFlow checkout), runs `git apply --check` there and
  changes nothing. Without it, builds a tree from pip TensorFlow in two
  temporary folders, applies the patch to one with `git apply` and to the
  other with `patch -p1` (if patch(1) is installed), checks that both trees
  are byte for byte the same and that the patched files are this
  repository's, and runs every carried test file of the patched tree against
  its modules (`run_carried_tests`).

  Raises:
    PatchError: on any failure.
  """
  if tree is not None:
    base, description = tree_base(tree, release)
    patch, notes = make_patch(release, base, description, root=root)
    _check_notes(notes, out)
    git_apply(tree, patch, check_only=True)
    out.write('OK: the patch applies to %s (git apply --check)\n' % description)
    return
  files, description = pip_tree_files(release)
  with tempfile.TemporaryDirectory() as scratch:
    by_git = os.path.join(scratch, 'git-apply')
    by_patch = os.path.join(scratch, 'patch-p1')
    write_tree(files, by_git)
    patch, notes = make_patch(release, files, description, root=root)
    _check_notes(notes, out)
    git_apply(by_git, patch, check_only=True)
    git_apply(by_git, patch)
    expected = repo_files(root)
    for relpath in SOURCES + (README,) + GOLDENS:
      text = expected[relpath]
      if relpath in GOLDENS:
        text = api_golden.restyle(text, release.golden_style)
      if _read(by_git, relpath) != text:
        raise PatchError('after the patch, %s differs from the repository\'s' %
                         relpath)
    applied = 'git apply'
    if shutil.which('patch'):
      write_tree(files, by_patch)
      patch_p1(by_patch, patch)
      differing = differing_files(by_git, by_patch)
      if differing:
        raise PatchError('git apply and patch -p1 give different trees: %s' %
                         ', '.join(differing))
      applied += ' and with patch -p1 (the same tree)'
    report = run_carried_tests(by_git, root)
  out.write('OK: the patch applies to a tree built from %s, with %s, and its '
            'resolver works: %s\n' % (description, applied,
                                      json.dumps(report['resolver']['cluster'])))
  for name, counts in sorted(report['tests'].items()):
    out.write('OK: %s: %d tests (%d skipped)\n' %
              (name, counts['run'], counts['skipped']))
  out.write('The carried tests ran in %.0f s.\n' % report['seconds'])


def main(argv=None):
  parser = argparse.ArgumentParser(
      description='Make a patch that vendors this repository\'s '
      'SlurmClusterResolver into a TensorFlow tree.')
  parser.add_argument('--tf-version', required=True, choices=sorted(RELEASES),
                      help='the TensorFlow release (major.minor) to patch')
  parser.add_argument('--tf-tree',
                      help='a TensorFlow checkout of that release: the patch '
                      'is made against its files (without it: against pip '
                      'TensorFlow\'s, see the module docstring)')
  parser.add_argument('--out', help='write the patch here (default: stdout)')
  parser.add_argument('--golden-style', choices=api_golden.STYLES,
                      help='spelling of builtin types in the goldens (default:'
                      ' that of the tree\'s goldens, else the release\'s)')
  parser.add_argument('--check', action='store_true',
                      help='instead of writing the patch, check that it '
                      'applies: to --tf-tree with git apply --check, or to '
                      'scratch trees built from pip TensorFlow, with git apply '
                      'and patch -p1, whose carried tests are then run')
  args = parser.parse_args(argv)
  release = RELEASES[args.tf_version]
  try:
    if args.check:
      check(release, args.tf_tree)
      return 0
    if args.tf_tree:
      base, description = tree_base(args.tf_tree, release)
    else:
      base, description = pip_tree_files(release, args.golden_style)
    patch, notes = make_patch(release, base, description,
                              golden_style=args.golden_style)
  except PatchError as e:
    sys.stderr.write('error: %s\n' % e)
    return 1
  for note in notes:
    sys.stderr.write('note: %s\n' % note)
  if args.out:
    with open(args.out, 'w', encoding='utf-8') as f:
      f.write(patch)
    sys.stderr.write('wrote %s\n' % args.out)
  else:
    sys.stdout.write(patch)
  return 0


if __name__ == '__main__':
  sys.exit(main())
