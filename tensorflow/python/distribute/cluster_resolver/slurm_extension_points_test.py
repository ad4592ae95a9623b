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
"""SlurmClusterResolver's extension points: TF 2.x's `_resolve_*` methods."""

import os

from absl.testing import absltest

from tensorflow.python.distribute.cluster_resolver import slurm_resolver_test_util
from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import SlurmClusterResolver


class ExtensionPointTest(slurm_resolver_test_util.ResolverTestCase):
  """Subclasses overriding TF 2.x's `_resolve_*` methods change the result."""

  def setUp(self):
    super().setUp()
    self.use_env(
        dict(slurm_test_util.TF_TEST_ENV, SLURM_STEP_TASKS_PER_NODE='1(x3)'))

  def testOverriddenOwnRankChoosesTheTask(self):

    class LastRank(SlurmClusterResolver):

      def _resolve_own_rank(self):
        return 2

    resolver = LastRank(auto_set_gpu=False)
    self.assertEqual(('worker', 2), resolver.get_task_info())
    self.assertEqual('grpc://t02n43:8888', resolver.master())

  def testOverriddenNumTasksSetsTheDefaultWorkerCount(self):

    class TwoTasks(SlurmClusterResolver):

      def _resolve_num_tasks(self):
        return 2

    with self.assertRaisesRegex(RuntimeError, r'Requested 2 tasks'):
      TwoTasks(auto_set_gpu=False)

  def testOverriddenHostlistNamesTheNodes(self):

    class OtherHosts(SlurmClusterResolver):

      def _resolve_hostlist(self):
        return ['a1', 'a2', 'a3']

    for tasks_per_node in (None, 1):
      resolver = OtherHosts(tasks_per_node=tasks_per_node, auto_set_gpu=False)
      self.assertEqual({'worker': ['a1:8888', 'a2:8888', 'a3:8888']},
                       resolver.cluster_spec().as_dict())

  def testOverriddenTaskConfigurationLaysOutTheTasks(self):

    class TwoNodes(SlurmClusterResolver):

      def _resolve_task_configuration(self):
        return {'x1': 2, 'x2': 1}

    resolver = TwoNodes(auto_set_gpu=False)
    self.assertEqual({'worker': ['x1:8888', 'x1:8889', 'x2:8888']},
                     resolver.cluster_spec().as_dict())

  def testSubclassOverridingEveryMethodNeedsNoSlurmVariables(self):

    class NotSlurm(SlurmClusterResolver):
      """A step of its own: rank 1 of two tasks, one on h1, one on h2."""

      def _resolve_own_rank(self):
        return 1

      def _resolve_num_tasks(self):
        return 2

      def _resolve_hostlist(self):
        return ['h1', 'h2']

      def _resolve_task_configuration(self):
        return {'h1': 1, 'h2': 1}

    os.environ.clear()
    resolver = NotSlurm(gpus_per_node=0)
    self.assertEqual({'worker': ['h1:8888', 'h2:8888']},
                     resolver.cluster_spec().as_dict())
    self.assertEqual(('worker', 1), resolver.get_task_info())

  def testHostsThatAreTheSameAsTextAreValueError(self):

    class SameText(SlurmClusterResolver):

      def _resolve_task_configuration(self):
        return {1: 1, '1': 1}

      def _resolve_own_rank(self):
        return 0

      def _resolve_num_tasks(self):
        return 2

    with self.assertRaisesRegex(
        ValueError, r"the task configuration: hosts \[1, '1'\] include names "
        r'that are the same as text'):
      SameText(gpus_per_node=0)


if __name__ == '__main__':
  absltest.main()
