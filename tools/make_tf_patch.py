"""Makes the patch that puts this repository's resolver into a TensorFlow tree.

    .venv/bin/python tools/make_tf_patch.py --tf-version 2.21 \\
        --tf-tree ~/src/tensorflow --out slurm.patch   # or --check
    cd ~/src/tensorflow && git apply slurm.patch  # or: patch -p1 < slurm.patch

The files the patch touches are copied from the tree (`--tf-tree`; else from
a tree rebuilt from pip TensorFlow, `pip_tree`) into a scratch git
repository; `patched_files` are written over them and `git diff` is the
patch: every slurm_*.py file of PACKAGES (cluster_resolver/; failure_handling/
has none) and README_Slurm.md (the tree's license headers must stay); in
each package's BUILD, the repository's slurm_* targets as its own BUILD
writes them, without its stand-ins (`splice_build`); the class goldens
(`api_golden`); tools/tf_release_note.md in RELEASE.md under a new heading
for the release after the patched one, which has shipped; and UPSTREAM, the
change of TensorFlow's own failure_handling.py (`TerminationConfig(
termination_signals=...)`), its BUILD and golden, with its test, and
README_Slurm.md's section on the end of a job, applied last
(`upstream_files`), its release note (UPSTREAM_NOTE) after the resolver's.

`--check` applies the patch to two scratch trees, with `git apply` and with
`patch -p1`, compares them, and runs every carried test file of the patched
tree over pip TensorFlow, the tree's modules served by the overlay, with
nothing of this repository on the import path (`run_carried_tests`). Pip
ships no test file, README_Slurm.md, RELEASE.md or BUILD: a patch made from
pip adds the first two as new files and changes samples of the BUILDs (notes
say so); for a checkout use --tf-tree.

`--series OUT` writes the same change as a series of `git format-patch`
files, one pull request each, from the stages stored in SERIES (the last
one computed from the repository) and UPSTREAM after them, and prints their
sizes; with `--check` it applies them with `git am` and, after each, checks
the Slurm targets' deps (tools/strict_deps.py) and tests the tree
(`check_series`).
docs/development.md says how to add a stage.

`--companion FILE` writes the companion (COMPANION) as one `git
format-patch` file to apply after the core; with `--check` it applies the
core and then the companion with `git am` and runs the companion's tests
(`check_companion`).
"""

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

try:
  from tools import api_golden  # Imported as tools.make_tf_patch.
  from tools import strict_deps
except ImportError:
  import api_golden  # Run as a script: tools/ is sys.path[0].
  import strict_deps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'tensorflow/python/distribute/cluster_resolver'
FAILURE_HANDLING = 'tensorflow/python/distribute/failure_handling'
# Their slurm_* files and targets. failure_handling/ has none: its BUILD is
# spliced so that the series' last patches drop the earlier stages' targets.
PACKAGES = (PACKAGE, FAILURE_HANDLING)
BUILDS = tuple(p + '/BUILD' for p in PACKAGES)
MODULE = PACKAGE + '/slurm_cluster_resolver.py'
TEST = PACKAGE + '/slurm_cluster_resolver_test.py'
BUILD = PACKAGE + '/BUILD'
README = PACKAGE + '/README_Slurm.md'
RELEASE_NOTES = 'RELEASE.md'
RELEASE_NOTE = 'tools/tf_release_note.md'  # This repository's entry there.
GOLDENS = tuple(sorted(api_golden.GOLDENS.values()))  # Class goldens.
OVERLAY = 'pip_package'  # The overlay's package and its .pth.
RELEASES = ('2.21',)  # Releases the patch is made for (major.minor).
# The change to TensorFlow's own files: `git diff` against the tree of
# failure_handling.py (TerminationConfig(termination_signals=...)), its BUILD
# (a test target at the end) and the v2 golden of TerminationConfig, and the
# test it adds; applied after the repository's files. In the series it is the
# last patch, UPSTREAM_MESSAGE its message.
UPSTREAM = 'tools/tf_termination_signals.diff'
UPSTREAM_MESSAGE = 'tools/tf_termination_signals.txt'
UPSTREAM_NOTE = 'tools/tf_termination_signals.md'  # Its release note.

# Samples, for a tree rebuilt from pip, of the files the patch changes that
# pip does not ship, each in the shape of TensorFlow 2.21's and with what the
# patch needs of it. cluster_resolver/BUILD: the loads, the target of the
# package's __init__.py and the Slurm library (pip has no test file, so no
# test target).
_PIP_BUILD = '''\
load("//tensorflow:strict.default.bzl", "py_strict_library")
load("//tensorflow:tensorflow.default.bzl", "tf_py_strict_test")

py_strict_library(
    name = "cluster_resolver_lib",
    srcs = ["__init__.py"],
    deps = [
        ":base_cluster_resolver_py",
        ":slurm_cluster_resolver_py",
    ],
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
'''
# failure_handling/BUILD: the loads, the targets of the files pip ships, each
# with a few of its deps, and its last target as TensorFlow's (UPSTREAM adds a
# test target after it).
_PIP_FAILURE_HANDLING_BUILD = '''\
load("//tensorflow:strict.default.bzl", "py_strict_library")
load("//tensorflow:tensorflow.default.bzl", "tf_custom_op_py_strict_library", "tf_py_strict_test")

py_strict_library(
    name = "failure_handling_lib",
    srcs = [
        "failure_handling.py",
    ],
    deps = [
        ":failure_handling_util",
        "//tensorflow/python/util:tf_export",
    ],
)

py_strict_library(
    name = "failure_handling_util",
    srcs = [
        "failure_handling_util.py",
    ],
    deps = [
        "//tensorflow/python/platform:tf_logging",
    ],
)

py_strict_library(
    name = "preemption_watcher",
    srcs = ["preemption_watcher.py"],
    deps = [
        ":failure_handling_util",
        "//tensorflow/python/util:tf_export",
    ],
)

tf_custom_op_py_strict_library(
    name = "check_preemption_py",
    kernels = [
        "//tensorflow/core/distributed_runtime/preemption:check_preemption_op_kernel",
        "//tensorflow/core/distributed_runtime/preemption:check_preemption_op_op_lib",
    ],
    deps = [
        "//tensorflow/core/distributed_runtime/preemption:gen_check_preemption_op",
        "//tensorflow/python/framework:for_generated_wrappers",
    ],
)
'''
_PIP_SAMPLES = {
    BUILD: _PIP_BUILD,
    FAILURE_HANDLING + '/BUILD': _PIP_FAILURE_HANDLING_BUILD,
}


