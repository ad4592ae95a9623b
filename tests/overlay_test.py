"""Checks that TensorFlow uses this repository's SlurmClusterResolver.

The repository's module replaces pip TensorFlow's through tf_overlay.py; this
test fails when that overlay is not active (e.g. run without sitecustomize.py
or conftest.py), since pip TensorFlow ships a module of the same name.
"""

import inspect
import os

from absl.testing import absltest
import tensorflow as tf

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

# The repository root, found from this file (in Bazel, its runfiles copy).
_REPO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
_REPO_MODULE = os.path.join(
    _REPO_ROOT, "tensorflow", "python", "distribute", "cluster_resolver",
    "slurm_cluster_resolver.py")


class OverlayTest(absltest.TestCase):

  def assertIsRepoFile(self, filename):
    self.assertIsNotNone(filename)
    self.assertEqual(os.path.realpath(filename), os.path.realpath(_REPO_MODULE))

  def testModuleImportedDirectly(self):
    self.assertIsRepoFile(inspect.getsourcefile(slurm_cluster_resolver))

  def testPublicApiV2(self):
    cls = tf.distribute.cluster_resolver.SlurmClusterResolver
    self.assertEqual(cls.__module__, slurm_cluster_resolver.__name__)
    self.assertIsRepoFile(inspect.getsourcefile(cls))
    self.assertIs(cls, slurm_cluster_resolver.SlurmClusterResolver)

  def testPublicApiV1(self):
    cls = tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver
    self.assertIsRepoFile(inspect.getsourcefile(cls))
    self.assertIs(cls, slurm_cluster_resolver.SlurmClusterResolver)

  def testTensorFlowItselfComesFromPip(self):
    # The repository has no tensorflow/__init__.py: the package stays pip's.
    self.assertIsNotNone(tf.__file__)
    self.assertNotEqual(
        os.path.realpath(os.path.dirname(tf.__file__)),
        os.path.realpath(os.path.join(_REPO_ROOT, "tensorflow")))


if __name__ == "__main__":
  absltest.main()
