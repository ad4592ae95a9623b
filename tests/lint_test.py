"""Lint of the files the patch carries into TensorFlow, as TensorFlow lints.

Every file tools/make_tf_patch.py carries (the packages' slurm_*.py files,
README_Slurm.md, the Slurm targets' BUILDs and the release note), and the
companion's (tf_slurm/): at most 80
columns (Google's style exempts long import lines and URLs), no trailing
blank lines, and, for the Python files, no message of pylint with the Google
style settings of tools/pylintrc. pylint reads the files where TensorFlow
would have them: in a copy of pip TensorFlow's package tree made of symbolic
links, with the repository's files added or in place of pip's.

The patch's change of TensorFlow's own files (tools/tf_termination_signals.diff)
is linted on the lines it adds, as TensorFlow's presubmit does: its Python
files as the change leaves pip TensorFlow's, its BUILD lines (not the
golden's, whose lines TensorFlow writes as long as they are).

    .venv/bin/python -m tests.lint_test --list     # the files covered
    .venv/bin/python -m tests.lint_test --report   # every problem found
"""

import os
import re
import subprocess
import sys
import tempfile

from absl.testing import absltest

from tools import make_tf_patch as mtp

_ROOT = mtp.ROOT
# The companion (tf_slurm/), linted alike.
_COMPANION = sorted('tf_slurm/' + name
                    for name in os.listdir(os.path.join(_ROOT, 'tf_slurm'))
                    if name.endswith('.py') or name == 'BUILD')
FILES = sorted([p for p in mtp.repo_files() if p not in mtp.GOLDENS] +
               list(mtp.BUILDS) + [mtp.RELEASE_NOTE] + _COMPANION)
# Files that fail today, each to be removed from here as it is cleaned (the
# test fails for a file listed here that passes).
KNOWN_FAILING = frozenset()
# The files of UPSTREAM whose added lines are linted (not the golden).
_UPSTREAM_LINTED = ('.py', '/BUILD')
_EXEMPT = re.compile(r'^\s*(#\s)?<?https?://\S+>?$|'
                     r'^\s*(from\s+\S+\s+)?import\s+.+$')


def _lines(relpath):
  with open(os.path.join(_ROOT, relpath), encoding='utf-8') as f:
    return f.read().split('\n')


def link_tree(dest, files):
  """Pip TensorFlow's package tree under `dest`, as symbolic links.

  The folders holding `files` ({path in the tree: path}) are real, so that
  those files are added there or replace pip's.
  """
  import tensorflow  # pylint: disable=g-import-not-at-top
  source = os.path.dirname(os.path.dirname(tensorflow.__file__))
  for relpath, path in sorted(files.items()):
    parts = relpath.split('/')
    for depth in range(1, len(parts)):
      here = os.path.join(dest, *parts[:depth])
      if os.path.islink(here) or not os.path.exists(here):
        if os.path.islink(here):
          os.unlink(here)
        os.mkdir(here)
        pip_folder = os.path.join(source, *parts[:depth])
        names = os.listdir(pip_folder) if os.path.isdir(pip_folder) else []
        for name in names:
          os.symlink(os.path.join(source, *parts[:depth] + [name]),
                     os.path.join(here, name))
    if os.path.lexists(os.path.join(dest, relpath)):
      os.unlink(os.path.join(dest, relpath))
    os.symlink(path, os.path.join(dest, relpath))


def _column_problems(relpath):
  return ['%s:%d: %d columns' % (relpath, n + 1, len(line))
          for n, line in enumerate(_lines(relpath)) if len(line) > 80 and
          not (relpath.endswith('.py') and _EXEMPT.match(line))]


def _ending_problems(relpath):
  # Text ends in exactly one newline: the split ends in one empty string.
  lines = _lines(relpath)
  ok = lines[-1] == '' and lines[-2:] != ['', '']
  return [] if ok else ['%s: not one newline at the end' % relpath]


def _whitespace_problems(relpath):
  return ['%s:%d: trailing whitespace' % (relpath, n + 1)
          for n, line in enumerate(_lines(relpath)) if line != line.rstrip()]


def _added(diff):
  """Yields (path, number in the new file, text) of each line `diff` adds."""
  path, number = None, 0
  for line in diff.split('\n'):
    if line.startswith('diff --git '):
      path = line.split(' b/', 1)[1]
    elif line.startswith('@@ '):
      number = int(re.match(r'@@ -\S+ \+(\d+)', line).group(1))
    elif line.startswith('+') and not line.startswith('+++ '):
      yield path, number, line[1:]
      number += 1
    elif line.startswith(' '):
      number += 1


def _upstream_line_problems():
  """What the lines UPSTREAM adds to TensorFlow's files break."""
  problems = []
  for path, n, line in _added(_upstream_diff()):
    if path.endswith(_UPSTREAM_LINTED):
      if len(line) > 80 and not (path.endswith('.py') and _EXEMPT.match(line)):
        problems.append('%s:%d: %d columns' % (path, n, len(line)))
      if line != line.rstrip():
        problems.append('%s:%d: trailing whitespace' % (path, n))
  return problems


