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
"""Strict deps (tools/strict_deps.py), and the repository's BUILD files.

Every module a Slurm target's sources import that a known target provides
comes from a direct dep, and every dep on a known target is imported, as
TensorFlow's py_strict_library and tf_py_strict_test demand (the offline
workspace cannot tell: its Python sees every module).
"""

import os

from absl.testing import absltest

from tools import make_tf_patch as mtp
from tools import strict_deps

_CORE = mtp.PACKAGE
_CORE_MODULE = _CORE.replace('/', '.')
_COMPANION = mtp.COMPANION


class RepositoryTest(absltest.TestCase):

  def testSlurmTargetsOfTheRepositoryHaveStrictDeps(self):
    self.assertEqual([], strict_deps.problems(mtp.ROOT, mtp.PACKAGES,
                                              [_COMPANION]))


class ProblemsTest(absltest.TestCase):
  """The check on small trees of a BUILD and its sources."""

  def problems(self, files, packages=(_CORE,), companions=()):
    root = self.create_tempdir().full_path
    for path, text in files.items():
      os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
      with open(os.path.join(root, path), 'w', encoding='utf-8') as f:
        f.write(text)
    return strict_deps.problems(root, packages, companions)

  def core(self, build, sources):
    """The problems of the core package with `build` and `sources`."""
    files = {_CORE + '/' + name: text for name, text in sources.items()}
    files[_CORE + '/BUILD'] = build
    return self.problems(files)

  def testImportWithoutItsTargetInDepsIsReportedNamingTargetAndModule(self):
    build = ('py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
             'tf_py_strict_test(name = "slurm_b_test", '
             'srcs = ["slurm_b_test.py"])\n')
    found = self.core(build, {
        'slurm_a.py': '',
        'slurm_b_test.py': 'from %s import slurm_a\n' % _CORE_MODULE})
    self.assertEqual(['//%s:slurm_b_test imports %s.slurm_a (slurm_b_test.py) '
                      'without a dep on //%s:slurm_a_py' %
                      (_CORE, _CORE_MODULE, _CORE)], found)

  def testImportOfADepsModuleIsNoProblem(self):
    build = ('py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
             'py_strict_library(name = "slurm_b_py", srcs = ["slurm_b.py"], '
             'deps = [":slurm_a_py"])\n')
    self.assertEqual([], self.core(build, {
        'slurm_a.py': '',
        'slurm_b.py': 'import %s.slurm_a as a\n' % _CORE_MODULE}))

  def testDepWhoseModulesAreNotImportedIsReported(self):
    build = ('py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
             'py_strict_library(name = "slurm_b_py", srcs = ["slurm_b.py"], '
             'deps = [":slurm_a_py"])\n')
    self.assertEqual(['//%s:slurm_b_py depends on //%s:slurm_a_py, whose '
                      'modules its sources do not import' % (_CORE, _CORE)],
                     self.core(build, {'slurm_a.py': '', 'slurm_b.py': ''}))

  def testTensorFlowModuleNeedsItsTensorFlowTarget(self):
    build = 'py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
    found = self.core(build, {
        'slurm_a.py': 'from tensorflow.python.platform import tf_logging\n'})
    self.assertEqual(['//%s:slurm_a_py imports '
                      'tensorflow.python.platform.tf_logging (slurm_a.py) '
                      'without a dep on //tensorflow/python/platform:'
                      'tf_logging' % _CORE], found)

  def testTensorFlowsTestModuleIsClientTestlib(self):
    build = ('py_strict_library(name = "slurm_a_test", srcs = '
             '["slurm_a_test.py"], deps = '
             '["//tensorflow/python/platform:client_testlib"])\n')
    self.assertEqual([], self.core(build, {
        'slurm_a_test.py': 'from tensorflow.python.platform import test\n'}))

  def testTensorFlowModuleThatNoKnownTargetProvidesIsReported(self):
    build = 'py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
    found = self.core(build, {
        'slurm_a.py': 'from tensorflow.python.framework import ops\n'})
    self.assertEqual(['//%s:slurm_a_py imports tensorflow.python.framework '
                      '(slurm_a.py), which no known target provides '
                      '(tools/strict_deps.py KNOWN_TARGETS)' % _CORE], found)

  def testOnlyTheSlurmTargetsOfACorePackageAreChecked(self):
    build = ('py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"])\n'
             'py_strict_library(name = "other_py", srcs = ["other.py"])\n')
    self.assertEqual([], self.core(build, {
        'slurm_a.py': '', 'other.py': 'from %s import slurm_a\n' %
                                      _CORE_MODULE}))

  def testEveryTargetOfACompanionIsCheckedWithLabelsOfEveryForm(self):
    build = ('_LIB = "//lib"\n'
             'py_library(name = "a", srcs = ["a.py"], deps = [_LIB])\n'
             'py_library(name = "b", srcs = ["b.py"], deps = ["//lib:lib"])\n'
             'py_library(name = "c", srcs = ["c.py"], deps = [":a"])\n')
    found = self.problems({
        'lib/BUILD': 'py_library(name = "lib", srcs = ["__init__.py"])\n',
        'lib/__init__.py': '',
        'comp/BUILD': build,
        'comp/a.py': 'import lib\n',
        'comp/b.py': 'from comp import a\n',
        'comp/c.py': 'from comp import a\n'}, packages=(),
                          companions=('comp', 'lib'))
    self.assertEqual([
        '//comp:b imports comp.a (b.py) without a dep on //comp:a',
        '//comp:b depends on //lib:lib, whose modules its sources do not '
        'import'], found)

  def testSourceThatADepCarriesIsThatDepsToCheck(self):
    build = ('py_library(name = "a_lib", srcs = ["a.py"], deps = [":b"])\n'
             'py_binary(name = "a", srcs = ["a.py"], deps = [":a_lib"])\n'
             'py_library(name = "b", srcs = ["b.py"])\n')
    self.assertEqual([], self.problems({
        'comp/BUILD': build, 'comp/a.py': 'from comp import b\n',
        'comp/b.py': ''}, packages=(), companions=('comp',)))

  def testPackageWithoutABuildIsReported(self):
    self.assertEqual(['no %s/BUILD' % _CORE], self.problems({}))

  def testDepsThatAreNotAListOfStringsAreReported(self):
    build = ('py_strict_library(name = "slurm_a_py", srcs = ["slurm_a.py"], '
             'deps = select({"//c": []}))\n')
    self.assertEqual(['//%s:slurm_a_py: its srcs or deps are not lists of '
                      'strings' % _CORE],
                     self.core(build, {'slurm_a.py': ''}))


