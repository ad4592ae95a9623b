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


# A new Python of this venv (its .pth installs the overlay) runs a program:
# its first lines (%s), then prints which SlurmClusterResolver TensorFlow
# serves, from which file.
_WHICH = """\
import inspect, sys
%s
import tensorflow as tf
cls = tf.distribute.cluster_resolver.SlurmClusterResolver
print('CLASS', cls.__module__, inspect.getsourcefile(cls))
"""
# The core's file the overlay serves (in Bazel, not the runfiles' link).
_SERVED_MODULE = os.path.join(overlay.ROOT, *_RESOLVER.split('.')) + '.py'
_CORE_NOT_COMPANION = (
    'tf.distribute.cluster_resolver.SlurmClusterResolver is the core\'s, '
    'without the companion\'s MPI launchers and scontrol, and '
    'tf.distribute.experimental has no SlurmTerminationConfig')


def _companion_module():
  """The companion's resolver module installed with the overlay."""
  return os.path.join(overlay.companion_dir(overlay.ROOT), 'resolver.py')


def _run_python(args, cwd, pythonpath=None):
  """A new Python of this venv runs `args` in `cwd`: the finished process."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
  env.pop(overlay.OPT_IN, None)
  if pythonpath:
    env['PYTHONPATH'] = os.pathsep.join(
        [pythonpath] + [p for p in [os.environ.get('PYTHONPATH')] if p])
  return subprocess.run([sys.executable] + args, capture_output=True,
                        text=True, check=False, timeout=300, cwd=cwd, env=env)


def _said(proc):
  """The lines the overlay wrote on stderr."""
  return [l for l in proc.stderr.splitlines()
          if l.startswith('tf_slurm_resolver:')]


class ImportTensorFlowAlwaysWorksTest(absltest.TestCase):
  """Whatever goes wrong in the overlay, `import tensorflow` works.

  At worst TensorFlow serves its own resolver, and the overlay says once
  why, and what to do.
  """

  def which(self, setup='', cwd=None, pythonpath=None):
    """(module, file) of the class TensorFlow serves, and what was said."""
    proc = _run_python(['-c', _WHICH % setup],
                       cwd or self.create_tempdir().full_path, pythonpath)
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    self.assertNotIn('Traceback', proc.stderr)
    lines = [l for l in proc.stdout.splitlines() if l.startswith('CLASS ')]
    self.assertLen(lines, 1, proc.stdout)
    _, module, filename = lines[0].split(' ', 2)
    return module, _real(filename), _said(proc)

  def testUserFolderNamedTfSlurmLeavesTheCoreServedAndSaysSo(self):
    cwd = self.create_tempdir().full_path
    user = os.path.join(cwd, 'tf_slurm')
    os.mkdir(user)
    _write(os.path.join(user, '__init__.py'), '')
    _write(os.path.join(user, 'resolver.py'), '"""The user\'s own."""\n')
    module, filename, said = self.which(cwd=cwd)
    self.assertEqual((module, filename), (_RESOLVER, _real(_REPO_MODULE)))
    self.assertEqual(said, [
        'tf_slurm_resolver: the tf_slurm on sys.path is %s, not the '
        'companion installed with tf-slurm-resolver (%s): %s; rename or move '
        'that tf_slurm, or run from another folder.' %
        (_real(user), overlay.companion_dir(overlay.ROOT),
         _CORE_NOT_COMPANION)])

  def testCompanionThatFailsToImportLeavesTheCoreServedAndSaysSo(self):
    module, filename, said = self.which(
        "sys.modules['tf_slurm.launchers'] = None  # It fails to import.")
    self.assertEqual((module, filename), (_RESOLVER, _real(_REPO_MODULE)))
    self.assertEqual(said, [
        'tf_slurm_resolver: the companion tf_slurm (%s) failed to import '
        '(ModuleNotFoundError: import of tf_slurm.launchers halted; None in '
        'sys.modules): %s; fix that error or reinstall tf-slurm-resolver.' %
        (overlay.companion_dir(overlay.ROOT), _CORE_NOT_COMPANION)])

  def testCoreThatFailsToImportLeavesTensorFlowsOwnAndSaysSo(self):
    step = _PACKAGE + '.slurm_step'
    module, filename, said = self.which(
        'sys.modules[%r] = None  # It fails to import.' % step)
    self.assertEqual(module, _RESOLVER)
    self.assertNotEqual(filename, _real(_REPO_MODULE))
    self.assertEqual(said, [
        'tf_slurm_resolver: %s (%s) failed to import (ModuleNotFoundError: '
        'import of %s halted; None in sys.modules): TensorFlow keeps its own '
        'SlurmClusterResolver; fix that error or reinstall '
        'tf-slurm-resolver.' % (_RESOLVER, _SERVED_MODULE, step)])

  def testDistributionWithNonUtf8MetadataIsLeftAlone(self):
    folder = self.create_tempdir().full_path
    info = os.path.join(folder, 'latin1_project-1.0.dist-info')
    os.mkdir(info)
    with open(os.path.join(info, 'METADATA'), 'wb') as f:
      f.write(b'Metadata-Version: 2.1\nName: latin1-project\nVersion: 1.0\n'
              b'Author: Jos\xe9\n')
    _write(os.path.join(info, 'top_level.txt'), 'latin1_project\n')
    module, filename, said = self.which(pythonpath=folder)
    self.assertEqual(module, 'tf_slurm.resolver')
    self.assertEqual(filename, _real(_companion_module()))
    self.assertEqual(said, [])


