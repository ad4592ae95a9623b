"""Checks the shape a TensorFlow reviewer expects of the patched folder.

The resolver module reads like TensorFlow's other resolvers (its imports at
the top, at most 800 lines); the Slurm knowledge lives in modules that
import nothing of TensorFlow, and so does slurm_test_util; no
module reads a variable of its own; the guide lists the variables the step
is read from; the repository carries TensorFlow's license.
"""

import ast
import os
import re

from absl.testing import absltest

from tf_slurm import slurm_step

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
_FOLDER = os.path.join(_ROOT, 'tensorflow', 'python', 'distribute',
                       'cluster_resolver')
_PACKAGE = 'tensorflow.python.distribute.cluster_resolver'
_MODULES = ('slurm_hostlist', 'slurm_step', 'slurm_cluster_resolver')
_PURE_MODULES = ('slurm_hostlist', 'slurm_step')
# Those and the test utility, which needs no TensorFlow either.
_TENSORFLOW_FREE = _PURE_MODULES + ('slurm_test_util',)
# The core's size, docstrings included: TensorFlow's module was 397 lines.
_CORE_LINES = 800


def _source(module):
  with open(os.path.join(_FOLDER, module + '.py')) as f:
    return f.read()


def _imported(tree):
  """Yields every module an import statement of `tree` imports."""
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        yield alias.name
    elif isinstance(node, ast.ImportFrom):
      for alias in node.names:
        yield '%s.%s' % (node.module, alias.name)


class UpstreamShapeTest(absltest.TestCase):

  def testCoreHasAtMost800Lines(self):
    self.assertLessEqual(
        sum(len(_source(module).splitlines()) for module in _MODULES),
        _CORE_LINES)

  def testEveryImportIsAtTheTopOfItsModule(self):
    for module in _MODULES:
      body = ast.parse(_source(module)).body
      kinds = [isinstance(node, (ast.Import, ast.ImportFrom)) for node in body]
      last_import = len(kinds) - kinds[::-1].index(True) - 1
      first_other = kinds.index(False, 1)  # Past the docstring.
      self.assertLess(last_import, first_other, module)

  def testSlurmModulesAndTheirTestsImportNoTensorFlowButEachOther(self):
    allowed = {'%s.%s' % (_PACKAGE, module) for module in _TENSORFLOW_FREE}
    for module in _TENSORFLOW_FREE:
      for name in _imported(ast.parse(_source(module))):
        if name.split('.')[0] == 'tensorflow':
          # A module, or a name from one (`from ... import expand_hostlist`).
          self.assertTrue({name, name.rsplit('.', 1)[0]} & allowed,
                          '%s imports %s' % (module, name))

  def testNoModuleReadsAVariableOfItsOwn(self):
    for module in _MODULES:
      self.assertNotIn('TF_SLURM', _source(module), module)

  def testGuideListsTheVariablesTheStepReads(self):
    with open(os.path.join(_ROOT, 'docs', 'slurm_guide.md')) as f:
      guide = f.read()
    section = guide[guide.index('Variables read ('):
                    guide.index('Bad input and limits')]
    self.assertEqual(sorted(slurm_step.VARIABLES),
                     sorted(set(re.findall(r'`([A-Z][A-Za-z0-9_]*(?:<n>)?)`',
                                           section))))

  def testRepositoryCarriesTheApacheLicense(self):
    with open(os.path.join(_ROOT, 'LICENSE')) as f:
      self.assertIn('Apache License\n                           Version 2.0',
                    f.read())


if __name__ == '__main__':
  absltest.main()
