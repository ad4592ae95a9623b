"""Checks SlurmClusterResolver's public API against its golden files.

The goldens (tensorflow/tools/api/golden/{v1,v2}/, in TensorFlow's format)
record the class's members, argument names and defaults. This test fails when
the class differs from them, printing the diff and the command that
regenerates them:

    .venv/bin/python tools/api_golden.py --update
"""

import inspect
from unittest import mock

from absl.testing import absltest

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tools import api_golden


class ApiGoldenTest(absltest.TestCase):

  def testGoldensMatchTheClass(self):
    stale = api_golden.compare()
    if stale:
      self.fail('\n' + api_golden.describe(stale))

  def testBothApisPublishTheRepositorysClass(self):
    for api in ('v1', 'v2'):
      self.assertIs(api_golden.public_class(api),
                    slurm_cluster_resolver.SlurmClusterResolver)

  def testChangedDefaultIsReported(self):
    init = slurm_cluster_resolver.SlurmClusterResolver.__init__
    spec = inspect.getfullargspec(init)
    index = spec.args.index('port_base') - (len(spec.args) - len(spec.defaults))
    defaults = list(spec.defaults)
    defaults[index] += 1
    with mock.patch.object(init, '__defaults__', tuple(defaults)):
      stale = api_golden.compare()
    self.assertLen(stale, 2)  # v1 and v2.
    report = api_golden.describe(stale)
    self.assertIn(
        "+    argspec: \"args=[\\'self\\', \\'jobs\\', \\'port_base\\'", report)
    self.assertIn("\\'None\\', \\'%d\\', \\'None\\'" % defaults[index], report)
    self.assertIn(api_golden.REGENERATE_COMMAND, report)

  def testNewPublicMethodIsReported(self):
    with mock.patch.object(slurm_cluster_resolver.SlurmClusterResolver,
                           'rebuild', lambda self, force=False: None,
                           create=True):
      stale = api_golden.compare()
    self.assertLen(stale, 2)
    self.assertIn('+    name: "rebuild"', api_golden.describe(stale))

  def testBuiltinTypesAreSpelledAsInTensorFlow221(self):
    self.assertEqual(api_golden.type_name("<class 'property'>"),
                     "<type 'property'>")
    self.assertEqual(api_golden.type_name("<class 'RuntimeError'>"),
                     "<type 'exceptions.RuntimeError'>")
    self.assertEqual(api_golden.type_name("<class 'abc.ABCMeta'>"),
                     "<type 'type'>")
    self.assertEqual(api_golden.type_name("<class 'a.B'>"), "<class 'a.B'>")

  def testTextFormatQuoting(self):
    self.assertEqual(api_golden._quote('a\'b"c\\d\n\xe9'),
                     '"a\\\'b\\"c\\\\d\\n\\303\\251"')


if __name__ == '__main__':
  absltest.main()