class ImportsTest(absltest.TestCase):

  def testFromPackageImportNameIsTheModuleIfKnownElseThePackage(self):
    self.assertEqual(['a.b.c', 'a.b'], strict_deps.imports(
        'from a.b import c, D\n', 'x.py', {'a.b.c'}))

  def testRelativeImportsStartFromTheFilesPackage(self):
    source = 'from . import m\nfrom ..n import o\n'
    self.assertEqual(['p.q.m', 'p.n'],
                     strict_deps.imports(source, 'p/q/r.py', {'p.q.m'}))
    self.assertEqual(['p.q.m', 'p.n'],
                     strict_deps.imports(source, 'p/q/__init__.py', {'p.q.m'}))

  def testImportsInsideFunctionsCount(self):
    self.assertEqual(['a.b'], strict_deps.imports(
        'def f():\n  import a.b\n', 'x.py', set()))


class LabelTest(absltest.TestCase):

  def testLabelsOfEveryFormResolve(self):
    self.assertEqual(
        ['//p:x', '//p:y', '//q:r', '//q/r:r', '@a//b/c:c', '@a//b:d'],
        [strict_deps.label(d, 'p') for d in
         (':x', 'y', '//q:r', '//q/r', '@a//b/c', '@a//b:d')])


if __name__ == '__main__':
  absltest.main()