def _upstream_diff():
  with open(os.path.join(_ROOT, mtp.UPSTREAM), encoding='utf-8') as f:
    return f.read()


def _pip_files(paths):
  """{path: pip TensorFlow's file at that path in the tree, or None}."""
  import tensorflow  # pylint: disable=g-import-not-at-top
  site = os.path.dirname(os.path.dirname(tensorflow.__file__))
  files = {}
  for path in paths:
    try:
      with open(os.path.join(site, path), encoding='utf-8') as f:
        files[path] = f.read()
    except FileNotFoundError:  # A file the change adds.
      files[path] = None
  return files


def _pylint_problems():
  """{path: pylint's messages} of the Python files in FILES and UPSTREAM.

  UPSTREAM's on the lines it adds only.
  """
  python = [p for p in FILES if p.endswith('.py')]
  upstream = [p for p in mtp.upstream_paths() if p.endswith('.py')]
  with tempfile.TemporaryDirectory() as scratch:
    changed = os.path.join(scratch, 'upstream')
    for path, text in mtp.upstream_files(_pip_files(upstream),
                                         paths=upstream).items():
      os.makedirs(os.path.dirname(os.path.join(changed, path)), exist_ok=True)
      with open(os.path.join(changed, path), 'w', encoding='utf-8') as f:
        f.write(text)
    tree = os.path.join(scratch, 'tree')
    os.mkdir(tree)
    link_tree(tree, {**{p: os.path.join(_ROOT, p) for p in python},
                     **{p: os.path.join(changed, p) for p in upstream}})
    result = subprocess.run(
        [sys.executable, '-m', 'pylint', '--rcfile',
         os.path.join(_ROOT, 'tools', 'pylintrc'), '--score=n',
         '--msg-template={path}:{line}: {msg_id} {msg} ({symbol})'] +
        python + upstream, cwd=tree, capture_output=True, text=True,
        timeout=900, check=False, env=dict(os.environ, PYTHONPATH=tree))
  if result.returncode & 1 or result.returncode >= 32:  # Fatal, or usage.
    raise RuntimeError('pylint failed: ' + result.stdout + result.stderr)
  added = {(p, n) for p, n, _ in _added(_upstream_diff())}
  problems = {}
  for line in result.stdout.splitlines():
    match = re.match(r'(\S+):(\d+): [A-Z]\d+ ', line)
    if match and (match.group(1) not in upstream or
                  (match.group(1), int(match.group(2))) in added):
      problems.setdefault(match.group(1), []).append(line)
  return problems


class LintTest(absltest.TestCase):
  """Each check, over every file in FILES but those KNOWN_FAILING."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pylint = _pylint_problems()

  def assertClean(self, problems):
    self.assertEqual([p for p in problems
                      if p.split(':')[0] not in KNOWN_FAILING], [])

  def testLinesFitIn80Columns(self):
    self.assertClean([m for p in FILES for m in _column_problems(p)])

  def testFilesEndInOneNewline(self):
    self.assertClean([m for p in FILES for m in _ending_problems(p)])

  def testNoTrailingWhitespace(self):
    self.assertClean([m for p in FILES for m in _whitespace_problems(p)])

  def testPylintInGoogleStyle(self):
    self.assertClean([m for p in FILES for m in self.pylint.get(p, [])])

  def testLinesTheUpstreamChangeAddsFitIn80ColumnsWithoutTrailingSpace(self):
    self.assertEqual(_upstream_line_problems(), [])

  def testPylintInGoogleStyleOnTheLinesTheUpstreamChangeAdds(self):
    self.assertEqual([m for p in mtp.upstream_paths()
                      for m in self.pylint.get(p, [])], [])

  def testKnownFailuresStillFail(self):
    clean = [p for p in sorted(KNOWN_FAILING) if not (
        _column_problems(p) or _ending_problems(p) or
        _whitespace_problems(p) or self.pylint.get(p))]
    self.assertEqual(clean, [], 'now clean: remove from KNOWN_FAILING')


if __name__ == '__main__':
  if '--list' in sys.argv:
    print('\n'.join(FILES))
    print('\n'.join('%s (the lines %s adds)' % (p, mtp.UPSTREAM)
                     for p in mtp.upstream_paths()
                     if p.endswith(_UPSTREAM_LINTED)))
  elif '--report' in sys.argv:  # Every problem, KNOWN_FAILING or not.
    pylint = _pylint_problems()
    for path in FILES:
      for problem in (_column_problems(path) + _ending_problems(path) +
                      _whitespace_problems(path) + pylint.get(path, [])):
        print(problem)
    for problem in _upstream_line_problems() + [
        m for p in mtp.upstream_paths() for m in pylint.get(p, [])]:
      print(problem)
  else:
    absltest.main()
