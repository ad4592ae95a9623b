"""The patch that puts the resolver into a TensorFlow tree.

tools/make_tf_patch.py writes the repository's files over the tree's in a
scratch git repository and `git diff` makes the patch. Here it is made
against a tree rebuilt from pip TensorFlow 2.21 (`pip_tree`), applied with
`git apply` and with `patch -p1`, and the patched tree is used: its carried
tests run over pip TensorFlow with the tree's
modules, nothing of this repository on the import path, and its goldens
are those of its classes. The BUILD splice, the change of TensorFlow's own
files (UPSTREAM) and the release note are checked on samples in the shape
of TensorFlow's files. The companion's patch (tf_slurm) is applied with
`git am` to a tree that carries the core, and its tests run there.
"""

import io
import json
import os
import re
import shutil
import subprocess

from absl.testing import absltest

from tools import api_golden
from tools import make_tf_patch as mtp

_RELEASE = '2.21'
_FAILURE_HANDLING_BUILD = mtp.FAILURE_HANDLING + '/BUILD'
_FAILURE_HANDLING_MODULE = mtp.FAILURE_HANDLING + '/failure_handling.py'
_UPSTREAM_TEST = mtp.FAILURE_HANDLING + '/termination_config_test.py'
_TERMINATION_CONFIG = 'distribute.experimental.TerminationConfig'

# A BUILD in the shape of TensorFlow 2.21's cluster_resolver/BUILD.
_TREE_BUILD = '''\
# Description: Operations defined for Cluster Resolvers
load("//tensorflow:strict.default.bzl", "py_strict_library")
load(
    "//tensorflow:tensorflow.default.bzl",
    "tf_py_strict_test",
)

py_strict_library(
    name = "cluster_resolver_lib",
    srcs = [
        "__init__.py",
    ],
    deps = [
        ":base_cluster_resolver_py",
        ":slurm_cluster_resolver_py",
        ":tpu_cluster_resolver_py",
    ],  # placeholder for google-internal dependencies,,
)

py_strict_library(
    name = "slurm_cluster_resolver_py",
    srcs = ["slurm_cluster_resolver.py"],
    deps = [":base_cluster_resolver_py"],
)

py_strict_library(
    name = "kubernetes_cluster_resolver_py",
    srcs = ["kubernetes_cluster_resolver.py"],
)

tf_py_strict_test(
    name = "slurm_cluster_resolver_py_test",
    srcs = ["slurm_cluster_resolver_test.py"],
)

tf_py_strict_test(
    name = "kubernetes_cluster_resolver_py_test",
    srcs = ["kubernetes_cluster_resolver_test.py"],
)
'''

# In the shape of TensorFlow 2.21's failure_handling/BUILD, its last target
# as TensorFlow has it.
_TREE_FAILURE_HANDLING_BUILD = (
    'load("//tensorflow:strict.default.bzl", "py_strict_library")\n'
    'load("//tensorflow:tensorflow.default.bzl", '
    '"tf_custom_op_py_strict_library", "tf_py_strict_test")\n' + '''
py_strict_library(
    name = "failure_handling_lib",
    srcs = [
        "failure_handling.py",
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
''')

_RELEASE_MD = '''\
# Release 2.21.0

## TensorFlow

### Breaking Changes

* <DOCUMENT BREAKING CHANGES HERE>

# Release 2.20.0

* Old.
'''


def _rules(build):
  """{name: text} of the rules in a BUILD text."""
  return {n: t for n, t in mtp._parts(build) if n}


def _read(tree, relpath):
  with open(os.path.join(tree, relpath), encoding='utf-8') as f:
    return f.read()