class PatchError(Exception):
  """The patch cannot be made, or does not apply."""


def _read(root, relpath):
  try:
    with open(os.path.join(root, relpath), encoding='utf-8', newline='') as f:
      return f.read()
  except FileNotFoundError:
    return None


def _git(tree, *args, **kwargs):
  config = ['-c', 'core.autocrlf=false', '-c', 'diff.noprefix=false',
            '-c', 'diff.mnemonicPrefix=false', '-c', 'user.name=tf-patch',
            '-c', 'user.email=tf-patch@localhost', '-c', 'commit.gpgsign=false']
  return subprocess.run(['git'] + config + list(args), cwd=tree, text=True,
                        capture_output=True, check=True, **kwargs).stdout


def slurm_sources(root, suffix='.py'):
  """The paths of the slurm_*<suffix> files of PACKAGES under `root`."""
  return [p + '/' + n for p in PACKAGES if os.path.isdir(os.path.join(root, p))
          for n in sorted(os.listdir(os.path.join(root, p)))
          if n.startswith('slurm_') and n.endswith(suffix)]


def repo_files(root=ROOT):
  """The repository's files the patch carries as they are, by path."""
  paths = slurm_sources(root) + [README] + list(GOLDENS)
  return {p: _read(root, p) for p in paths}


def _of_release(version, release):
  return bool(version) and (version + '.').startswith(release + '.')


def tree_files(tree, release, paths):
  """The files at `paths` of a TensorFlow checkout of `release`, by path."""
  version = re.findall(r'^TF_VERSION = "([^"]+)"', _read(
      tree, 'tensorflow/tf_version.bzl') or '', re.M)
  version = version and version[0]
  if not _of_release(version, release):
    raise PatchError('%s is TensorFlow %s, not %s' % (tree, version, release))
  files = {p: _read(tree, p) for p in paths + ['tensorflow/tf_version.bzl']}
  crlf = [p for p, text in files.items() if text and '\r\n' in text]
  if crlf:
    raise PatchError('%s has CRLF line ends (TensorFlow\'s are LF): %s' %
                     (tree, ', '.join(crlf)))
  return files