class CheckCommandTest(absltest.TestCase):
  """`python -m tf_slurm_resolver`: which resolver TensorFlow serves here."""

  def check(self, setup=None):
    """(exit status, first line, {field: value}, the rest, what was said)."""
    if setup is None:
      args = ['-m', 'tf_slurm_resolver']
    else:
      args = ['-c', setup + '\nimport runpy\nsys.argv = ["tf_slurm_resolver"]'
              '\nrunpy.run_module("tf_slurm_resolver", run_name="__main__", '
              'alter_sys=True)\n']
    proc = _run_python(args, self.create_tempdir().full_path)
    self.assertNotIn('Traceback', proc.stderr)
    lines = proc.stdout.splitlines()
    self.assertNotEmpty(lines, proc.stderr[-3000:])
    fields = dict(l.strip().split(': ', 1) for l in lines[1:]
                  if l.startswith('  '))
    rest = [l for l in lines[1:] if not l.startswith('  ')]
    return proc.returncode, lines[0], fields, rest, _said(proc)

  def testSaysTheCompanionsResolverIsServed(self):
    status, headline, fields, rest, said = self.check()
    self.assertEqual((status, rest, said), (0, [], []))
    self.assertEqual(
        headline, 'tf.distribute.cluster_resolver.SlurmClusterResolver is '
        'tf-slurm-resolver\'s: its companion\'s, over its core.')
    self.assertEqual(fields['class'], 'tf_slurm.resolver.SlurmClusterResolver')
    self.assertEqual(_real(fields['file']), _real(_companion_module()))
    self.assertEqual(_real(fields['core']), _real(_REPO_MODULE))
    self.assertEqual(fields['TensorFlow'].split(', ')[0],
                     overlay.tensorflow_version())

  def testNamesAFailedCompanionAndExitsNonZero(self):
    status, headline, fields, rest, said = self.check(
        "import sys\nsys.modules['tf_slurm.launchers'] = None")
    self.assertEqual(status, 1)
    self.assertEqual(
        headline, 'tf.distribute.cluster_resolver.SlurmClusterResolver is '
        'tf-slurm-resolver\'s core, without its companion.')
    self.assertEqual(fields['class'], _RESOLVER + '.SlurmClusterResolver')
    self.assertEqual(_real(fields['file']), _real(_REPO_MODULE))
    self.assertLen(said, 1)
    self.assertEqual(rest, ['Why: ' + said[0][len('tf_slurm_resolver: '):]])

  def testHelpAnswersWithoutImportingTensorFlow(self):
    program = ('import runpy, sys\n'
               'sys.argv = ["tf_slurm_resolver", "--help"]\n'
               'try:\n'
               '  runpy.run_module("tf_slurm_resolver", run_name="__main__",'
               ' alter_sys=True)\n'
               'except SystemExit as e:\n'
               '  print("EXIT", e.code, "tensorflow" in sys.modules)\n')
    proc = _run_python(['-c', program], self.create_tempdir().full_path)
    self.assertEqual(proc.stderr, '')
    self.assertIn('usage: python -m tf_slurm_resolver', proc.stdout)
    self.assertEqual(proc.stdout.splitlines()[-1], 'EXIT 0 False')


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
# TensorFlow's does, and publishes its class; the program then reports which
# module it got.
_STAND_IN_INIT = '''\
import types
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
distribute = types.SimpleNamespace(cluster_resolver=types.SimpleNamespace(
    SlurmClusterResolver=slurm_cluster_resolver.SlurmClusterResolver))
'''
_STAND_IN_RESOLVER = '''\
WHO = "stand-in TensorFlow"
class SlurmClusterResolver:
  pass
'''
_PROGRAM = '''\
import importlib, tensorflow
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
print('RESOLVER', slurm_cluster_resolver.WHO)
try:
  importlib.import_module(%r)
except ImportError:
  print('NO HOSTLIST')
''' % _HOSTLIST