class PatchedPipTreeTest(absltest.TestCase):
  """The patch made against pip TensorFlow's files, applied both ways."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.scratch = absltest.get_default_test_tmpdir()
    cls.base = mtp.pip_tree(_RELEASE)
    cls.base[mtp.RELEASE_NOTES] = _RELEASE_MD
    cls.patch, cls.notes = mtp.make_patch(_RELEASE, cls.base, 'pip')
    cls.by_git = os.path.join(cls.scratch, 'by-git')
    cls.by_patch = os.path.join(cls.scratch, 'by-patch')
    for tree in (cls.by_git, cls.by_patch):
      shutil.rmtree(tree, ignore_errors=True)
      mtp.write_tree(cls.base, tree)
    mtp.git_apply(cls.by_git, cls.patch)
    if shutil.which('patch'):
      mtp.patch_p1(cls.by_patch, cls.patch)

  def testGitApplyAndPatchP1GiveTheSameTree(self):
    if shutil.which('patch') is None:
      self.skipTest('no patch(1)')
    self.assertEqual(mtp.differing_files(self.by_git, self.by_patch), [])

  def testPatchedFilesAreTheRepositorys(self):
    for relpath, text in mtp.repo_files().items():
      if relpath in mtp.upstream_paths():  # README_Slurm.md: UPSTREAM's too.
        text = mtp.upstream_files({relpath: text}, paths=[relpath])[relpath]
      self.assertEqual(_read(self.by_git, relpath), text, relpath)

  def testBuildsHaveTheRepositorysSlurmTargets(self):
    for build in mtp.BUILDS:
      tree = _rules(_read(self.by_git, build))
      ours = _rules(_read(mtp.ROOT, build))
      slurm = sorted(n for n in ours if n.startswith('slurm_'))
      self.assertEqual(sorted(n for n in tree if n.startswith('slurm_')),
                       slurm, build)
      for name in slurm:
        self.assertEqual(tree[name], ours[name])
    self.assertNotEqual(
        [n for n in _rules(_read(self.by_git, mtp.BUILD))
         if n.startswith('slurm_')], [])

  def testFailureHandlingBuildGetsTheUpstreamTestTargetAtItsEnd(self):
    self.assertEqual(list(_rules(_read(self.by_git, _FAILURE_HANDLING_BUILD))),
                     list(_rules(self.base[_FAILURE_HANDLING_BUILD])) +
                     ['termination_config_test'])

  def testFailureHandlingBuildGetsNoStandIn(self):
    build = _read(self.by_git, _FAILURE_HANDLING_BUILD)
    self.assertIn('pip_tensorflow_targets', _read(mtp.ROOT,
                                                  _FAILURE_HANDLING_BUILD))
    self.assertNotIn('pip_tensorflow_targets', build)
    self.assertNotIn('tensorflow_stand_ins.bzl', build)

  def testNothingElseChanges(self):
    changed = subprocess.run(
        ['git', 'status', '--porcelain', '--untracked-files=all'],
        cwd=self.by_git, capture_output=True, text=True,
        check=True).stdout.split('\n')
    # The resolver's goldens are TensorFlow's: its API does not change.
    same = {path for path, text in mtp.repo_files().items()
            if self.base.get(path) == text}
    self.assertCountEqual(set(mtp.GOLDENS), same)
    self.assertCountEqual(
        [line[3:] for line in changed if line],
        (set(mtp.repo_files()) - same) | set(mtp.BUILDS) |
        set(mtp.upstream_paths()) | {mtp.RELEASE_NOTES})

  def testCarriedTestsPassOnThePatchedTree(self):
    report = mtp.run_carried_tests(self.by_git)
    tree = os.path.realpath(self.by_git)
    self.assertEqual(report['sources'], {
        api_golden.SYMBOL: os.path.join(tree, mtp.MODULE),
        _TERMINATION_CONFIG: os.path.join(tree, _FAILURE_HANDLING_MODULE)})
    self.assertTrue(report['v1_is_v2'])
    self.assertCountEqual(
        report['tests'], [p[:-3].replace('/', '.')
                          for p in list(mtp.repo_files()) + [_UPSTREAM_TEST]
                          if p.endswith("_test.py")])
    for name, counts in report['tests'].items():
      self.assertEqual(os.path.realpath(counts['file']),
                       os.path.join(tree, name.replace('.', '/') + '.py'))
      self.assertGreater(counts['run'], counts['skipped'], name)
      self.assertEqual((counts['failures'], counts['errors']), (0, 0), name)

  def testGoldensAreThoseOfThePatchedTreesClasses(self):
    scratch = self.create_tempdir().full_path
    python = mtp._bare_python(os.path.join(scratch, 'venv'),
                              overlay_root=self.by_git)
    rendered = json.loads(subprocess.run(
        [python, os.path.join(mtp.ROOT, 'tools', 'api_golden.py'),
         '--print-json'], cwd=scratch, env=mtp._quiet_env(),
        capture_output=True, text=True, check=True, timeout=600).stdout)
    self.assertCountEqual(rendered, list(mtp.GOLDENS) + list(
        api_golden.TF_GOLDENS))
    for path, text in rendered.items():
      self.assertEqual(_read(self.by_git, path), text, path)
    self.assertIn(r"\'termination_signals\'", rendered[next(iter(
        api_golden.TF_GOLDENS))])

  def testReleaseNoteIsAtTheTop(self):
    self.assertEqual(
        _read(self.by_git, mtp.RELEASE_NOTES),
        mtp.insert_release_note(
            _RELEASE_MD, _read(mtp.ROOT, mtp.RELEASE_NOTE) +
            _read(mtp.ROOT, mtp.UPSTREAM_NOTE), _RELEASE))

  def testPatchForAnotherModuleIsRefusedByBoth(self):
    files = dict(self.base)
    files[mtp.MODULE] = files[mtp.MODULE].replace('import re\n', 'import re2\n')
    self.assertNotEqual(files[mtp.MODULE], self.base[mtp.MODULE])
    tree = os.path.join(self.scratch, 'other-module')
    shutil.rmtree(tree, ignore_errors=True)
    mtp.write_tree(files, tree)
    with self.assertRaisesRegex(mtp.PatchError, 'git apply failed'):
      mtp.git_apply(tree, self.patch, check_only=True)
    if shutil.which('patch'):
      with self.assertRaisesRegex(mtp.PatchError, 'patch -p1 --dry-run'):
        mtp.patch_p1(tree, self.patch)
    self.assertEqual(_read(tree, mtp.MODULE), files[mtp.MODULE])


class SpliceBuildTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.ours = _read(mtp.ROOT, mtp.BUILD)
    self.spliced = mtp.splice_build(_TREE_BUILD, self.ours)

  def testSlurmTargetsAreTheRepositorys(self):
    ours = {n: t for n, t in _rules(self.ours).items()
            if n.startswith('slurm_')}
    spliced = _rules(self.spliced)
    self.assertEqual({n: spliced[n] for n in ours}, ours)

  def testOtherTargetsStayInTheirOrder(self):
    names = [n for n in _rules(self.spliced) if not n.startswith('slurm_')]
    self.assertEqual(names, [n for n in _rules(_TREE_BUILD)
                             if not n.startswith('slurm_')])
    self.assertEqual(_rules(self.spliced)['kubernetes_cluster_resolver_py'],
                     _rules(_TREE_BUILD)['kubernetes_cluster_resolver_py'])

  def testNewTargetsGoNextToTheTreesSlurmTargets(self):
    names = list(_rules(self.spliced))
    self.assertEqual(names[:2], ['cluster_resolver_lib', 'slurm_hostlist_py'])
    self.assertLess(names.index('slurm_step_py'),
                    names.index('kubernetes_cluster_resolver_py'))
    self.assertEqual(names[-1], 'kubernetes_cluster_resolver_py_test')

  def testLoadsGetTheSymbolsTheTargetsUse(self):
    self.assertIn('load("//tensorflow:strict.default.bzl", '
                  '"py_strict_library")\n', self.spliced)
    self.assertIn('load(\n    "//tensorflow:tensorflow.default.bzl",\n    '
                  '"tf_py_strict_test",\n)\n', self.spliced)

  def testSplicingTwiceChangesNothing(self):
    self.assertEqual(mtp.splice_build(self.spliced, self.ours), self.spliced)

  def testTreeWithoutTheTestsLoadIsRefusedNamingTheFile(self):
    tree = _TREE_BUILD.replace(
        'load(\n    "//tensorflow:tensorflow.default.bzl",\n    '
        '"tf_py_strict_test",\n)\n', '')
    self.assertNotEqual(tree, _TREE_BUILD)
    with self.assertRaisesRegex(
        mtp.PatchError, re.escape(mtp.BUILD) +
        ' does not load //tensorflow:tensorflow.default.bzl'):
      mtp.splice_build(tree, self.ours, mtp.BUILD)

  def testSlurmTargetsOnlyTheTreeHasAreDropped(self):
    tree = _TREE_BUILD.replace(
        'py_strict_library(\n    name = "kubernetes',
        'py_strict_library(\n    name = "slurm_gone",\n)\n\n'
        'py_strict_library(\n    name = "kubernetes')
    spliced = mtp.splice_build(tree, self.ours)
    self.assertNotIn('slurm_gone', spliced)
    self.assertNotIn('\n\n\n', spliced)


class SpliceFailureHandlingBuildTest(absltest.TestCase):
  """The repository's failure_handling/BUILD has no Slurm target to splice."""

  def setUp(self):
    super().setUp()
    self.ours = _read(mtp.ROOT, _FAILURE_HANDLING_BUILD)

  def testTreesBuildStaysAsItIs(self):
    self.assertEqual(mtp.splice_build(_TREE_FAILURE_HANDLING_BUILD, self.ours,
                                      _FAILURE_HANDLING_BUILD),
                     _TREE_FAILURE_HANDLING_BUILD)

  def testSlurmTargetsOfAnEarlierPatchAreDropped(self):
    tree = _TREE_FAILURE_HANDLING_BUILD + (
        '\npy_strict_library(\n    name = "slurm_termination_config_py",\n'
        ')\n')
    self.assertEqual(mtp.splice_build(tree, self.ours, _FAILURE_HANDLING_BUILD),
                     _TREE_FAILURE_HANDLING_BUILD)

  def testStandInsAndTheirLoadStayOut(self):
    self.assertIn('pip_tensorflow_targets', self.ours)
    spliced = mtp.splice_build(_TREE_FAILURE_HANDLING_BUILD, self.ours,
                               _FAILURE_HANDLING_BUILD)
    self.assertNotIn('pip_tensorflow_targets', spliced)
    self.assertNotIn('tensorflow_stand_ins.bzl', spliced)


