"""The overlay: TensorFlow uses this repository's SlurmClusterResolver.

TensorFlow's API publishes the companion's resolver (tf_slurm: the core's
with the ranks of MPI launchers), a subclass of the tree's class.

The repository's module replaces pip TensorFlow's through the overlay of
the tf_slurm_resolver package (pip_package/), which the package's `.pth`
switches on in every Python of .venv (tools/setup.sh installs this checkout
there with `pip install -e`). The first tests fail when the overlay is not
active, since pip TensorFlow ships a module of the same name. Over a
TensorFlow release it is not tested with, the overlay serves nothing and
says so once: checked on a stand-in TensorFlow of another version.
"""

import inspect
import os
import re
import shutil
import subprocess
import sys

from absl.testing import absltest
import tensorflow as tf

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tf_slurm import resolver as tf_slurm_resolver
from tf_slurm_resolver import overlay

# The repository root, found from this file (in Bazel, its runfiles copy).
_REPO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
_PACKAGE = 'tensorflow.python.distribute.cluster_resolver'
_RESOLVER = _PACKAGE + '.slurm_cluster_resolver'
_HOSTLIST = _PACKAGE + '.slurm_hostlist'
_REPO_MODULE = os.path.join(_REPO_ROOT, *_RESOLVER.split('.')) + '.py'


def _real(path):
  return os.path.realpath(path)


def _write(path, text):
  with open(path, 'w', encoding='utf-8') as f:
    f.write(text)


class OverlayTest(absltest.TestCase):

  def assertIsRepoFile(self, filename):
    self.assertIsNotNone(filename)
    self.assertEqual(_real(filename), _real(_REPO_MODULE))

  def testModuleImportedDirectly(self):
    self.assertIsRepoFile(inspect.getsourcefile(slurm_cluster_resolver))

  def testPublicApiV2IsTheCompanionsResolverOverTheCore(self):
    cls = tf.distribute.cluster_resolver.SlurmClusterResolver
    self.assertIs(cls, tf_slurm_resolver.SlurmClusterResolver)
    self.assertIs(cls.__bases__[0], slurm_cluster_resolver.SlurmClusterResolver)
    self.assertIsRepoFile(inspect.getsourcefile(cls.__bases__[0]))

  def testPublicApiV1IsTheCompanionsResolverToo(self):
    cls = tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver
    self.assertIs(cls, tf_slurm_resolver.SlurmClusterResolver)

  def testTensorFlowItselfComesFromPip(self):
    # The repository has no tensorflow/__init__.py: the package stays pip's.
    self.assertIsNotNone(tf.__file__)
    self.assertNotEqual(_real(os.path.dirname(tf.__file__)),
                        _real(os.path.join(_REPO_ROOT, 'tensorflow')))

  def testServesThisCheckoutsTree(self):
    # Files, not folders: Bazel's runfiles link each file to the checkout's.
    served = os.path.join(overlay.ROOT, *_RESOLVER.split('.')) + '.py'
    self.assertEqual(_real(served), _real(_REPO_MODULE))

  def testInstalledTensorFlowIsTestedAndPinned(self):
    with open(os.path.join(_REPO_ROOT, 'requirements.txt'),
              encoding='utf-8') as f:
      pin = re.search(r'^tensorflow(?:-cpu)?==(\S+)$', f.read(), re.M).group(1)
    self.assertTrue(overlay.is_tested(pin), pin)
    self.assertEqual(overlay.tensorflow_version(), pin)


class ReleaseGateTest(absltest.TestCase):

  def finder(self, version):
    return overlay._OverlayFinder(_REPO_ROOT, lambda: version)

  def testTestedReleaseIsServed(self):
    spec = self.finder('2.21.0').find_spec(_RESOLVER)
    self.assertEqual(_real(spec.origin), _real(_REPO_MODULE))

  def testOtherReleasesAreNotServed(self):
    for version in ('2.20.0', '2.22.0', '2.210.0', None):
      self.assertIsNone(self.finder(version).find_spec(_RESOLVER), version)

  def testModulesOutsideTheTreeAreLeftToTensorFlow(self):
    self.assertIsNone(self.finder('2.21.0').find_spec(
        'tensorflow.python.training.server_lib'))


# The stand-in TensorFlow: its __init__ imports its resolver module, as
# TensorFlow's does, and the program then reports which one it got.
_STAND_IN_INIT = (
    'from tensorflow.python.distribute.cluster_resolver import '
    'slurm_cluster_resolver\n')
_PROGRAM = '''\
import importlib, tensorflow
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
print('RESOLVER', slurm_cluster_resolver.WHO)
try:
  importlib.import_module(%r)
except ImportError:
  print('NO HOSTLIST')
''' % _HOSTLIST


class UntestedTensorFlowTest(absltest.TestCase):
  """A Python whose TensorFlow is 2.20.0, with this checkout's .pth."""

  def setUp(self):
    super().setUp()
    venv = self.create_tempdir('venv').full_path
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', venv],
                   check=True, timeout=120)
    self.python = os.path.join(venv, 'bin', 'python')
    site = subprocess.run(
        [self.python, '-c',
         'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
        check=True, capture_output=True, text=True).stdout.strip()
    package = os.path.join(site, *_RESOLVER.split('.')[:-1])
    os.makedirs(package)
    for folder, text in (('tensorflow', _STAND_IN_INIT),
                         ('tensorflow/python', ''),
                         ('tensorflow/python/distribute', ''),
                         ('tensorflow/python/distribute/cluster_resolver', '')):
      _write(os.path.join(site, folder, '__init__.py'), text)
    _write(os.path.join(package, 'slurm_cluster_resolver.py'),
           'WHO = "stand-in TensorFlow 2.20.0"\n')
    info = os.path.join(site, 'tensorflow-2.20.0.dist-info')
    os.mkdir(info)
    _write(os.path.join(info, 'METADATA'),
           'Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.20.0\n')
    _write(os.path.join(info, 'top_level.txt'), 'tensorflow\n')
    # This checkout's package, as the editable install puts it on the path,
    # and its .pth.
    pip_package = _real(os.path.join(_REPO_ROOT, 'pip_package'))
    _write(os.path.join(site, 'checkout.pth'), pip_package + '\n')
    shutil.copy(os.path.join(pip_package, 'tf_slurm_resolver.pth'), site)

  def testTensorFlowKeepsItsResolverAndIsToldOnce(self):
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    proc = subprocess.run([self.python, '-c', _PROGRAM], capture_output=True,
                          text=True, env=env, timeout=120, check=False,
                          cwd=self.create_tempdir('cwd').full_path)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.splitlines(),
                     ['RESOLVER stand-in TensorFlow 2.20.0', 'NO HOSTLIST'])
    self.assertEqual(
        proc.stderr.splitlines(),
        ['tf_slurm_resolver: TensorFlow 2.20.0 is not a release this '
         'SlurmClusterResolver is tested with (2.21): TensorFlow keeps its '
         'own.'])


if __name__ == '__main__':
  absltest.main()
