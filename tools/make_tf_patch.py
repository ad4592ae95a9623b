"""Turns this repository's tensorflow/ files into a patch for a TensorFlow tree.

    .venv/bin/python tools/make_tf_patch.py --tf-version 2.21 \\
        --tf-tree ~/src/tensorflow --out slurm.patch
    cd ~/src/tensorflow && git apply --check slurm.patch && git apply slurm.patch

The patch is a git-style unified diff (`git apply`, or `patch -p1`) that,
against a TensorFlow tree of the given release:
  - replaces tensorflow/python/distribute/cluster_resolver/
    slurm_cluster_resolver.py and slurm_cluster_resolver_test.py with this
    repository's files;
  - edits only the `deps` of the targets `slurm_cluster_resolver_py` and
    `slurm_cluster_resolver_py_test` in that folder's BUILD: the tree's rule
    kinds, attributes and labels stay, labels for imports the new files add
    are added with the release's label names (e.g. `@absl_py//absl/logging`),
    and labels of imports they dropped are removed;
  - replaces the v1 and v2 API goldens of the class
    (tensorflow/tools/api/golden/v*/tensorflow.distribute.cluster_resolver.
    -slurm-cluster-resolver.pbtxt), spelled in the tree's style.
It leaves out everything that only serves this repository: the import
overlay (tf_overlay.py, sitecustomize.py, conftest.py), the Bazel workspace
(WORKSPACE, BUILD files, tools/bazel), tests/ and their fixtures, the goldens'
BUILD, tools/, docs and examples.

The diff needs the release's original files. With `--tf-tree` it takes them
from that checkout: the patch is then exact. Without it, it builds them from
the installed pip TensorFlow, which must be of that release: the module is
pip's own file, the goldens are generated from pip's class, and the BUILD
targets are rebuilt from the release's facts (RELEASES); pip does not ship
the test file, so the patch then adds it as a new file, which a real
checkout (which has one) refuses: use `--tf-tree` there. The same pip-built
tree, `pip_tree_files()`, is what the check (tests/tf_patch_test.py, or
`--check`) applies the patch to.
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
import subprocess
import sys
import tempfile

try:
  from tools import api_golden  # Imported as tools.make_tf_patch.
except ImportError:
  import api_golden  # Run as a script: tools/ is sys.path[0].

# The repository root: the parent of this file's folder.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PACKAGE = 'tensorflow/python/distribute/cluster_resolver'
MODULE = PACKAGE + '/slurm_cluster_resolver.py'
TEST = PACKAGE + '/slurm_cluster_resolver_test.py'
BUILD = PACKAGE + '/BUILD'
GOLDENS = tuple(
    api_golden.golden_relpath(api, symbol) for api, symbol in api_golden.SYMBOLS)
LIBRARY_TARGET = 'slurm_cluster_resolver_py'
TEST_TARGET = 'slurm_cluster_resolver_py_test'

# Python module -> its Bazel label(s) in a TensorFlow release: the label to
# add first, then other spellings a tree may already use for it (kept as
# they are). An empty tuple means the release has no label for the module;
# the note then says what to do.
Dep = collections.namedtuple('Dep', ['labels', 'note'])

Release = collections.namedtuple(
    'Release', ['version', 'golden_style', 'deps', 'build_file'])

_DEPS_2_21 = {
    'tensorflow.python.distribute.cluster_resolver.cluster_resolver':
        Dep((':base_cluster_resolver_py',), None),
    'tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver':
        Dep((':slurm_cluster_resolver_py',), None),
    'tensorflow.python.training.server_lib':
        Dep(('//tensorflow/python/training:server_lib',
             '//tensorflow/python:training_server_lib'), None),
    'tensorflow.python.util.tf_export':
        Dep(('//tensorflow/python/util:tf_export',
             '//tensorflow/python:util'), None),
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
  files = {p: _read(tree, p) for p in (MODULE, TEST, BUILD) + GOLDENS}
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
  tensorflow/tf_version.bzl. Pip ships no test file, so there is none.

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
                 'file)' % version)


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
  kept = [l for l in old if l not in provides or provides[l] & needed]
  labels = list(kept)
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
  labels.sort(key=_label_key)
  if labels == old:
    return list(block)
  indent = '    '
  if span:
    first, last, _, suffix = span
    indent = re.match(r'\s*', block[first]).group(0)
  else:  # A new attribute, before the closing parenthesis.
    first = len(block) - 1
    last = first - 1
    suffix = ','
  new = ['%sdeps = [\n' % indent]
  new += ['%s    "%s",\n' % (indent, l) for l in labels]
  new += ['%s]%s\n' % (indent, suffix)]
  return block[:first] + new + block[last + 1:]


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


def _build_diff(build, module_imports, test_imports, table, notes):
  """Edits the Slurm targets of BUILD text; returns (new text, hunks).

  The hunks' context stays within the edited rules, so that the patch does
  not depend on the targets around them.
  """
  lines = build.splitlines(True)
  edits = []
  for target, needed in ((LIBRARY_TARGET, module_imports),
                         (TEST_TARGET, test_imports)):
    span = find_rule(lines, target)
    if span is None:
      raise PatchError('%s has no target %s' % (BUILD, target))
    first, last = span
    edits.append((first, last,
                  edit_deps(lines[first:last + 1], needed, table, target,
                            notes)))
  edits.sort()
  new_lines, hunks, offset, done = [], [], 0, 0
  for first, last, block in edits:
    new_lines += lines[done:first] + block
    hunks += _hunks(lines[first:last + 1], block, first, first + offset,
                    symmetric=True)
    offset += len(block) - (last + 1 - first)
    done = last + 1
  new_lines += lines[done:]
  return ''.join(new_lines), hunks


def repo_files(root=ROOT):
  """This repository's files that go into the patch, by path."""
  files = {p: _read(root, p) for p in (MODULE, TEST) + GOLDENS}
  missing = [p for p, text in files.items() if text is None]
  if missing:
    raise PatchError('missing in %s: %s' % (root, ', '.join(missing)))
  return files


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
  """
  repo = repo if repo is not None else repo_files(root)
  table = release.deps
  style = golden_style
  for golden in GOLDENS:
    style = style or (base.get(golden) and
                      api_golden.detect_style(base[golden]))
  style = style or release.golden_style
  notes = []
  module_imports = imported_modules(repo[MODULE], table) - {
      'tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver'}
  test_imports = imported_modules(repo[TEST], table)
  build, build_hunks = _build_diff(base[BUILD], module_imports, test_imports,
                                   table, notes)
  if base.get(TEST) is None:
    notes.append('the base has no %s, so the patch adds it as a new file; '
                 'against a TensorFlow checkout, make the patch with '
                 '--tf-tree so that it replaces the checkout\'s' % TEST)
  diffs = [
      file_diff(MODULE, base[MODULE], repo[MODULE]),
      file_diff(TEST, base.get(TEST), repo[TEST]),
      file_diff(BUILD, base[BUILD], build, build_hunks),
  ]
  diffs += [file_diff(g, base.get(g), api_golden.restyle(repo[g], style))
            for g in GOLDENS]
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


_USE_TREE = r'''
import inspect, json, os, sys
repo, tree = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import tf_overlay
tf_overlay.install(root=tree)
os.environ.update({
    'SLURM_PROCID': '3', 'SLURM_STEP_NODELIST': 'n[9-10]',
    'SLURM_STEP_TASKS_PER_NODE': '2(x2)', 'SLURM_STEP_NUM_TASKS': '4',
    'SLURMD_NODENAME': 'n10', 'SLURM_NODEID': '1', 'SLURM_LOCALID': '1',
    'CUDA_VISIBLE_DEVICES': ''})
import tensorflow as tf
cls = tf.distribute.cluster_resolver.SlurmClusterResolver
assert cls is tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver
resolver = cls()
print(json.dumps({
    'source': inspect.getsourcefile(cls),
    'cluster': resolver.cluster_spec().as_dict(),
    'task': list(resolver.get_task_info()),
    'master': resolver.master(),
}))
'''


def use_tree(tree, root=ROOT):
  """Imports the SlurmClusterResolver of `tree` over pip TensorFlow and uses it.

  Runs a fresh Python in which this repository's overlay serves `tree`'s
  tensorflow/ files, under the environment of task 3 of a 4-task step on
  n9 and n10.

  Returns:
    What the resolver said: {'source', 'cluster', 'task', 'master'}.
  """
  with tempfile.TemporaryDirectory() as cwd:
    result = subprocess.run(
        [sys.executable, '-c', _USE_TREE, os.path.abspath(root),
         os.path.abspath(tree)],
        cwd=cwd, env=_clean_env(), capture_output=True, text=True,
        check=False, timeout=600)
  if result.returncode:
    raise PatchError('the patched tree\'s resolver failed:\n' +
                     result.stderr[-3000:])
  return json.loads(result.stdout.strip().splitlines()[-1])


def check(release, tree=None, root=ROOT, out=sys.stdout):
  """Checks that the patch applies; on a scratch pip tree, also uses it.

  With `tree` (a TensorFlow checkout), runs `git apply --check` there and
  changes nothing. Without it, builds a tree from pip TensorFlow in a
  temporary folder, applies the patch, compares the patched files with this
  repository's and constructs the patched resolver from that tree.

  Raises:
    PatchError: on any failure.
  """
  if tree is not None:
    base, description = tree_base(tree, release)
    patch, _ = make_patch(release, base, description, root=root)
    git_apply(tree, patch, check_only=True)
    out.write('OK: the patch applies to %s (git apply --check)\n' % description)
    return
  files, description = pip_tree_files(release)
  with tempfile.TemporaryDirectory() as scratch:
    write_tree(files, scratch)
    patch, _ = make_patch(release, files, description, root=root)
    git_apply(scratch, patch, check_only=True)
    git_apply(scratch, patch)
    expected = repo_files(root)
    for relpath, text in expected.items():
      if relpath in GOLDENS:
        text = api_golden.restyle(text, release.golden_style)
      if _read(scratch, relpath) != text:
        raise PatchError('after the patch, %s differs from the repository\'s' %
                         relpath)
    used = use_tree(scratch, root)
    if (os.path.realpath(used['source']) !=
        os.path.realpath(os.path.join(scratch, MODULE))):
      raise PatchError('the resolver came from %s' % used['source'])
    out.write('OK: the patch applies to a tree built from %s, and its '
              'resolver works: %s\n' % (description, json.dumps(used['cluster'])))


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
                      'applies: to --tf-tree with git apply --check, or to a '
                      'scratch tree built from pip TensorFlow, whose patched '
                      'resolver is then run')
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