class UpstreamTest(absltest.TestCase):
  """UPSTREAM: the change of TensorFlow's own failure_handling.py."""

  def testChangesFailureHandlingItsBuildAndGoldenAndAddsATest(self):
    self.assertCountEqual(mtp.upstream_paths(), [
        _FAILURE_HANDLING_BUILD, _FAILURE_HANDLING_MODULE, _UPSTREAM_TEST,
        next(iter(api_golden.TF_GOLDENS)), mtp.README])

  def testRepositoryCarriesNoCopyOfTensorflowsFiles(self):
    for path in mtp.upstream_paths():
      if path not in (_FAILURE_HANDLING_BUILD, mtp.README):  # Its own.
        self.assertFalse(os.path.exists(os.path.join(mtp.ROOT, path)), path)

  def testTestTargetGoesAtTheEndOfTheTreesBuild(self):
    build = mtp.upstream_files(
        {_FAILURE_HANDLING_BUILD: _TREE_FAILURE_HANDLING_BUILD},
        paths=[_FAILURE_HANDLING_BUILD])[_FAILURE_HANDLING_BUILD]
    self.assertStartsWith(build, _TREE_FAILURE_HANDLING_BUILD + '\n')
    self.assertEqual(list(_rules(build))[-1], 'termination_config_test')

  def testTreeItDoesNotApplyToIsRefusedNamingIt(self):
    with self.assertRaisesRegex(mtp.PatchError,
                                re.escape(mtp.UPSTREAM) + ' does not apply'):
      mtp.upstream_files({_FAILURE_HANDLING_MODULE: '"""Another file."""\n'},
                         paths=[_FAILURE_HANDLING_MODULE])


