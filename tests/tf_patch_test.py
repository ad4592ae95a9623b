"""Checks the patch that vendors the resolver into a TensorFlow tree.

tools/make_tf_patch.py turns the repository's tensorflow/ files into a
git-style patch for a TensorFlow release. Here it is applied, with
`git apply` and with `patch -p1`, to trees laid out like TensorFlow's, built
from the pip package's files (pip_tree_files), and the patched tree's
resolver is imported over pip TensorFlow and used.
"""

import os
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

_STAND_IN_TEST = '''\
"""A stand-in for the release's test file."""

from tensorflow.python.platform import test


class SlurmClusterResolverTest(test.TestCase):
  pass


if __name__ == '__main__':
  test.main()
'''


def _body(patch):
  """The patch from its first diff on (its header names the base)."""
  return patch[patch.index('diff --git '):]


class TfPatchTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pip_files, cls.pip_description = mtp.pip_tree_files(_RELEASE)
    cls.repo = mtp.repo_files(_REPO)

  def make_tree(self, files=None):
    tree = self.create_tempdir().full_path
    mtp.write_tree(self.pip_files if files is None else files, tree)
    return tree

  def read(self, tree, relpath):
    with open(os.path.join(tree, relpath), encoding='utf-8') as f:
      return f.read()

  def assertPatchedLikeTheRepository(self, tree):
    for relpath in (mtp.MODULE, mtp.TEST):
      self.assertEqual(self.read(tree, relpath), self.repo[relpath], relpath)
    for relpath in mtp.GOLDENS:
      self.assertEqual(self.read(tree, relpath),
                       api_golden.restyle(self.repo[relpath], 'type'), relpath)

  def testPatchAppliesToPipTreeAndItsResolverWorks(self):
    tree = self.make_tree()
    patch, notes = mtp.make_patch(_RELEASE, self.pip_files,
                                  self.pip_description)
    self.assertTrue(any('adds it as a new file' in n for n in notes), notes)
    mtp.git_apply(tree, patch, check_only=True)
    mtp.git_apply(tree, patch)
    self.assertPatchedLikeTheRepository(tree)

    build = self.read(tree, mtp.BUILD).splitlines(True)
    first, last = mtp.find_rule(build, mtp.LIBRARY_TARGET)
    library = ''.join(build[first:last + 1])
    self.assertStartsWith(library, 'py_strict_library(\n')  # The tree's kind.
    for label in (':base_cluster_resolver_py',
                  '//tensorflow/python/training:server_lib',
                  '//tensorflow/python/util:tf_export',
                  '@absl_py//absl/logging'):
      self.assertIn('"%s",' % label, library)
    first, last = mtp.find_rule(build, mtp.TEST_TARGET)
    test = ''.join(build[first:last + 1])
    self.assertStartsWith(test, 'tf_py_strict_test(\n')
    for label in (':slurm_cluster_resolver_py',
                  '@absl_py//absl/testing:absltest',
                  '@absl_py//absl/testing:parameterized'):
      self.assertIn('"%s",' % label, test)
    # Nothing else changed: git sees only the patch's files.
    changed = subprocess.run(['git', 'diff', '--name-only'], cwd=tree,
                             capture_output=True, text=True, check=True).stdout
    untracked = subprocess.run(
        ['git', 'ls-files', '--others', '--exclude-standard'], cwd=tree,
        capture_output=True, text=True, check=True).stdout
    self.assertCountEqual(changed.split() + untracked.split(),
                          [mtp.MODULE, mtp.TEST, mtp.BUILD] + list(mtp.GOLDENS))

    used = mtp.use_tree(tree, _REPO)
    self.assertEqual(os.path.realpath(used['source']),
                     os.path.realpath(os.path.join(tree, mtp.MODULE)))
    self.assertEqual(used['cluster'],
                     {'worker': ['n9:8888', 'n9:8889', 'n10:8888', 'n10:8889']})
    self.assertEqual(used['task'], ['worker', 3])
    self.assertEqual(used['master'], 'grpc://n10:8889')

  def testPatchP1GivesTheSameTree(self):
    if shutil.which('patch') is None:
      self.skipTest('no patch(1)')
    patch, _ = mtp.make_patch(_RELEASE, self.pip_files, self.pip_description)
    by_git, by_patch = self.make_tree(), self.make_tree()
    mtp.git_apply(by_git, patch)
    for args in (['--dry-run'], []):
      subprocess.run(['patch', '-p1', '--batch', '--fuzz=0'] + args,
                     cwd=by_patch, input=patch, text=True, check=True,
                     capture_output=True)
    for relpath in (mtp.MODULE, mtp.TEST, mtp.BUILD) + mtp.GOLDENS:
      self.assertEqual(self.read(by_patch, relpath),
                       self.read(by_git, relpath), relpath)

  def testTreeModeMatchesPipMode(self):
    tree = self.make_tree()
    base, description = mtp.tree_base(tree, _RELEASE)
    self.assertIn('TensorFlow 2.21', description)
    from_tree, _ = mtp.make_patch(_RELEASE, base, description)
    from_pip, _ = mtp.make_patch(_RELEASE, self.pip_files,
                                 self.pip_description)
    self.assertEqual(_body(from_tree), _body(from_pip))

  def testOlderLayoutKeepsTheTreesKindsAndLabels(self):
    files = dict(self.pip_files)
    files[mtp.BUILD] = _OLD_STYLE_BUILD
    files[mtp.TEST] = _STAND_IN_TEST
    tree = self.make_tree(files)
    base, description = mtp.tree_base(tree, _RELEASE)
    patch, notes = mtp.make_patch(_RELEASE, base, description)
    self.assertFalse(any('adds it as a new file' in n for n in notes), notes)
    self.assertIn('--- a/%s\n' % mtp.TEST, patch)  # Replaced, not added.
    mtp.git_apply(tree, patch)
    self.assertPatchedLikeTheRepository(tree)
    expected = _OLD_STYLE_BUILD.replace(
        '        "//tensorflow/python:util",\n',
        '        "//tensorflow/python:util",\n'
        '        "@absl_py//absl/logging",\n').replace(
            '        "//tensorflow/python:client_testlib",\n'
            '        "//tensorflow/python:framework_for_generated_wrappers",\n',
            '        "//tensorflow:tensorflow_py",\n'
            '        "//tensorflow/python:framework_for_generated_wrappers",\n'
            '        "@absl_py//absl/testing:absltest",\n'
            '        "@absl_py//absl/testing:parameterized",\n')
    self.assertEqual(self.read(tree, mtp.BUILD), expected)

  def testClassStyleTreeGetsClassStyleGoldens(self):
    files = dict(self.pip_files)
    for relpath in mtp.GOLDENS:
      files[relpath] = api_golden.restyle(files[relpath], 'class')
    tree = self.make_tree(files)
    base, description = mtp.tree_base(tree, _RELEASE)
    patch, _ = mtp.make_patch(_RELEASE, base, description)
    self.assertIn("'class' style", patch)
    mtp.git_apply(tree, patch)
    for relpath in mtp.GOLDENS:
      self.assertEqual(self.read(tree, relpath),
                       api_golden.restyle(self.repo[relpath], 'class'))

  def testBrokenPatchIsRejected(self):
    tree = self.make_tree()
    patch, _ = mtp.make_patch(_RELEASE, self.pip_files, self.pip_description)
    # A context line of the module's first hunk that the tree does not have.
    broken = patch.replace(' # you may not use this file except',
                           ' # you MAY not use this file except', 1)
    self.assertNotEqual(broken, patch)
    with self.assertRaisesRegex(mtp.PatchError, 'patch does not apply'):
      mtp.git_apply(tree, broken, check_only=True)
    # A tree whose module is not the release's.
    files = dict(self.pip_files)
    files[mtp.MODULE] = files[mtp.MODULE].replace('import re\n', 'import re2\n')
    with self.assertRaisesRegex(mtp.PatchError, 'patch does not apply'):
      mtp.git_apply(self.make_tree(files), patch, check_only=True)
    # The scratch tree is unchanged by --check.
    self.assertEqual(self.read(tree, mtp.MODULE), self.pip_files[mtp.MODULE])

  def testTreeOfAnotherReleaseIsRefused(self):
    files = dict(self.pip_files)
    files['tensorflow/tf_version.bzl'] = 'TF_VERSION = "2.20.0"\n'
    with self.assertRaisesRegex(mtp.PatchError, 'is TensorFlow 2.20.0, not 2.21'):
      mtp.tree_base(self.make_tree(files), _RELEASE)

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


if __name__ == '__main__':
  absltest.main()