def _bare_python(folder, overlay_root=None):
  """A Python whose site-packages are this one's, without their .pth files.

  So nothing started from a .pth there (this checkout's overlay) runs in it.
  With `overlay_root`, the overlay's package is installed in it as a wheel
  would be, with its `.pth`, serving the `tensorflow/` of that tree.
  Processes it starts use it too.
  """
  subprocess.run(
      [sys.executable, '-m', 'venv', '--clear', '--without-pip', folder],
      check=True, capture_output=True, timeout=120)
  python = os.path.join(folder, 'bin', 'python')
  site = subprocess.run(
      [python, '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
      check=True, capture_output=True, text=True).stdout.strip()
  with open(os.path.join(site, 'tensorflow_beside.pth'), 'w',
            encoding='utf-8') as f:
    f.write(sysconfig.get_path('purelib') + '\n')
  if overlay_root:
    package = os.path.join(site, 'tf_slurm_resolver')
    shutil.copytree(os.path.join(ROOT, OVERLAY, 'tf_slurm_resolver'), package,
                    ignore=shutil.ignore_patterns('__pycache__'))
    os.symlink(os.path.join(overlay_root, 'tensorflow'),
               os.path.join(package, 'tensorflow'))
    shutil.copy(os.path.join(ROOT, OVERLAY, 'tf_slurm_resolver.pth'), site)
  return python


def _quiet_env(**extra):
  env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
  # No __pycache__ in the trees either.
  env.update(TF_CPP_MIN_LOG_LEVEL='3', PYTHONDONTWRITEBYTECODE='1', **extra)
  return env


def pip_tree(release):
  """Files of a tree laid out like TensorFlow's, from pip TensorFlow."""
  spec = importlib.util.find_spec('tensorflow')  # Imports nothing.
  names = importlib.metadata.packages_distributions().get('tensorflow')
  if not spec or not names:
    raise PatchError('no pip TensorFlow installed; pass --tf-tree')
  version = importlib.metadata.version(names[0])
  if not _of_release(version, release):
    raise PatchError('the installed TensorFlow is %s, not %s' %
                     (version, release))
  files = {}
  for package in PACKAGES:
    folder = os.path.join(list(spec.submodule_search_locations)[0],
                          *package.split('/')[1:])
    files.update({package + '/' + n: _read(folder, n)
                  for n in os.listdir(folder) if n.endswith('.py')})
  with tempfile.TemporaryDirectory() as scratch:
    result = subprocess.run(
        [_bare_python(scratch), os.path.join(ROOT, 'tools', 'api_golden.py'),
         '--print-json'], cwd=scratch, env=_quiet_env(), capture_output=True,
        text=True, check=False, timeout=600)
  if result.returncode:
    raise PatchError('pip TensorFlow\'s goldens: ' + result.stderr[-3000:])
  files.update(json.loads(result.stdout))
  files.update(_PIP_SAMPLES)
  files['tensorflow/tf_version.bzl'] = 'TF_VERSION = "%s"\n' % version
  return files


def _parts(build):
  """The file as [(rule name or None, text)]: rules and what lies between."""
  parts, pos = [], 0
  for match in re.finditer(r'^\w+\(\n.*?^\)\n', build, re.M | re.S):
    name = re.search(r'^    name = "([^"]+)",$', match.group(0), re.M)
    parts += [(None, build[pos:match.start()]),
              (name and name.group(1), match.group(0))]
    pos = match.end()
  return parts + [(None, build[pos:])]


def _loads(build):
  """{.bzl file: (its load statement, the symbols loaded)}."""
  return {m.group(1): (m.group(0), re.findall(r'"([^"]+)"', m.group(0)))
          for m in re.finditer(r'^load\(\s*"([^"]+)",[^)]*\)', build, re.M)}


def splice_build(tree_build, repo_build, path=BUILD):
  """The tree's BUILD at `path` with the repository's slurm_* targets.

  A target the tree has is replaced where it is; a new one goes after the
  previous target of the repository's order that the tree has (before the
  first, if none; at the end, if the tree has none); slurm_* targets only the
  tree has are dropped. The tree's loads of the targets' rule kinds get the
  kinds they lack; the repository's other loads (its stand-ins) stay out.
  """
  ours = [(n, t) for n, t in _parts(repo_build) if n and n.startswith('slurm_')]
  keep = {n for n, _ in ours}
  parts, drop_blank = [], False
  for name, text in _parts(tree_build):
    if name and name.startswith('slurm_') and name not in keep:
      if parts and parts[-1] == (None, '\n'):  # The blank line before it.
        parts.pop()
      else:
        drop_blank = True
    elif not (drop_blank and text == '\n'):
      parts.append((name, text))
      drop_blank = False
  names = [n for n, _ in parts]
  first = next((n for n, _ in ours if n in names), None)
  at, after = (names.index(first), False) if first else (len(parts), True)
  for name, text in ours:
    if name in names:
      at, after = names.index(name), True
      parts[at] = (name, text)
      at += 1
    else:  # Before the first target the tree has, else after the previous.
      parts[at:at] = [(None, '\n'), (name, text)] if after else [
          (name, text), (None, '\n')]
      at += 2
    names = [n for n, _ in parts]
  build = ''.join(t for _, t in parts)
  kinds = {t.split('(', 1)[0] for _, t in ours}
  theirs = _loads(build)
  for bzl, (_, symbols) in _loads(repo_build).items():
    used = kinds.intersection(symbols[1:])
    if not used:
      continue
    if bzl not in theirs:
      raise PatchError('%s does not load %s' % (path, bzl))
    old, loaded = theirs[bzl]
    merged = [bzl] + sorted(set(loaded[1:]) | used)
    if merged != loaded:
      if '\n' in old:
        new = 'load(\n%s)' % ''.join('    "%s",\n' % x for x in merged)
      else:
        new = 'load(%s)' % ', '.join('"%s"' % x for x in merged)
      build = build.replace(old, new, 1)
  return build


def next_release(release):
  major, minor = release.split('.')
  return '%s.%d.0' % (major, int(minor) + 1)


def insert_release_note(release_md, note, release):
  """RELEASE.md with `note` under a new heading of the next release."""
  heading = '# Release %s\n' % next_release(release)
  if heading in release_md.splitlines(True):
    raise PatchError('%s already has %r: put %s under it by hand' %
                     (RELEASE_NOTES, heading.strip(), RELEASE_NOTE))
  return '%s\n## TensorFlow\n\n%s\n%s' % (heading, note, release_md)


def _header(text):
  """A file's license header: its lines up to the first '# ====' line."""
  return text and text.split('\n# ====', 1)[0]


def _write(tree, files):
  for relpath, text in files.items():
    if text is not None:
      os.makedirs(os.path.dirname(os.path.join(tree, relpath)), exist_ok=True)
      with open(os.path.join(tree, relpath), 'w', encoding='utf-8',
                newline='') as f:
        f.write(text)


def write_tree(files, tree):
  """Writes `files` (None: absent) under `tree`, a new git repository."""
  _write(tree, files)
  _git(tree, 'init', '-q')
  _git(tree, 'add', '-A')
  _git(tree, 'commit', '-q', '--allow-empty', '-m', 'base')


def upstream_paths(root=ROOT):
  """The tree's paths UPSTREAM changes or adds, in its order."""
  return re.findall(r'^diff --git a/\S+ b/(\S+)$', _read(root, UPSTREAM),
                    re.M)


def upstream_files(files, root=ROOT, paths=None):
  """{path: text} of the files UPSTREAM changes or adds, after the change.

  Args:
    files: {path: text or None} of the tree's files before the change.
    root: this repository.
    paths: the paths of UPSTREAM to apply (default: all).

  Raises:
    PatchError: if UPSTREAM does not apply to `files`.
  """
  paths = upstream_paths(root) if paths is None else paths
  with tempfile.TemporaryDirectory() as folder:
    _write(folder, {p: files.get(p) for p in paths})
    try:
      _git(folder, 'apply', '--whitespace=nowarn',
           *['--include=' + p for p in paths], '-',
           input=_read(root, UPSTREAM))
    except subprocess.CalledProcessError as e:
      raise PatchError('%s does not apply: %s' % (UPSTREAM, e.stderr)) from e
    return {p: _read(folder, p) for p in paths}


def patched_files(release, base, root=ROOT, upstream=True):
  """{path: new text} of every file the patch changes, and notes.

  Without `upstream`, those of the patch without UPSTREAM.
  """
  repo = repo_files(root)
  for relpath, text in repo.items():
    if (relpath.endswith('.py') and base.get(relpath) and
        _header(base[relpath]) != _header(text)):
      raise PatchError('%s: the repository\'s license header differs from '
                       'the tree\'s; TensorFlow\'s must stay' % relpath)
  def tree_file(path):
    if base.get(path) is None:
      raise PatchError('the tree has no %s' % path)
    return base[path]
  new = dict(repo)
  for path in BUILDS:
    new[path] = splice_build(tree_file(path), _read(root, path), path)
  notes = []
  samples = [p for p, text in sorted(_PIP_SAMPLES.items())
             if base.get(p) == text]
  if samples:
    notes.append('pip ships no %s: the patch changes samples of them in the '
                 'shape of TensorFlow %s\'s (for a checkout, use --tf-tree)' %
                 (', '.join(samples), release))
  if base.get(RELEASE_NOTES) is None:
    notes.append('the tree has no %s: no release note' % RELEASE_NOTES)
  else:
    note = _read(root, RELEASE_NOTE)
    if upstream:
      note += _read(root, UPSTREAM_NOTE)
    new[RELEASE_NOTES] = insert_release_note(base[RELEASE_NOTES], note,
                                             release)
    notes.append('%s: the note is under a new "# Release %s" (%s has '
                 'shipped)' % (RELEASE_NOTES, next_release(release), release))
  notes += ['the tree has no %s: the patch adds it' % p for p in (TEST, README)
            if base.get(p) is None]
  if upstream:
    new.update(upstream_files({**base, **new}, root))
  return new, notes


def make_patch(release, base, description, root=ROOT):
  """Returns (the patch, notes) against `base` ({path: text or None})."""
  new, notes = patched_files(release, base, root)
  with tempfile.TemporaryDirectory() as tree:
    write_tree(base, tree)
    _write(tree, new)
    _git(tree, 'add', '-A')
    diff = _git(tree, 'diff', '--cached', '--no-color', '--no-ext-diff',
                '--no-renames')
  header = ['SlurmClusterResolver and TerminationConfig(termination_signals='
            '...) for TensorFlow %s' % release, '',
            'Made by tools/make_tf_patch.py against %s.' % description,
            'Apply at the root of the tree: git apply FILE (or patch -p1 < '
            'FILE).', '', 'Notes:'] + ['  * ' + n for n in notes]
  return '\n'.join(header) + '\n\n' + diff, notes


def git_apply(tree, patch, check_only=False):
  """`git apply [--check]` in `tree`; raises PatchError if it fails."""
  try:
    _git(tree, 'apply', *(['--check'] if check_only else []), '-',
         input=patch)
  except subprocess.CalledProcessError as e:
    raise PatchError('git apply failed in %s: %s' % (tree, e.stderr)) from e


def patch_p1(tree, patch):
  """`patch -p1` in `tree` (no fuzz), after a dry run."""
  if shutil.which('patch') is None:
    raise PatchError('no patch(1) on PATH')
  for args in (['--dry-run'], []):
    result = subprocess.run(['patch', '-p1', '--batch', '--fuzz=0'] + args,
                            cwd=tree, input=patch, text=True,
                            capture_output=True, check=False)
    if result.returncode:
      raise PatchError('patch -p1 %sfailed in %s: %s' % (
          args and '--dry-run ' or '', tree, result.stdout + result.stderr))


def differing_files(tree_a, tree_b):
  """What `diff -rq` reports between two trees (.git left out)."""
  result = subprocess.run(['diff', '-rq', '-x', '.git', tree_a, tree_b],
                          capture_output=True, text=True, check=False)
  if result.returncode > 1:
    raise PatchError('diff failed: ' + result.stderr)
  return result.stdout.splitlines()


# Run in the patched tree's Python: every named test module, with unittest,
# after a look at the classes TensorFlow publishes (argv[1], in JSON).
_RUN_TESTS = r'''
import importlib, inspect, json, os.path, sys, unittest
from absl import flags
import tensorflow as tf
flags.FLAGS.mark_as_parsed()  # As absltest.main() would, for its helpers.
real = os.path.realpath
def source(symbol):
  obj = tf
  for part in symbol.split('.'):
    obj = getattr(obj, part, None)
  return obj and real(inspect.getsourcefile(obj))
cls = tf.distribute.cluster_resolver.SlurmClusterResolver
report = {'sources': {s: source(s) for s in json.loads(sys.argv[1])},
          'v1_is_v2': cls is
          tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver,
          'tests': {}}
for name in sys.argv[2:]:
  module = importlib.import_module(name)
  suite = unittest.defaultTestLoader.loadTestsFromModule(module)
  result = unittest.TextTestRunner(stream=sys.stderr).run(suite)
  report['tests'][name] = {
      'file': real(module.__file__), 'run': result.testsRun,
      'failures': len(result.failures), 'errors': len(result.errors),
      'skipped': len(result.skipped)}
print('CARRIED-TESTS ' + json.dumps(report))
'''


def run_carried_tests(tree, timeout=1200, companion=False):
  """Runs every slurm_*_test.py of PACKAGES and UPSTREAM's tests in a tree.

  With `companion`, the tree's COMPANION is importable too (it lies beside
  tensorflow/, which must not be on the import path) and its *_test.py
  files run instead.

  Returns {'sources': {symbol: the file of tf.<symbol>, or None}, for
  SlurmClusterResolver and the classes of api_golden.TF_GOLDENS
  (TerminationConfig), 'v1_is_v2', 'tests': {module:
  {'file', 'run', 'failures', 'errors', 'skipped'}}}. Raises PatchError if a
  test fails, a file runs no test, or a test module or a class comes from
  outside `tree`.
  """
  tree = os.path.realpath(tree)
  if companion:
    modules = [p[:-3].replace('/', '.') for p in companion_files(tree)
               if p.endswith('_test.py')]
  else:
    tests = slurm_sources(tree, '_test.py') + [
        p for p in upstream_paths()
        if p.endswith('_test.py') and os.path.exists(os.path.join(tree, p))]
    modules = [p[:-3].replace('/', '.') for p in tests]
  symbols = [api_golden.SYMBOL] + [
      symbol for _, symbol in api_golden.TF_GOLDENS.values()]
  with tempfile.TemporaryDirectory() as scratch:
    python = _bare_python(os.path.join(scratch, 'venv'), overlay_root=tree)
    env = _quiet_env(TEST_TMPDIR=scratch)
    if companion:
      os.mkdir(os.path.join(scratch, 'path'))
      os.symlink(os.path.join(tree, COMPANION),
                 os.path.join(scratch, 'path', COMPANION))
      env['PYTHONPATH'] = os.path.join(scratch, 'path')
    result = subprocess.run(
        [python, '-c', _RUN_TESTS, json.dumps(symbols)] + modules, cwd=scratch,
        env=env, capture_output=True, text=True, check=False, timeout=timeout)
  lines = [l for l in result.stdout.splitlines() if l.startswith('CARRIED-')]
  if result.returncode or not lines:
    raise PatchError('the carried tests did not run (status %d): %s' %
                     (result.returncode, result.stderr[-5000:]))
  report = json.loads(lines[-1].split(' ', 1)[1])
  problems = ['%s: %d failures, %d errors' % (n, c['failures'], c['errors'])
              for n, c in report['tests'].items()
              if c['failures'] or c['errors']]
  problems += ['%s ran no test' % n for n, c in report['tests'].items()
               if not c['run']]
  outside = [c['file'] for c in report['tests'].values()
             if not os.path.realpath(c['file']).startswith(tree + os.sep)]
  outside += ['tf.%s (%s)' % (s, f) for s, f in report['sources'].items()
              if not (f or '').startswith(tree + os.sep)]
  problems += ['%s is not from the tree' % f for f in outside]
  if not report['v1_is_v2']:
    problems.append('tf.compat.v1 has another SlurmClusterResolver')
  if problems:
    raise PatchError('the carried tests failed against the patched tree: %s\n'
                     '%s' % ('; '.join(problems), result.stderr[-5000:]))
  return report


def base_files(release, tf_tree=None, root=ROOT):
  """(the files the patch changes as the tree has them, its description)."""
  if not tf_tree:
    return pip_tree(release), 'a tree rebuilt from pip TensorFlow'
  paths = (list(repo_files(root)) + list(BUILDS) + upstream_paths(root) +
           [RELEASE_NOTES, VISIBILITY])
  return tree_files(tf_tree, release, paths), 'the tree at ' + tf_tree


def check(release, tf_tree=None, root=ROOT, out=sys.stdout):
  """Applies the patch both ways to scratch trees and runs its tests there."""
  base, description = base_files(release, tf_tree, root)
  patch, notes = make_patch(release, base, description, root)
  for note in notes:
    out.write('note: %s\n' % note)
  with tempfile.TemporaryDirectory() as scratch:
    by_git, by_patch = (os.path.join(scratch, d) for d in ('git', 'patch'))
    for tree in (by_git, by_patch):
      write_tree(base, tree)
    git_apply(by_git, patch)
    patch_p1(by_patch, patch)
    differing = differing_files(by_git, by_patch)
    if differing:
      raise PatchError('git apply and patch -p1 differ: %s' % differing)
    report = run_carried_tests(by_git)
    sources = {s: os.path.relpath(f, os.path.realpath(by_git))
               for s, f in report['sources'].items()}
  out.write('OK: the patch applies to %s with git apply and patch -p1 (the '
            'same trees)\n' % description)
  for symbol, path in sorted(sources.items()):
    out.write('OK: tf.%s is the patched tree\'s, from %s\n' % (symbol, path))
  for name, counts in sorted(report['tests'].items()):
    out.write('OK: %s: %d tests (%d skipped)\n' %
              (name, counts['run'], counts['skipped']))
  return report


# The series (--series): the patch as pull requests, each a stage of the
# repository's files. SERIES holds, in order, NN-slug.txt (the commit
# message: title, blank line, description) for every stage and NN-slug.diff
# (`git diff` of the repository's files against the previous stage) for
# every stage but the last. Stage 0 is the tree's module and TEST; the last
# stage is the repository itself. UPSTREAM follows as the last patch, so the
# series ends at the patch.
SERIES = 'tools/tf_series'
SERIES_DATE = '2026-01-01T00:00:00+00:00'  # Commits' dates, for stable files.
PRODUCT_LIMIT = 300  # Product lines a pull request should add at most.
SERIES_PRODUCT_LIMIT = 1000  # Product lines the whole series adds at most.
MAX_PATCHES = 8  # Pull requests in the series at most.


def series_stages(root=ROOT):
  """[(name, commit message, diff or None)] of SERIES, in order.

  Raises:
    PatchError: if a stage but the last lacks its diff, or the last has one.
  """
  folder = os.path.join(root, SERIES)
  names = sorted(n[:-4] for n in os.listdir(folder) if n.endswith('.txt'))
  stages = [(n, _read(folder, n + '.txt'), _read(folder, n + '.diff'))
            for n in names]
  if not stages or stages[-1][2] is not None:
    raise PatchError('%s: the last stage is the repository: it has a message '
                     'and no diff' % SERIES)
  missing = [n + '.diff' for n, _, diff in stages[:-1] if diff is None]
  if missing:
    raise PatchError('%s lacks %s' % (SERIES, ', '.join(missing)))
  return stages


def series_base(base, root=ROOT):
  """`base` with TEST, TensorFlow's own (the repository's copy) if it lacks it.

  Pip ships no test file; the series keeps TEST unchanged from its start.
  """
  files = dict(base)
  if files.get(TEST) is None:
    files[TEST] = _read(root, TEST)
  return files


def _files_under(folder):
  """{path relative to `folder`: text} of every file under it."""
  found = {}
  for dirpath, _, filenames in os.walk(folder):
    for name in filenames:
      path = os.path.relpath(os.path.join(dirpath, name), folder)
      found[path.replace(os.sep, '/')] = _read(folder, path)
  return found


def stored_stages(base, diffs):
  """The repository's files at each stored stage, from `base` (series_base).

  Args:
    base: the tree's files; stage 0 is its MODULE and TEST.
    diffs: the stored stages' diffs, in order.

  Returns:
    [{path: text}], one per diff.
  """
  states = []
  with tempfile.TemporaryDirectory() as folder:
    _write(folder, {MODULE: base[MODULE], TEST: base[TEST]})
    for diff in diffs:
      try:
        _git(folder, 'apply', '--whitespace=nowarn', '-', input=diff)
      except subprocess.CalledProcessError as e:
        raise PatchError('stage %d of %s does not apply: %s' %
                         (len(states) + 1, SERIES, e.stderr)) from e
      states.append(_files_under(folder))
  return states


def stage_tree_files(release, base, stage):
  """{path: new text} of the tree's files at a stored stage.

  A stored stage changes the slurm_* files of PACKAGES, README_Slurm.md and
  the class goldens as the stage has them; each package's BUILD with the
  stage's slurm_* targets (splice_build), if the stage has that BUILD; and
  the stage's release note under a new heading in RELEASE.md, if it has one.
  """
  new = {p: t for p, t in stage.items()
         if p == README or p in GOLDENS or (p.endswith('.py') and any(
             p.startswith(package + '/slurm_') for package in PACKAGES))}
  for path in BUILDS:
    if path in stage:
      new[path] = splice_build(base[path], stage[path], path)
  if RELEASE_NOTE in stage and base.get(RELEASE_NOTES) is not None:
    new[RELEASE_NOTES] = insert_release_note(
        base[RELEASE_NOTES], stage[RELEASE_NOTE], release)
  return new


def series_messages(root=ROOT):
  """The commit message of each patch of the series, in order.

  Those of the stages of SERIES, then UPSTREAM_MESSAGE.
  """
  return [message for _, message, _ in series_stages(root)] + [
      _read(root, UPSTREAM_MESSAGE)]


def series_trees(release, base, root=ROOT):
  """[(commit message, {path: text or None})]: the tree after each patch.

  `base` is series_base's. The stored stages, the computed one (the
  repository's files) and UPSTREAM, which makes the tree the single patch's.
  A path a stage no longer has is None.
  """
  stages = series_stages(root)
  states = stored_stages(base, [diff for _, _, diff in stages[:-1]])
  trees = [stage_tree_files(release, base, s) for s in states]
  trees.append(patched_files(release, base, root, upstream=False)[0])
  trees.append(patched_files(release, base, root)[0])
  result, before = [], {}
  for message, files in zip(series_messages(root), trees):
    tree = dict(base)
    tree.update({p: t for p, t in files.items() if t is not None})
    tree.update({p: None for p in before if tree.get(p) is None})
    result.append((message, tree))
    before = tree
  return result


def _series_env():
  return dict(os.environ, GIT_AUTHOR_DATE=SERIES_DATE,
              GIT_COMMITTER_DATE=SERIES_DATE)


def write_series(release, base, out, root=ROOT):
  """Writes the series as `git format-patch` files in `out`; their paths.

  Old NNNN-*.patch files in `out` go first. Raises PatchError if a patch
  changes nothing.
  """
  os.makedirs(out, exist_ok=True)
  for name in os.listdir(out):
    if re.match(r'\d{4}-.*\.patch$', name):
      os.remove(os.path.join(out, name))
  with tempfile.TemporaryDirectory() as tree:
    write_tree(base, tree)
    start = _git(tree, 'rev-parse', 'HEAD').strip()
    for message, files in series_trees(release, base, root):
      _write(tree, files)
      for path in [p for p, t in files.items() if t is None]:
        if os.path.exists(os.path.join(tree, path)):
          os.remove(os.path.join(tree, path))
      _git(tree, 'add', '-A')
      if not _git(tree, 'status', '--porcelain'):
        raise PatchError('the patch %r changes nothing' %
                         message.split('\n', 1)[0])
      _git(tree, 'commit', '-q', '-F', '-', input=message, env=_series_env())
    names = _git(tree, 'format-patch', '--zero-commit', '--no-signature',
                 '--no-renames', '-o', os.path.abspath(out),
                 start + '..HEAD', env=_series_env()).split()
  return names


def _is_test(path):
  name = os.path.basename(path)
  return name.endswith('_test.py') or name.endswith('test_util.py')


def patch_counts(patch):
  """{'product', 'test', 'other'}: the lines a patch file adds, by kind.

  Product lines are those of .py files that are not tests or test
  utilities (docstrings and comments included).
  """
  counts = {'product': 0, 'test': 0, 'other': 0}
  kind = 'other'
  for line in patch.splitlines():
    if line.startswith('diff --git '):
      path = line.split(' b/', 1)[1]
      kind = ('other' if not path.endswith('.py') else
              'test' if _is_test(path) else 'product')
    elif line.startswith('+') and not line.startswith('+++ '):
      counts[kind] += 1
  return counts


def removed_test_lines(patch):
  """The lines a patch file removes from test files (tests, test utilities).

  A test is written in its final form in the patch that adds it: no later
  patch rewrites or deletes it.
  """
  removed, kind = [], None
  for line in patch.splitlines():
    if line.startswith('diff --git '):
      kind = _is_test(line.split(' b/', 1)[1])
    elif kind and line.startswith('-') and not line.startswith('--- '):
      removed.append(line[1:])
  return removed


def patch_title(patch):
  match = re.search(r'^Subject: \[PATCH[^\]]*\] (.*(?:\n .*)*)', patch, re.M)
  return match.group(1).replace('\n ', ' ') if match else '?'


def series_table(paths):
  """The table of the series' patches: title and lines added, by kind."""
  rows = ['patch  product  test  other  title']
  total = {'product': 0, 'test': 0, 'other': 0}
  for path in paths:
    with open(path, encoding='utf-8') as f:
      patch = f.read()
    counts = patch_counts(patch)
    total = {kind: total[kind] + counts[kind] for kind in total}
    flag = ' (over %d)' % PRODUCT_LIMIT if counts[
        'product'] > PRODUCT_LIMIT else ''
    rows.append('%5s  %7d  %4d  %5d  %s%s' % (
        os.path.basename(path)[:4], counts['product'], counts['test'],
        counts['other'], patch_title(patch), flag))
  flag = ' (over %d)' % SERIES_PRODUCT_LIMIT if total[
      'product'] > SERIES_PRODUCT_LIMIT else ''
  rows.append('%5s  %7d  %4d  %5d  %d patches (at most %d)%s' % (
      'all', total['product'], total['test'], total['other'], len(paths),
      MAX_PATCHES, flag))
  return '\n'.join(rows) + '\n'


def check_strict_deps(tree, patch, companions=()):
  """Raises PatchError naming `patch` if `tree`'s Slurm deps are not strict.

  That is, if a Slurm target's deps (or a target's of `companions`) lack the
  target of a module its sources import, or have a target whose modules
  they do not import (strict_deps).
  """
  problems = strict_deps.problems(tree, PACKAGES, companions)
  if problems:
    raise PatchError('%s: the deps are not strict: %s' %
                     (patch, '; '.join(problems)))


def check_series(release, base, paths, description, root=ROOT,
                 out=sys.stdout):
  """Applies the series with `git am` to a scratch tree and tests each stage.

  After each patch: TEST is unchanged, the Slurm targets' deps are strict
  (check_strict_deps), and every carried test of the tree (TEST among them)
  passes; after the last, the tree's files are the single patch's
  (make_patch) applied to the tree.

  Args:
    release: as RELEASES.
    base: the tree's files (base_files), without series_base's TEST.
    paths: the patch files, in order (write_series).
    description: of the tree, for the messages.
    root: this repository.
    out: where the results go.

  Raises:
    PatchError: if a patch does not apply, changes TEST, leaves deps that are
      not strict, or a test fails.
  """
  start = series_base(base, root)
  with tempfile.TemporaryDirectory() as scratch:
    tree, single = (os.path.join(scratch, d) for d in ('series', 'single'))
    write_tree(start, tree)
    for path in paths:
      try:
        _git(tree, 'am', '-q', os.path.abspath(path))
      except subprocess.CalledProcessError as e:
        raise PatchError('%s does not apply with git am: %s' %
                         (path, e.stdout + e.stderr)) from e
      if _read(tree, TEST) != start[TEST]:
        raise PatchError('%s changes %s' % (path, TEST))
      check_strict_deps(tree, os.path.basename(path))
      report = run_carried_tests(tree)
      out.write('OK: %s applies; %s\n' % (os.path.basename(path), ', '.join(
          '%s %d tests' % (n.rsplit('.', 1)[1], c['run'])
          for n, c in sorted(report['tests'].items()))))
    write_tree(base, single)
    git_apply(single, make_patch(release, base, description, root)[0])
    differing = differing_files(tree, single)
    if differing:
      raise PatchError('the series and the single patch differ: %s' %
                       differing)
  out.write('OK: after the last patch the tree is the single patch\'s\n')


# The companion (--companion): the top-level package COMPANION, for a fork
# that wants it in its tree too, as one `git format-patch` file to apply
# after the core (the patch, or the last patch of the series).
COMPANION = 'tf_slurm'
COMPANION_MESSAGE = 'tools/tf_companion.txt'  # The patch's commit message.
# The file of TensorFlow's package_group "internal", which the core's
# targets are visible to; the companion's package joins it.
VISIBILITY = 'tensorflow/BUILD'
_INTERNAL_RE = re.compile(r'^package_group\(\n    name = "internal",\n'
                          r'    packages = \[\n(.*?)^    \],', re.M | re.S)


def companion_files(root=ROOT):
  """The companion's files as the repository has them (.py and BUILD)."""
  folder = os.path.join(root, COMPANION)
  return {COMPANION + '/' + n: _read(folder, n)
          for n in sorted(os.listdir(folder))
          if n.endswith('.py') or n == 'BUILD'}


def with_companion_visible(build):
  """tensorflow/BUILD with //COMPANION/... in package_group "internal".

  The entry goes where it sorts among the group's packages.

  Raises:
    PatchError: if the file has no such group.
  """
  match = _INTERNAL_RE.search(build)
  if not match:
    raise PatchError('%s has no package_group "internal" in TensorFlow\'s '
                     'shape to add //%s/... to' % (VISIBILITY, COMPANION))
  entry = '        "//%s/...",\n' % COMPANION
  lines = match.group(1).splitlines(True)
  if entry not in lines:
    lines.insert(next((i for i, line in enumerate(lines)
                       if line.strip() > entry.strip()), len(lines)), entry)
  return build[:match.start(1)] + ''.join(lines) + build[match.end(1):]


def _commit_core(release, base, tree, root):
  """Writes `base` into `tree`, a new git repository, and commits the core."""
  write_tree(base, tree)
  _write(tree, patched_files(release, base, root)[0])
  _git(tree, 'add', '-A')
  _git(tree, 'commit', '-q', '-m', 'The core', env=_series_env())


def make_companion(release, base, root=ROOT):
  """Returns (the companion's patch, notes) against `base` with the core.

  The patch is one `git format-patch` file, COMPANION_MESSAGE its message:
  it adds COMPANION's files, and //COMPANION/... to the tree's package_group
  "internal" (with_companion_visible), if the tree has VISIBILITY.
  """
  files = companion_files(root)
  notes = []
  if base.get(VISIBILITY) is None:
    notes.append('the tree has no %s: for Bazel, add "//%s/..." to its '
                 'package_group "internal"' % (VISIBILITY, COMPANION))
  else:
    files[VISIBILITY] = with_companion_visible(base[VISIBILITY])
  with tempfile.TemporaryDirectory() as tree:
    _commit_core(release, base, tree, root)
    _write(tree, files)
    _git(tree, 'add', '-A')
    _git(tree, 'commit', '-q', '-F', '-', input=_read(root, COMPANION_MESSAGE),
         env=_series_env())
    patch = _git(tree, 'format-patch', '--zero-commit', '--no-signature',
                 '--no-renames', '--stdout', '-1', 'HEAD', env=_series_env())
  return patch, notes


def check_companion(release, base, patch, description, root=ROOT,
                    out=sys.stdout):
  """Applies the companion with `git am` after the core, and runs its tests.

  Returns run_carried_tests' report of the companion's tests.

  Raises:
    PatchError: if the patch does not apply, leaves deps that are not strict
      (check_strict_deps), or a test fails.
  """
  with tempfile.TemporaryDirectory() as scratch:
    tree = os.path.join(scratch, 'tree')
    _commit_core(release, base, tree, root)
    try:
      _git(tree, 'am', '-q', input=patch)
    except subprocess.CalledProcessError as e:
      raise PatchError('the companion does not apply with git am after the '
                       'core: %s' % (e.stdout + e.stderr)) from e
    check_strict_deps(tree, 'the companion', (COMPANION,))
    report = run_carried_tests(tree, companion=True)
  out.write('OK: the companion applies with git am after the core, to %s\n' %
            description)
  for name, counts in sorted(report['tests'].items()):
    out.write('OK: %s: %d tests (%d skipped)\n' %
              (name, counts['run'], counts['skipped']))
  return report


def companion_main(release, tf_tree, out, check_too):
  """--companion: writes the companion's patch to `out`, checks it."""
  base, description = base_files(release, tf_tree)
  patch, notes = make_companion(release, base)
  sys.stderr.write(''.join('note: %s\n' % n for n in notes))
  with open(out, 'w', encoding='utf-8') as f:
    f.write(patch)
  if check_too:
    check_companion(release, base, patch, description)
  return 0


def series_main(release, tf_tree, out, check_too):
  """--series: writes the series in `out`, prints its table, checks it."""
  base, description = base_files(release, tf_tree)
  paths = write_series(release, series_base(base), out)
  sys.stdout.write(series_table(paths))
  if check_too:
    check_series(release, base, paths, description)
  return 0


def main(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--tf-version', required=True, choices=RELEASES)
  parser.add_argument('--tf-tree', help='a TensorFlow checkout of that '
                      'release (default: a tree rebuilt from pip TensorFlow)')
  parser.add_argument('--out', help='the patch file (default: stdout)')
  parser.add_argument('--check', action='store_true',
                      help='apply the patch to scratch copies of the tree '
                      'with git apply and patch -p1 and run its tests there '
                      '(with --series: apply the series with git am and '
                      'test it after each patch)')
  parser.add_argument('--series', metavar='OUT', help='write the patch as a '
                      'series of git format-patch files in OUT instead')
  parser.add_argument('--companion', metavar='FILE', help='write the '
                      'companion (tf_slurm) as one git format-patch file, to '
                      'apply after the core, instead (with --check: apply '
                      'it after the core with git am and run its tests)')
  args = parser.parse_args(argv)
  try:
    if args.companion:
      return companion_main(args.tf_version, args.tf_tree, args.companion,
                            args.check)
    if args.series:
      return series_main(args.tf_version, args.tf_tree, args.series,
                         args.check)
    if args.check:
      check(args.tf_version, args.tf_tree)
      return 0
    base, description = base_files(args.tf_version, args.tf_tree)
    patch, notes = make_patch(args.tf_version, base, description)
  except PatchError as e:
    sys.stderr.write('error: %s\n' % e)
    return 1
  sys.stderr.write(''.join('note: %s\n' % n for n in notes))
  if args.out:
    with open(args.out, 'w', encoding='utf-8') as f:
      f.write(patch)
  else:
    sys.stdout.write(patch)
  return 0


if __name__ == '__main__':
  sys.exit(main())
