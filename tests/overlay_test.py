"""The overlay: TensorFlow uses this repository's SlurmClusterResolver.

TensorFlow's API publishes the companion's resolver (tf_slurm: the core's
with the ranks of MPI launchers), a subclass of the tree's class, and the
companion's termination config (a TensorFlow `TerminationConfig` that saves
on Slurm's signals and requeues the job), which the tree does not have.

The repository's module replaces pip TensorFlow's through the overlay of
the tf_slurm_resolver package (pip_package/), which the package's `.pth`
switches on in every Python of .venv (tools/setup.sh installs this checkout
there with `pip install -e`). The first tests fail when the overlay is not
active, since pip TensorFlow ships a module of the same name. Over a
TensorFlow release it is not tested with, the overlay serves nothing and
says so once (checked on a stand-in TensorFlow of another version), unless
the user opts in for that release.
"""

import contextlib
import glob
import inspect
import io
import os
import re
import shutil
import subprocess
import sys
from unittest import mock

from absl.testing import absltest
import tensorflow as tf

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.failure_handling import failure_handling
from tf_slurm import resolver as tf_slurm_resolver
from tf_slurm import termination
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

  def testPublicTerminationConfigIsTheCompanionsOverTensorflows(self):
    for api in (tf, tf.compat.v2):
      cls = api.distribute.experimental.SlurmTerminationConfig
      self.assertIs(cls, termination.SlurmTerminationConfig)
    self.assertIs(cls.__bases__[0], failure_handling.TerminationConfig)
    self.assertIs(tf.distribute.experimental.TerminationConfig,
                  failure_handling.TerminationConfig)

  def testCompanionImportedBeforeTensorFlowIsWhatTheApiPublishes(self):
    program = ('from tf_slurm import termination\n'
               'import tensorflow as tf\n'
               'print(tf.distribute.experimental.SlurmTerminationConfig is '
               'termination.SlurmTerminationConfig)\n')
    proc = subprocess.run([sys.executable, '-c', program], capture_output=True,
                          text=True, check=False, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    self.assertEqual((proc.returncode, proc.stdout), (0, 'True\n'),
                     proc.stderr[-3000:])

  def testTensorFlowItselfComesFromPip(self):
    # The repository has no tensorflow/__init__.py: the package stays pip's.
    self.assertIsNotNone(tf.__file__)
    self.assertNotEqual(_real(os.path.dirname(tf.__file__)),
                        _real(os.path.join(_REPO_ROOT, 'tensorflow')))

  def testServesThisCheckoutsTree(self):
    # Files, not folders: Bazel's runfiles link each file to the checkout's.
    served = os.path.join(overlay.ROOT, *_RESOLVER.split('.')) + '.py'
    self.assertEqual(_real(served), _real(_REPO_MODULE))

  def testEveryPinnedReleaseIsTestedAndTheInstalledOneIsPinned(self):
    # requirements.txt pins .venv's; requirements-tfX.Y.txt each other venv's.
    pins = []
    for name in glob.glob(os.path.join(_REPO_ROOT, 'requirements*.txt')):
      with open(name, encoding='utf-8') as f:
        pins += re.findall(r'^tensorflow(?:-cpu)?==(\S+)$', f.read(), re.M)
    self.assertNotEmpty(pins)
    for pin in pins:
      self.assertTrue(overlay.is_tested(pin), pin)
    self.assertIn(overlay.tensorflow_version(), pins)


class ReleaseTest(absltest.TestCase):

  def testReleaseIsMajorMinorAsVendorsWriteVersions(self):
    for version, release in (('2.21.0', '2.21'), ('2.22.0rc0', '2.22'),
                             ('2.22.0-rc0', '2.22'), ('2.17.0+nv24.08', '2.17'),
                             ('2.15.0.post1', '2.15'), ('2.21', '2.21'),
                             ('2.210.0', '2.210'),
                             ('3.0.0.dev20270101', '3.0')):
      self.assertEqual(overlay.release(version), release, version)

  def testNoReleaseInAStringWithoutMajorMinor(self):
    for version in ('2', 'nightly', '', None):
      self.assertIsNone(overlay.release(version), version)


class ReleaseGateTest(absltest.TestCase):

  def finder(self, version):
    return overlay._OverlayFinder(_REPO_ROOT, lambda: version)

  def find_resolver(self, version, environ=None):
    """(spec, stderr) of the resolver module over TensorFlow `version`."""
    stderr = io.StringIO()
    with mock.patch.dict(os.environ, environ or {}, clear=True), \
        contextlib.redirect_stderr(stderr):
      finder = self.finder(version)
      spec = finder.find_spec(_RESOLVER)
      finder.find_spec(_HOSTLIST)  # Decided once: nothing more is said.
    return spec, stderr.getvalue()

  def testTestedReleasesAreServedSilently(self):
    for version in ('2.15.1', '2.17.0+nv24.08', '2.19.1', '2.21.0',
                    '2.22.0rc0', '2.22.0-rc0'):
      spec, stderr = self.find_resolver(version)
      self.assertEqual(_real(spec.origin), _real(_REPO_MODULE), version)
      self.assertEqual(stderr, '', version)

  def testOtherReleasesAreNotServedAndSaySoOnce(self):
    for version in ('2.14.1', '2.23.0rc0', '2.210.0', '3.0.0', None):
      spec, stderr = self.find_resolver(version)
      self.assertIsNone(spec, version)
      self.assertEqual(
          stderr, 'tf_slurm_resolver: TensorFlow %s is not a release this '
          'SlurmClusterResolver is tested with (2.15 to 2.22): TensorFlow '
          'keeps its own (TF_SLURM_RESOLVER_UNTESTED_RELEASE=%s serves it all '
          'the same).\n' % (version or '(version unknown)',
                            overlay.release(version) or 'X.Y'))

  def testOptedInUntestedReleaseIsServedAndSaysSoOnce(self):
    spec, stderr = self.find_resolver(
        '2.23.1', {'TF_SLURM_RESOLVER_UNTESTED_RELEASE': '2.23'})
    self.assertEqual(_real(spec.origin), _real(_REPO_MODULE))
    self.assertEqual(
        stderr, 'tf_slurm_resolver: TensorFlow 2.23.1 is not a release this '
        'SlurmClusterResolver is tested with (2.15 to 2.22): served all the '
        'same, as TF_SLURM_RESOLVER_UNTESTED_RELEASE=2.23 asks.\n')

  def testOptInForAnotherReleaseServesNothing(self):
    for opt_in in ('2.23', '2.24.0', '1'):
      spec, _ = self.find_resolver(
          '2.24.0', {'TF_SLURM_RESOLVER_UNTESTED_RELEASE': opt_in})
      self.assertIsNone(spec, opt_in)

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
  """A Python whose TensorFlow is 2.23.0, with this checkout's .pth."""

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
           'WHO = "stand-in TensorFlow 2.23.0"\n')
    info = os.path.join(site, 'tensorflow-2.23.0.dist-info')
    os.mkdir(info)
    _write(os.path.join(info, 'METADATA'),
           'Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.23.0\n')
    _write(os.path.join(info, 'top_level.txt'), 'tensorflow\n')
    # This checkout's package, as the editable install puts it on the path,
    # and its .pth.
    pip_package = _real(os.path.join(_REPO_ROOT, 'pip_package'))
    _write(os.path.join(site, 'checkout.pth'), pip_package + '\n')
    shutil.copy(os.path.join(pip_package, 'tf_slurm_resolver.pth'), site)

  def testTensorFlowKeepsItsResolverAndIsToldOnce(self):
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONPATH', overlay.OPT_IN)}
    proc = subprocess.run([self.python, '-c', _PROGRAM], capture_output=True,
                          text=True, env=env, timeout=120, check=False,
                          cwd=self.create_tempdir('cwd').full_path)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.splitlines(),
                     ['RESOLVER stand-in TensorFlow 2.23.0', 'NO HOSTLIST'])
    self.assertEqual(
        proc.stderr.splitlines(),
        ['tf_slurm_resolver: TensorFlow 2.23.0 is not a release this '
         'SlurmClusterResolver is tested with (2.15 to 2.22): TensorFlow '
         'keeps its own (TF_SLURM_RESOLVER_UNTESTED_RELEASE=2.23 serves it '
         'all the same).'])


if __name__ == '__main__':
  absltest.main()
