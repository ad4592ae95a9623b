"""Checks the patch that vendors the resolver into a TensorFlow tree.

tools/make_tf_patch.py turns the repository's tensorflow/ files into a
git-style patch for a TensorFlow release. Here it is applied, with
`git apply` and with `patch -p1`, to trees laid out like TensorFlow's, built
from the pip package's files (pip_tree_files); the patched tree's resolver
is imported over pip TensorFlow and used, and every test file the patch
carries is run against the patched tree's modules, with nothing of this
repository on the import path.
"""

import io
import os
import re
import shutil
import subprocess

from absl.testing import absltest

from tools import api_golden
from tools import make_tf_patch as mtp

_RELEASE = mtp.RELEASES['2.21']
_REPO = mtp.ROOT

# A TensorFlow tree of an older layout: other rule kinds and labels, a
# dependency the release table does not know, and a test file of its own.
_OLD_STYLE_BUILD = '''\
load("//tensorflow:tensorflow.bzl", "tf_py_test")

py_library(
    name = "kubernetes_cluster_resolver_py",
    srcs = ["kubernetes_cluster_resolver.py"],
    deps = [":base_cluster_resolver_py"],
)

py_library(
    name = "slurm_cluster_resolver_py",
    srcs = ["slurm_cluster_resolver.py"],
    srcs_version = "PY3",
    deps = [
        ":base_cluster_resolver_py",
        "//tensorflow/python:training_server_lib",
        "//tensorflow/python:util",
    ],
)

tf_py_test(
    name = "slurm_cluster_resolver_py_test",
    size = "small",
    srcs = ["slurm_cluster_resolver_test.py"],
    main = "slurm_cluster_resolver_test.py",
    deps = [
        ":slurm_cluster_resolver_py",
        "//tensorflow/python:client_testlib",
        "//tensorflow/python:framework_for_generated_wrappers",
    ],
)
'''

_STAND_IN_TEST_BODY = '''\
"""A stand-in for the release's test file."""

from tensorflow.python.platform import test


class SlurmClusterResolverTest(test.TestCase):
  pass


if __name__ == '__main__':
  test.main()
'''

# A RELEASE.md in the shape of TensorFlow's recent ones (a test input): the
# release's subsections under "## TensorFlow", a code block whose lines must
# not count as headings, and an older release that must stay untouched.
_RELEASE_MD = '''\
# Release 2.21.0

## TensorFlow

### Breaking Changes

*   Something breaking.

### Major Features and Improvements

*   A feature:

```sh
# Release 9.9 (a comment in a code block, not a heading)
```

### Bug Fixes and Other Changes

*   A fix.
    *   With details.

## Keras

*   A Keras change.

# Release 2.20.0

## Bug Fixes and Other Changes

*   An old fix.
'''

_SLURM_TARGET_ROLES = {
    'py_library': ('library',),
    'py_binary': ('binary',),
    'py_test': ('test',),
}


def _make_patch(base, description, **kwargs):
  """The patch of the repository under test (_REPO) against `base`."""
  return mtp.make_patch(_RELEASE, base, description, root=_REPO, **kwargs)


def _body(patch):
  """The patch from its first diff on (its header names the base)."""
  return patch[patch.index('diff --git ') :]


def _first_lines(text, count=14):
  return text.splitlines(True)[:count]


class TfPatchTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pip_files, cls.pip_description = mtp.pip_tree_files(_RELEASE)
    cls.repo = mtp.repo_files(_REPO)
    cls.note = mtp.release_note_sections(cls.repo[mtp.RELEASE_NOTE])

  def make_tree(self, files=None):
    tree = self.create_tempdir().full_path
    mtp.write_tree(self.pip_files if files is None else files, tree)
    return tree

  def read(self, tree, relpath):
    with open(os.path.join(tree, relpath), encoding='utf-8') as f:
      return f.read()

  def rule(self, build, name):
    lines = build.splitlines(True)
    span = mtp.find_rule(lines, name)
    self.assertIsNotNone(span, name)
    return ''.join(lines[span[0] : span[1] + 1])

  def assertPatchedLikeTheRepository(self, tree, style='type'):
    for relpath in mtp.SOURCES + (mtp.README,):
      self.assertEqual(self.read(tree, relpath), self.repo[relpath], relpath)
    for relpath in mtp.GOLDENS:
      self.assertEqual(self.read(tree, relpath),
                       api_golden.restyle(self.repo[relpath], style), relpath)

  def testPatchAppliesToPipTreeAndItsCarriedTestsPass(self):
    tree = self.make_tree()
    patch, notes = _make_patch(self.pip_files, self.pip_description)
    for relpath in (mtp.TEST, mtp.README):
      self.assertIn('the base has no %s, so the patch adds it as a new file' %
                    relpath, ' '.join(notes))
    self.assertTrue(any('the base has no RELEASE.md' in n for n in notes),
                    notes)
    self.assertNotIn('RELEASE.md b/', patch)
    mtp.git_apply(tree, patch, check_only=True)
    mtp.git_apply(tree, patch)
    self.assertPatchedLikeTheRepository(tree)
    # TensorFlow's license header of the module stays as the release has it.
    self.assertEqual(_first_lines(self.read(tree, mtp.MODULE)),
                     _first_lines(self.pip_files[mtp.MODULE]))

    build = self.read(tree, mtp.BUILD)
    self.assertIn('load("//tensorflow:strict.default.bzl", "py_strict_binary",'
                  ' "py_strict_library")\n', build)
    library = self.rule(build, mtp.LIBRARY_TARGET)
    self.assertStartsWith(library, 'py_strict_library(\n')  # The tree's kind.
    for label in (':base_cluster_resolver_py', ':slurm_hostlist_py',
                  ':slurm_step_py', '//tensorflow/python/platform:tf_logging',
                  '//tensorflow/python/training:server_lib',
                  '//tensorflow/python/util:tf_export'):
      self.assertIn('"%s",' % label, library)
    test = self.rule(build, mtp.TEST_TARGET)
    self.assertStartsWith(test, 'tf_py_strict_test(\n')
    # TensorFlow's own test file keeps TensorFlow's deps.
    for label in (':slurm_cluster_resolver_py',
                  '//tensorflow/python/platform:client_testlib',
                  '//tensorflow/python/training:server_lib'):
      self.assertIn('"%s",' % label, test)
    self.assertNotIn(':slurm_test_util', test)
    self.assertEqual(
        self.rule(build, 'slurm_explain'), 'py_strict_binary(\n'
        '    name = "slurm_explain",\n'
        '    srcs = ["slurm_explain.py"],\n'
        '    deps = [\n'
        '        ":slurm_cluster_resolver_py",\n'
        '        ":slurm_hostlist_py",\n'
        '        ":slurm_step_py",\n'
        '    ],\n'
        ')\n')
    self.assertEqual(
        self.rule(build, 'slurm_hostlist_py'), 'py_strict_library(\n'
        '    name = "slurm_hostlist_py",\n'
        '    srcs = ["slurm_hostlist.py"],\n'
        ')\n')
    self.assertStartsWith(
        self.rule(build, 'slurm_test_util'), 'py_strict_library(\n'
        '    name = "slurm_test_util",\n'
        '    testonly = True,\n')
    self.assertEqual(
        self.rule(build, 'slurm_step_py_test'), 'tf_py_strict_test(\n'
        '    name = "slurm_step_py_test",\n'
        '    size = "small",\n'
        '    srcs = ["slurm_step_test.py"],\n'
        '    main = "slurm_step_test.py",\n'
        '    deps = [\n'
        '        ":slurm_step_py",\n'
        '        ":slurm_test_util",\n'
        '        "@absl_py//absl/testing:absltest",\n'
        '        "@absl_py//absl/testing:parameterized",\n'
        '    ],\n'
        ')\n')
    for name in ('slurm_hostlist_py_test', 'slurm_explain_test'):
      self.assertStartsWith(self.rule(build, name), 'tf_py_strict_test(\n')
    self.assertTrue(any('slurm_explain is a new py_strict_binary target' in n
                        for n in notes), notes)
    # Nothing else changed: git sees only the patch's files.
    changed = subprocess.run(['git', 'diff', '--name-only'], cwd=tree,
                             capture_output=True, text=True, check=True).stdout
    untracked = subprocess.run(
        ['git', 'ls-files', '--others', '--exclude-standard'], cwd=tree,
        capture_output=True, text=True, check=True).stdout
    self.assertCountEqual(
        changed.split() + untracked.split(),
        list(mtp.SOURCES) + [mtp.README, mtp.BUILD] + list(mtp.GOLDENS))

    # The carried tests, run once, against this tree's modules.
    report = mtp.run_carried_tests(tree, _REPO)
    used = report['resolver']
    self.assertEqual(os.path.realpath(used['source']),
                     os.path.realpath(os.path.join(tree, mtp.MODULE)))
    self.assertTrue(used['v1_is_v2'])
    self.assertEqual(used['cluster'],
                     {'worker': ['n9:8888', 'n9:8889', 'n10:8888', 'n10:8889']})
    self.assertEqual(used['task'], ['worker', 3])
    self.assertEqual(used['master'], 'grpc://n10:8889')
    self.assertCountEqual(report['tests'],
                          [mtp._module_name(p) for p in mtp.CARRIED_TESTS])
    for name, counts in report['tests'].items():
      self.assertEqual(os.path.realpath(counts['file']),
                       os.path.realpath(os.path.join(
                           tree, name.replace('.', '/') + '.py')))
      self.assertGreater(counts['run'], counts['skipped'], name)
      self.assertEqual((counts['failures'], counts['errors']), (0, 0), name)
    for relpath in mtp.SOURCES:
      self.assertEqual(
          os.path.realpath(report['modules'][mtp._module_name(relpath)]),
          os.path.realpath(os.path.join(tree, relpath)))

  def testCarriedTestFailureFailsTheCheck(self):
    files = dict(self.pip_files)
    files.update({p: self.repo[p] for p in mtp.SOURCES})
    passing = ('from absl.testing import absltest\n\n\n'
               'class T(absltest.TestCase):\n\n'
               '  def testPasses(self):\n    pass\n')
    for relpath in mtp.CARRIED_TESTS:
      files[relpath] = passing
    files[mtp.CARRIED_TESTS[1]] = passing.replace(
        'pass\n', 'self.assertEqual(1, 2)\n')
    failing = mtp._module_name(mtp.CARRIED_TESTS[1])
    with self.assertRaisesRegex(mtp.PatchError,
                                re.escape('%s: 1 failures, 0 errors' % failing)):
      mtp.run_carried_tests(self.make_tree(files), _REPO)

  def testPatchP1GivesTheSameTree(self):
    if shutil.which('patch') is None:
      self.skipTest('no patch(1)')
    files = dict(self.pip_files)
    files[mtp.RELEASE_NOTES] = _RELEASE_MD
    patch, _ = _make_patch(files, self.pip_description)
    by_git, by_patch = self.make_tree(files), self.make_tree(files)
    mtp.git_apply(by_git, patch)
    mtp.patch_p1(by_patch, patch)
    self.assertEqual(mtp.differing_files(by_git, by_patch), [])
    self.assertPatchedLikeTheRepository(by_patch)
    self.assertNotEqual(self.read(by_patch, mtp.RELEASE_NOTES), _RELEASE_MD)
    # The comparison sees a difference.
    with open(os.path.join(by_patch, mtp.README), 'a', encoding='utf-8') as f:
      f.write('\n')
    self.assertEqual(mtp.differing_files(by_git, by_patch), [mtp.README])

  def testReleaseNoteGoesUnderTheTopmostRelease(self):
    files = dict(self.pip_files)
    files[mtp.RELEASE_NOTES] = _RELEASE_MD
    tree = self.make_tree(files)
    base, description = mtp.tree_base(tree, _RELEASE)
    patch, notes = _make_patch(base, description)
    self.assertIn(
        'RELEASE.md: the release note (tools/tf_release_note.md) went under '
        '"Release 2.21.0", in ### Breaking Changes and ### Bug Fixes and '
        'Other Changes', ' '.join(notes))
    mtp.git_apply(tree, patch)
    (behavior_title, behavior), (fixes_title, fixes) = self.note
    self.assertEqual(behavior_title.lower(), 'behavioral changes')
    self.assertEqual(fixes_title.lower(), 'bug fixes and other changes')
    self.assertStartsWith(behavior[0], '*   ')
    expected = _RELEASE_MD.replace(
        '*   Something breaking.\n',
        '*   Something breaking.\n' + ''.join(behavior)).replace(
            '    *   With details.\n',
            '    *   With details.\n' + ''.join(fixes))
    self.assertEqual(self.read(tree, mtp.RELEASE_NOTES), expected)
    self.assertNotIn('<!--', self.read(tree, mtp.RELEASE_NOTES))
    # Made again against the patched tree, the patch changes nothing.
    base, description = mtp.tree_base(tree, _RELEASE)
    again, _ = _make_patch(base, description)
    self.assertNotIn('diff --git', again)

  def testReleaseNoteAddsMissingSubsections(self):
    note = ('<!-- not carried -->\n\n## Behavioral changes\n\n*   B.\n\n'
            '## Bug Fixes and Other Changes\n\n*   F.\n')
    # An older layout: level-2 subsections, no behavioral or breaking one.
    text, hunks, where = mtp.insert_release_note(
        '# Release 2.21.0\n\n## Major Features and Improvements\n\n*   M.\n\n'
        '## Bug Fixes and Other Changes\n\n*   Fix.\n\n## Thanks to our '
        'Contributors\n\nAll.\n\n# Release 2.20.0\n\n*   Old.\n', note)
    self.assertEqual(
        text, '# Release 2.21.0\n\n## Major Features and Improvements\n\n'
        '*   M.\n\n## Behavioral changes\n\n*   B.\n\n'
        '## Bug Fixes and Other Changes\n\n*   Fix.\n*   F.\n\n'
        '## Thanks to our Contributors\n\nAll.\n\n'
        '# Release 2.20.0\n\n*   Old.\n')
    self.assertIn('## Behavioral changes (added)', where)
    self.assertStartsWith(hunks[0], '@@ -')
    # A release with no subsection at all, and an empty one.
    text, _, _ = mtp.insert_release_note(
        '# Release 2.21.0\n\n<SOME TEXT>\n\n# Release 2.20.0\n', note)
    self.assertEqual(
        text, '# Release 2.21.0\n\n<SOME TEXT>\n\n## Behavioral changes\n\n'
        '*   B.\n\n## Bug Fixes and Other Changes\n\n*   F.\n\n'
        '# Release 2.20.0\n')
    text, _, _ = mtp.insert_release_note(
        '# Release 2.21.0\n\n## Bug Fixes and Other Changes\n'
        '## Behavioral changes\n', note)
    self.assertEqual(
        text, '# Release 2.21.0\n\n## Bug Fixes and Other Changes\n\n*   F.\n\n'
        '## Behavioral changes\n\n*   B.\n')
    self.assertIsNone(mtp.insert_release_note('# Changes\n\n*   X.\n', note))

  def testTreeModeMatchesPipMode(self):
    tree = self.make_tree()
    base, description = mtp.tree_base(tree, _RELEASE)
    self.assertIn('TensorFlow 2.21', description)
    from_tree, _ = _make_patch(base, description)
    from_pip, _ = _make_patch(self.pip_files, self.pip_description)
    self.assertEqual(_body(from_tree), _body(from_pip))

  def testOlderLayoutKeepsTheTreesKindsAndLabels(self):
    files = dict(self.pip_files)
    files[mtp.BUILD] = _OLD_STYLE_BUILD
    # TensorFlow's test file has the module's license header, of 2020.
    header = _first_lines(self.pip_files[mtp.MODULE])
    self.assertEqual(header[0], '# Copyright 2018-2020 The TensorFlow Authors.'
                     ' All Rights Reserved.\n')
    header[0] = '# Copyright 2020 The TensorFlow Authors. All Rights Reserved.\n'
    files[mtp.TEST] = ''.join(header) + _STAND_IN_TEST_BODY
    files[mtp.README] = '# Slurm Cluster Resolver\n\nThe release\'s doc.\n'
    tree = self.make_tree(files)
    base, description = mtp.tree_base(tree, _RELEASE)
    patch, notes = _make_patch(base, description)
    self.assertFalse(any('adds it as a new file' in n for n in notes), notes)
    for relpath in (mtp.TEST, mtp.README):
      self.assertIn('--- a/%s\n' % relpath, patch)  # Replaced, not added.
    mtp.git_apply(tree, patch)
    self.assertPatchedLikeTheRepository(tree)
    self.assertEqual(_first_lines(self.read(tree, mtp.TEST)), header)

    build = self.read(tree, mtp.BUILD)
    self.assertStartsWith(build, _OLD_STYLE_BUILD[:_OLD_STYLE_BUILD.index(
        'py_library(\n    name = "slurm_cluster_resolver_py"')])
    self.assertEqual(
        self.rule(build, mtp.LIBRARY_TARGET), 'py_library(\n'
        '    name = "slurm_cluster_resolver_py",\n'
        '    srcs = ["slurm_cluster_resolver.py"],\n'
        '    srcs_version = "PY3",\n'
        '    deps = [\n'
        '        ":base_cluster_resolver_py",\n'
        '        ":slurm_hostlist_py",\n'
        '        ":slurm_step_py",\n'
        '        "//tensorflow/core:protos_all_py",\n'
        '        "//tensorflow/python:training_server_lib",\n'
        '        "//tensorflow/python:util",\n'
        '        "//tensorflow/python/platform:tf_logging",\n'
        '    ],\n'
        ')\n')
    self.assertEqual(
        self.rule(build, mtp.TEST_TARGET), 'tf_py_test(\n'
        '    name = "slurm_cluster_resolver_py_test",\n'
        '    size = "small",\n'
        '    srcs = ["slurm_cluster_resolver_test.py"],\n'
        '    main = "slurm_cluster_resolver_test.py",\n'
        '    deps = [\n'
        '        ":slurm_cluster_resolver_py",\n'
        '        "//tensorflow/python:client_testlib",\n'
        '        "//tensorflow/python:framework_for_generated_wrappers",\n'
        '        "//tensorflow/python/training:server_lib",\n'
        '    ],\n'
        ')\n')
    # New targets in the tree's kinds (a native py_binary needs no load),
    # with the tree's srcs_version.
    self.assertEqual(
        self.rule(build, 'slurm_explain'), 'py_binary(\n'
        '    name = "slurm_explain",\n'
        '    srcs = ["slurm_explain.py"],\n'
        '    srcs_version = "PY3",\n'
        '    deps = [\n'
        '        ":slurm_cluster_resolver_py",\n'
        '        ":slurm_hostlist_py",\n'
        '        ":slurm_step_py",\n'
        '    ],\n'
        ')\n')
    self.assertStartsWith(self.rule(build, 'slurm_hostlist_py_test'),
                          'tf_py_test(\n')
    self.assertStartsWith(self.rule(build, 'slurm_test_util'), 'py_library(\n')
    self.assertEqual(build.count('load('), 1)

  def testClassStyleTreeGetsClassStyleGoldens(self):
    files = dict(self.pip_files)
    for relpath in mtp.GOLDENS:
      files[relpath] = api_golden.restyle(files[relpath], 'class')
    tree = self.make_tree(files)
    base, description = mtp.tree_base(tree, _RELEASE)
    patch, _ = _make_patch(base, description)
    self.assertIn("'class' style", patch)
    mtp.git_apply(tree, patch)
    self.assertPatchedLikeTheRepository(tree, 'class')

  def testChangedLicenseHeaderIsRefused(self):
    repo = dict(self.repo)
    repo[mtp.MODULE] = repo[mtp.MODULE].replace('2018-2020', '2018-2026', 1)
    self.assertNotEqual(repo[mtp.MODULE], self.repo[mtp.MODULE])
    with self.assertRaisesRegex(mtp.PatchError, 'license header differs'):
      _make_patch(self.pip_files, self.pip_description, repo=repo)

  def testBrokenPatchIsRejected(self):
    tree = self.make_tree()
    patch, _ = _make_patch(self.pip_files, self.pip_description)
    # A context line of the module's first hunk that the tree does not have.
    context = ' """Implementation of Cluster Resolvers for Slurm workload'
    self.assertLess(patch.index(context), patch.index('\n+', patch.index(
        '+++ b/%s' % mtp.MODULE)))
    broken = patch.replace(context, context.replace('Slurm', 'SLURM'), 1)
    with self.assertRaisesRegex(mtp.PatchError, 'patch does not apply'):
      mtp.git_apply(tree, broken, check_only=True)
    if shutil.which('patch'):
      with self.assertRaisesRegex(mtp.PatchError, 'patch -p1 --dry-run failed'):
        mtp.patch_p1(tree, broken)
    # A tree whose module is not the release's.
    files = dict(self.pip_files)
    files[mtp.MODULE] = files[mtp.MODULE].replace('import re\n', 'import re2\n')
    with self.assertRaisesRegex(mtp.PatchError, 'patch does not apply'):
      mtp.git_apply(self.make_tree(files), patch, check_only=True)
    # The scratch tree is unchanged by the checks.
    self.assertEqual(self.read(tree, mtp.MODULE), self.pip_files[mtp.MODULE])

  def testTreeOfAnotherReleaseIsRefused(self):
    files = dict(self.pip_files)
    files['tensorflow/tf_version.bzl'] = 'TF_VERSION = "2.20.0"\n'
    with self.assertRaisesRegex(mtp.PatchError, 'is TensorFlow 2.20.0, not 2.21'):
      mtp.tree_base(self.make_tree(files), _RELEASE)

  def testTargetsMatchTheRepositorysBuild(self):
    build = self.read(_REPO, mtp.BUILD)
    names = re.findall(r'^\s+name = "(slurm_[^"]*)",$', build, re.M)
    self.assertCountEqual(names, [t.name for t in mtp.TARGETS])
    for target in mtp.TARGETS:
      rule = self.rule(build, target.name)
      kind = rule[:rule.index('(')]
      roles = _SLURM_TARGET_ROLES[kind] + (
          ('test_library',) if kind == 'py_library' else ())
      self.assertIn(target.role, roles, target.name)
      self.assertEqual(target.role == 'test_library', 'testonly = True' in rule,
                       target.name)
      self.assertIn('srcs = ["%s"],' % target.src, rule)

  def testEditDepsForms(self):
    table = _RELEASE.deps
    needed = {'absl.logging', 'tensorflow.python.training.server_lib'}
    one_line = ['py_library(\n', '    name = "x",\n',
                '    deps = [":base_cluster_resolver_py"] + extra(),\n', ')\n']
    notes = []
    self.assertEqual(
        mtp.edit_deps(one_line, needed, table, 'x', notes),
        ['py_library(\n', '    name = "x",\n', '    deps = [\n',
         '        "//tensorflow/python/training:server_lib",\n',
         '        "@absl_py//absl/logging",\n', '    ] + extra(),\n', ')\n'])
    no_deps = ['py_library(\n', '    name = "x",\n', ')\n']
    self.assertEqual(
        mtp.edit_deps(no_deps, {'absl.logging'}, table, 'x', notes),
        ['py_library(\n', '    name = "x",\n', '    deps = [\n',
         '        "@absl_py//absl/logging",\n', '    ],\n', ')\n'])
    mtp.edit_deps(no_deps, {'numpy'}, table, 'x', notes)
    self.assertIn('x: no label known for `numpy`; add its dependency by hand',
                  notes)
    with self.assertRaisesRegex(mtp.PatchError, 'not a plain list'):
      mtp.edit_deps(['r(\n', '    deps = select({}),\n', ')\n'], needed,
                    table, 'x', notes)

  def testCheckFailsOnADependencyWithoutALabel(self):
    out = io.StringIO()
    mtp._check_notes(['a new target'], out)
    self.assertEqual('note: a new target\n', out.getvalue())
    with self.assertRaisesRegex(mtp.PatchError, 'lack dependencies: x: no '
                                'label known for `numpy`'):
      mtp._check_notes(['x: no label known for `numpy`; add its dependency '
                        'by hand'], out)


if __name__ == '__main__':
  absltest.main()