class StandInTensorFlowTestCase(absltest.TestCase):
  """A Python with a stand-in TensorFlow and this checkout's .pth."""

  # The stand-in's version, and what follows it in its METADATA.
  VERSION = '2.23.0'
  METADATA_END = b''

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
           _STAND_IN_RESOLVER)
    self.info = os.path.join(site, 'tensorflow-%s.dist-info' % self.VERSION)
    os.mkdir(self.info)
    with open(os.path.join(self.info, 'METADATA'), 'wb') as f:
      f.write(b'Metadata-Version: 2.1\nName: tensorflow\nVersion: %s\n%s' %
              (self.VERSION.encode(), self.METADATA_END))
    _write(os.path.join(self.info, 'top_level.txt'), 'tensorflow\n')
    # This checkout's package, as the editable install puts it on the path,
    # and its .pth.
    pip_package = _real(os.path.join(_REPO_ROOT, 'pip_package'))
    _write(os.path.join(site, 'checkout.pth'), pip_package + '\n')
    shutil.copy(os.path.join(pip_package, 'tf_slurm_resolver.pth'), site)

  def run_python(self, args):
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONPATH', overlay.OPT_IN)}
    return subprocess.run([self.python] + args, capture_output=True,
                          text=True, env=env, timeout=120, check=False,
                          cwd=self.create_tempdir('cwd').full_path)


class UntestedTensorFlowTest(StandInTensorFlowTestCase):
  """A Python whose TensorFlow is 2.23.0, with this checkout's .pth."""

  _NOTICE = ('tf_slurm_resolver: TensorFlow 2.23.0 is not a release this '
             'SlurmClusterResolver is tested with (2.15 to 2.22): TensorFlow '
             'keeps its own (TF_SLURM_RESOLVER_UNTESTED_RELEASE=2.23 serves '
             'it all the same).')

  def testTensorFlowKeepsItsResolverAndIsToldOnce(self):
    proc = self.run_python(['-c', _PROGRAM])
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.splitlines(),
                     ['RESOLVER stand-in TensorFlow', 'NO HOSTLIST'])
    self.assertEqual(proc.stderr.splitlines(), [self._NOTICE])

  def testCheckCommandSaysTensorFlowKeepsItsOwnAndWhy(self):
    proc = self.run_python(['-m', 'tf_slurm_resolver'])
    self.assertEqual(proc.returncode, 1, proc.stderr)
    self.assertEqual(proc.stderr.splitlines(), [self._NOTICE])
    lines = proc.stdout.splitlines()
    self.assertEqual(
        lines[0], 'tf.distribute.cluster_resolver.SlurmClusterResolver is '
        'TensorFlow\'s own, not tf-slurm-resolver\'s.')
    self.assertIn('  TensorFlow: 2.23.0, %s' % os.path.join(
        os.path.dirname(self.info), 'tensorflow'), lines)
    self.assertEqual(lines[-1],
                     'Why: ' + self._NOTICE[len('tf_slurm_resolver: '):])


class UnreadableTensorFlowMetadataTest(StandInTensorFlowTestCase):
  """A Python whose TensorFlow's METADATA is not UTF-8."""

  VERSION = '2.21.0'
  METADATA_END = b'Author: Jos\xe9\n'  # Latin-1.

  def testTensorFlowKeepsItsResolverAndIsToldWhy(self):
    proc = self.run_python(['-c', _PROGRAM])
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.splitlines(),
                     ['RESOLVER stand-in TensorFlow', 'NO HOSTLIST'])
    self.assertEqual(proc.stderr.splitlines(), [
        'tf_slurm_resolver: the version of TensorFlow cannot be read from '
        '%s (UnicodeDecodeError: \'utf-8\' codec can\'t decode byte 0xe9 in '
        'position 66: invalid continuation byte): TensorFlow keeps its own '
        'SlurmClusterResolver; repair or reinstall that distribution.' %
        os.path.join(self.info, 'METADATA')])

if __name__ == '__main__':
  absltest.main()