class TreeAndFilesTest(absltest.TestCase):

  def testReleaseNoteGoesUnderANewHeadingOfTheNextRelease(self):
    text = mtp.insert_release_note(_RELEASE_MD, '### X\n\n* Y.\n', '2.21')
    self.assertEqual(text, '# Release 2.22.0\n\n## TensorFlow\n\n### X\n\n'
                     '* Y.\n\n' + _RELEASE_MD)

  def testReleaseNoteRefusesAnExistingHeading(self):
    with self.assertRaisesRegex(mtp.PatchError, 'already has'):
      mtp.insert_release_note('# Release 2.22.0\n\n' + _RELEASE_MD, '* Y.\n',
                              '2.21')

  def make_tree(self, files):
    tree = self.create_tempdir().full_path
    for relpath, text in files.items():
      os.makedirs(os.path.dirname(os.path.join(tree, relpath)), exist_ok=True)
      with open(os.path.join(tree, relpath), 'w', newline='') as f:
        f.write(text)
    return tree

  def testTreeOfAnotherReleaseIsRefused(self):
    tree = self.make_tree({'tensorflow/tf_version.bzl':
                           'TF_VERSION = "2.20.0"\n'})
    with self.assertRaisesRegex(mtp.PatchError, 'is TensorFlow 2.20.0, not'):
      mtp.tree_files(tree, _RELEASE, [mtp.BUILD])

  def testTreeWithCrlfLineEndsIsRefused(self):
    tree = self.make_tree({'tensorflow/tf_version.bzl':
                           'TF_VERSION = "2.21.0"\n',
                           mtp.BUILD: _TREE_BUILD.replace('\n', '\r\n')})
    with self.assertRaisesRegex(mtp.PatchError, 'CRLF'):
      mtp.tree_files(tree, _RELEASE, [mtp.BUILD])

  def testChangedLicenseHeaderIsRefused(self):
    module = _read(mtp.ROOT, mtp.MODULE)
    base = {mtp.MODULE: module.replace('2018-2020', '2018-2026', 1),
            mtp.BUILD: _TREE_BUILD}
    self.assertNotEqual(base[mtp.MODULE], module)
    with self.assertRaisesRegex(mtp.PatchError, 'license header differs'):
      mtp.patched_files(_RELEASE, base)

  def testCarriedTestFailureFailsTheCheck(self):
    passing = ('from absl.testing import absltest\n\n\n'
               'class T(absltest.TestCase):\n\n'
               '  def testPasses(self):\n    pass\n')
    files = {mtp.PACKAGE + '/slurm_a_test.py': passing,
             mtp.PACKAGE + '/slurm_b_test.py': passing.replace(
                 'pass\n', 'self.assertEqual(1, 2)\n')}
    with self.assertRaisesRegex(
        mtp.PatchError, re.escape('cluster_resolver.slurm_b_test: 1 failures')):
      mtp.run_carried_tests(self.make_tree(files))


