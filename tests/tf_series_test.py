# Copyright 2026 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""The patch as a series of pull requests (make_tf_patch.py --series).

The series is written against a tree rebuilt from pip TensorFlow 2.21 with
a RELEASE.md, applied with `git am` to a scratch tree and tested after each
patch (`check_series`): the Slurm targets' deps are strict, TensorFlow's
own test is unchanged and passes, and so do the carried tests each patch
adds or changes; the last patch is the change of TensorFlow's own files
(UPSTREAM); after it, every carried test passes, and the tree is the single
patch's.
"""

import io
import os
import re

from absl.testing import absltest

from tools import make_tf_patch as mtp

_RELEASE = '2.21'
_RELEASE_MD = '# Release 2.21.0\n\n## TensorFlow\n\n* Old.\n'


def _read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


class SeriesTest(absltest.TestCase):
  """The series of the repository's stages against pip TensorFlow's files."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.base = mtp.pip_tree(_RELEASE)
    cls.base[mtp.RELEASE_NOTES] = _RELEASE_MD
    cls.out = os.path.join(absltest.get_default_test_tmpdir(), 'series')
    cls.paths = mtp.write_series(_RELEASE, mtp.series_base(cls.base), cls.out)
    cls.stages = mtp.series_stages()

  def testSeriesIsGreenAfterEveryPatchAndEndsAtTheSinglePatch(self):
    out = io.StringIO()
    mtp.check_series(_RELEASE, self.base, self.paths, 'pip', out=out)
    lines = out.getvalue().splitlines()
    self.assertLen(lines, len(self.paths) + 1)
    for path, line in zip(self.paths, lines):
      self.assertStartsWith(line, 'OK: %s applies; ' % os.path.basename(path))
      self.assertIn('slurm_cluster_resolver_test 9 tests', line)
    self.assertEqual('OK: after the last patch the tree is the single '
                     'patch\'s', lines[-1])

  def testOnePatchPerStageAndUpstreamWithItsTitleAndDescription(self):
    messages = mtp.series_messages()
    self.assertLen(self.paths, len(self.stages) + 1)
    self.assertLen(messages, len(self.paths))
    for path, message in zip(self.paths, messages):
      title, description = message.split('\n\n', 1)
      patch = _read(path)
      self.assertEqual(title, mtp.patch_title(patch))
      self.assertIn('\n\n' + description.strip() + '\n---\n', patch)

  def testEveryPatchAddsAtMostTheLimitOfProductLines(self):
    for path in self.paths:
      self.assertLessEqual(mtp.patch_counts(_read(path))['product'],
                           mtp.PRODUCT_LIMIT, path)

  def testSeriesAddsAtMostItsLimitOfProductLinesInAtMostEightPatches(self):
    self.assertLessEqual(len(self.paths), mtp.MAX_PATCHES)
    self.assertLessEqual(
        sum(mtp.patch_counts(_read(p))['product'] for p in self.paths),
        mtp.SERIES_PRODUCT_LIMIT)

  def testNoPatchRewritesOrDeletesATestLine(self):
    for path in self.paths:
      self.assertEqual([], mtp.removed_test_lines(_read(path)), path)

  def testLastPatchIsUpstreamAndItsReleaseNoteAlone(self):
    patch = _read(self.paths[-1])
    self.assertEqual(mtp.patch_title(patch), mtp.series_messages()[-1].split(
        '\n', 1)[0])
    self.assertCountEqual(
        re.findall(r'^diff --git a/\S+ b/(\S+)$', patch, re.M),
        mtp.upstream_paths() + [mtp.RELEASE_NOTES])
    self.assertIn(''.join('+' + line + '\n' for line in _read(
        os.path.join(mtp.ROOT, mtp.UPSTREAM_NOTE)).splitlines()), patch)

  def testWritingTwiceGivesTheSameFiles(self):
    again = mtp.write_series(_RELEASE, mtp.series_base(self.base),
                             self.create_tempdir().full_path)
    self.assertEqual([_read(p) for p in again],
                     [_read(p) for p in self.paths])

  def testEachStagesReleaseNoteIsInRelease(self):
    note = mtp.RELEASE_NOTE
    stages = mtp.stored_stages(mtp.series_base(self.base),
                               [diff for _, _, diff in self.stages[:-1]])
    for stage, (_, files) in zip(stages, mtp.series_trees(
        _RELEASE, mtp.series_base(self.base))):
      if note in stage:
        self.assertStartsWith(files[mtp.RELEASE_NOTES], '# Release 2.22.0\n')
        self.assertIn(stage[note], files[mtp.RELEASE_NOTES])


class StagesTest(absltest.TestCase):

  def make_series(self, files):
    root = self.create_tempdir().full_path
    os.makedirs(os.path.join(root, mtp.SERIES))
    for name, text in files.items():
      with open(os.path.join(root, mtp.SERIES, name), 'w',
                encoding='utf-8') as f:
        f.write(text)
    return root

  def testLastStageWithADiffIsRefused(self):
    root = self.make_series({'01-a.txt': 'A\n', '01-a.diff': ''})
    with self.assertRaisesRegex(mtp.PatchError, 'the last stage is the '
                                'repository'):
      mtp.series_stages(root)

  def testStageWithoutItsDiffIsRefusedNamingIt(self):
    root = self.make_series({'01-a.txt': 'A\n', '02-b.txt': 'B\n'})
    with self.assertRaisesRegex(mtp.PatchError, re.escape('lacks 01-a.diff')):
      mtp.series_stages(root)

  def testStageThatDoesNotApplyIsRefusedNamingIt(self):
    base = {mtp.MODULE: 'a\n', mtp.TEST: 'b\n'}
    diff = ('--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-x\n+y\n' %
            (mtp.MODULE, mtp.MODULE))
    with self.assertRaisesRegex(mtp.PatchError, 'stage 1 of .* does not '
                                'apply'):
      mtp.stored_stages(base, [diff])

  def testTreeWithAMissingDepIsRefusedNamingPatchTargetAndModule(self):
    tree = self.create_tempdir()
    package = mtp.PACKAGE.replace('/', '.')
    tree.create_file(mtp.BUILD, '\n'.join([
        'py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])',
        'tf_py_strict_test(name = "slurm_b_test", srcs = ["slurm_b_test.py"])',
        '']))
    tree.create_file(mtp.FAILURE_HANDLING + '/BUILD', '')
    tree.create_file(mtp.PACKAGE + '/slurm_a.py', '')
    tree.create_file(mtp.PACKAGE + '/slurm_b_test.py',
                     'from %s import slurm_a\n' % package)
    with self.assertRaisesRegex(mtp.PatchError, '^%s$' % re.escape(
        '0012-x.patch: the deps are not strict: //%s:slurm_b_test imports '
        '%s.slurm_a (slurm_b_test.py) without a dep on //%s:slurm_a_py' %
        (mtp.PACKAGE, package, mtp.PACKAGE))):
      mtp.check_strict_deps(tree.full_path, '0012-x.patch')

  def testPatchCountsSeparateProductTestAndOtherLines(self):
    added = [(mtp.MODULE, 3), (mtp.TEST, 2),
             (mtp.PACKAGE + '/slurm_test_util.py', 1), (mtp.BUILD, 4)]
    patch = ''.join(
        'diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1 +1,%d @@\n x\n%s' %
        (p, p, p, p, n + 1, '+y\n' * n) for p, n in added)
    self.assertEqual({'product': 3, 'test': 3, 'other': 4},
                     mtp.patch_counts(patch))


if __name__ == '__main__':
  absltest.main()