# In the shape of TensorFlow 2.21's tensorflow/BUILD, where its internal
# targets' visibility is declared.
_TREE_TOP_BUILD = '''\
package_group(
    name = "internal",
    packages = [
        "//devtools/python/indexer/...",
        "//tensorflow/...",
        "//third_party/py/keras/...",
    ],
)

package_group(
    name = "ndarray_tensor_allow_list",
    packages = [
        "//third_party/py/courier/...",
    ],
)
'''


class CompanionPatchTest(absltest.TestCase):
  """The companion as one patch for a tree that carries the core."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.base = mtp.pip_tree(_RELEASE)
    cls.base[mtp.VISIBILITY] = _TREE_TOP_BUILD
    cls.patch, cls.notes = mtp.make_companion(_RELEASE, cls.base)
    cls.tree = os.path.join(absltest.get_default_test_tmpdir(), 'companion')
    shutil.rmtree(cls.tree, ignore_errors=True)
    mtp._commit_core(_RELEASE, cls.base, cls.tree, mtp.ROOT)
    mtp._git(cls.tree, 'am', '-q', input=cls.patch)

  def testTitleIsTheMessagesFirstLine(self):
    self.assertEqual(
        _read(mtp.ROOT, mtp.COMPANION_MESSAGE).split('\n', 1)[0],
        mtp.patch_title(self.patch))

  def testAddsTheCompanionsFilesAsTheRepositoryHasThem(self):
    added = mtp._git(self.tree, 'diff', '--name-only', '--diff-filter=A',
                     'HEAD~1', 'HEAD').split()
    self.assertCountEqual(added, mtp.companion_files())
    for path, text in mtp.companion_files().items():
      self.assertEqual(_read(self.tree, path), text, path)

  def testTheCompanionJoinsTheInternalPackageGroupOnly(self):
    changed = mtp._git(self.tree, 'diff', '--name-only', '--diff-filter=M',
                       'HEAD~1', 'HEAD').split()
    self.assertEqual(changed, [mtp.VISIBILITY])
    self.assertEqual(
        _read(self.tree, mtp.VISIBILITY),
        _TREE_TOP_BUILD.replace('        "//third_party/py/keras',
                                '        "//tf_slurm/...",\n'
                                '        "//third_party/py/keras', 1))

  def testCompanionTestsPassInTheTreeWithTheCore(self):
    out = io.StringIO()
    report = mtp.check_companion(_RELEASE, self.base, self.patch, 'pip',
                                 out=out)
    tests = ['tf_slurm.' + os.path.basename(p)[:-3]
             for p in mtp.companion_files() if p.endswith('_test.py')]
    self.assertCountEqual(report['tests'], tests)
    for name, counts in report['tests'].items():
      self.assertEqual(os.path.basename(counts['file']),
                       name.split('.')[1] + '.py')
      self.assertIn('/tree/tf_slurm/', counts['file'])
      self.assertGreater(counts['run'], counts['skipped'], name)
      self.assertEqual((counts['failures'], counts['errors']), (0, 0), name)
    self.assertEqual(
        out.getvalue().splitlines()[0],
        'OK: the companion applies with git am after the core, to pip')

  def testTreeWithoutTheTopBuildGetsANote(self):
    base = dict(self.base)
    del base[mtp.VISIBILITY]
    patch, notes = mtp.make_companion(_RELEASE, base)
    self.assertNotIn('diff --git a/%s ' % mtp.VISIBILITY, patch)
    self.assertLen(notes, 1)
    self.assertIn('"//tf_slurm/..."', notes[0])

  def testJoiningTwiceChangesNothing(self):
    once = mtp.with_companion_visible(_TREE_TOP_BUILD)
    self.assertEqual(mtp.with_companion_visible(once), once)

  def testTopBuildWithoutTheInternalGroupIsRefused(self):
    with self.assertRaisesRegex(mtp.PatchError, 'package_group "internal"'):
      mtp.with_companion_visible(_TREE_TOP_BUILD.replace('"internal"',
                                                         '"others"'))


if __name__ == '__main__':
  absltest.main()
