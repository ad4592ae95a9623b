# Copyright 2020 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Tests for SlurmClusterResolver."""

import os
import re
import subprocess

from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import expand_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import expand_tasks_per_node
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import SlurmClusterResolver
from tensorflow.python.platform import test
from tensorflow.python.training import server_lib
from tensorflow.python.util import tf_export

mock = test.mock


class SlurmClusterResolverTest(test.TestCase):

  def setUp(self):
    super().setUp()
    # TF's cases below set some Slurm variables on top of the environment;
    # others that a Slurm task has (SLURMD_NODENAME, SLURM_DISTRIBUTION, GPU
    # lists) would be read too, so none is left for them.
    self.enter_context(mock.patch.dict(os.environ))
    for name in list(os.environ):
      if name.startswith(('SLURM', 'CUDA_VISIBLE_DEVICES',
                          'GPU_DEVICE_ORDINAL')):
        del os.environ[name]

  def test_expand_hostlist(self):
    self.assertEqual(expand_hostlist('n1'), ['n1'])
    self.assertEqual(expand_hostlist('n[1,3]'), ['n1', 'n3'])
    self.assertEqual(expand_hostlist('n[1-3]'), ['n1', 'n2', 'n3'])
    self.assertEqual(
        expand_hostlist('n[1-2],m5,o[3-4,6,7-9]'),
        ['n1', 'n2', 'm5', 'o3', 'o4', 'o6', 'o7', 'o8', 'o9'])
    self.assertEqual(
        expand_hostlist('n[0001-0003],m5,o[009-011]'),
        ['n0001', 'n0002', 'n0003', 'm5', 'o009', 'o010', 'o011'])

  def test_expand_tasks_per_node(self):
    self.assertEqual(expand_tasks_per_node('2'), [2])
    self.assertEqual(expand_tasks_per_node('2,1,3'), [2, 1, 3])
    self.assertEqual(expand_tasks_per_node('3(x2),2,1'), [3, 3, 2, 1])
    self.assertEqual(
        expand_tasks_per_node('3(x2),2,11(x4)'), [3, 3, 2, 11, 11, 11, 11])
    self.assertEqual(
        expand_tasks_per_node('13(x10)'),
        [13, 13, 13, 13, 13, 13, 13, 13, 13, 13])

  def _verifyClusterSpecEquality(self, cluster_spec, expected_proto):
    self.assertProtoEquals(expected_proto, cluster_spec.as_cluster_def())
    self.assertProtoEquals(
        expected_proto,
        server_lib.ClusterSpec(cluster_spec).as_cluster_def())
    self.assertProtoEquals(
        expected_proto,
        server_lib.ClusterSpec(cluster_spec.as_cluster_def()).as_cluster_def())
    self.assertProtoEquals(
        expected_proto,
        server_lib.ClusterSpec(cluster_spec.as_dict()).as_cluster_def())

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '0',
          'SLURM_STEP_NUM_TASKS': '3',
          'SLURM_STEP_TASKS_PER_NODE': '1(x3)',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
          'CUDA_VISIBLE_DEVICES': '0',
      })
  def testSimpleRetrievalFromEnv(self):
    slurm_cluster_resolver = SlurmClusterResolver()

    actual_cluster_spec = slurm_cluster_resolver.cluster_spec()
    expected_proto = """
    job { name: 'worker' tasks { key: 0 value: 't02n13:8888' }
                         tasks { key: 1 value: 't02n41:8888' }
                         tasks { key: 2 value: 't02n43:8888' } }
    """
    self._verifyClusterSpecEquality(actual_cluster_spec, expected_proto)
    self.assertEqual(
        slurm_cluster_resolver.master('worker', 0, rpc_layer='grpc'),
        'grpc://t02n13:8888')
    self.assertEqual(slurm_cluster_resolver.num_accelerators(), {'GPU': 1})
    self.assertEqual(os.environ['CUDA_VISIBLE_DEVICES'], '0')

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '0',
          'SLURM_STEP_NUM_TASKS': '3',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
      })
  def testSimpleSuccessfulRetrieval(self):
    slurm_cluster_resolver = SlurmClusterResolver(
        jobs={
            'ps': 1,
            'worker': 2
        },
        port_base=8888,
        tasks_per_node=1,
        gpus_per_node=1,
        gpus_per_task=1,
        auto_set_gpu=False)

    actual_cluster_spec = slurm_cluster_resolver.cluster_spec()
    expected_proto = """
    job { name: 'ps' tasks { value: 't02n13:8888' } }
    job { name: 'worker' tasks { key: 0 value: 't02n41:8888' }
                         tasks { key: 1 value: 't02n43:8888' } }
    """
    self._verifyClusterSpecEquality(actual_cluster_spec, expected_proto)

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '0',
          'SLURM_STEP_NUM_TASKS': '3',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
      })
  def testSimpleMasterRetrieval(self):
    slurm_cluster_resolver = SlurmClusterResolver(
        jobs={
            'ps': 1,
            'worker': 2
        },
        port_base=8888,
        tasks_per_node=1,
        gpus_per_node=1,
        gpus_per_task=1,
        auto_set_gpu=False)

    slurm_cluster_resolver.task_type = 'worker'
    slurm_cluster_resolver.task_id = 1
    self.assertEqual(slurm_cluster_resolver.master(), 'grpc://t02n43:8888')

    slurm_cluster_resolver.rpc_layer = 'ab'
    self.assertEqual(slurm_cluster_resolver.master('ps', 0), 'ab://t02n13:8888')
    self.assertEqual(
        slurm_cluster_resolver.master('ps', 0, rpc_layer='test'),
        'test://t02n13:8888')

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '0',
          'SLURM_STEP_NUM_TASKS': '3',
          'SLURM_STEP_TASKS_PER_NODE': '1(x3)',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
      })
  def testTaskPerNodeNotSetRetrieval(self):
    slurm_cluster_resolver = SlurmClusterResolver(
        jobs={
            'ps': 1,
            'worker': 2
        },
        port_base=8888,
        gpus_per_node=1,
        gpus_per_task=1,
        auto_set_gpu=False)

    actual_cluster_spec = slurm_cluster_resolver.cluster_spec()
    expected_proto = """
    job { name: 'ps' tasks { value: 't02n13:8888' } }
    job { name: 'worker' tasks { key: 0 value: 't02n41:8888' }
                         tasks { key: 1 value: 't02n43:8888' } }
    """
    self._verifyClusterSpecEquality(actual_cluster_spec, expected_proto)

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '1',
          'SLURM_STEP_NUM_TASKS': '5',
          'SLURM_STEP_TASKS_PER_NODE': '2(x2),1',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
          # Changed from '': that hides every GPU, and gpus_per_node=2 cannot
          # make hidden GPUs visible (a RuntimeError now); Slurm's list is 0,1.
          'CUDA_VISIBLE_DEVICES': '0,1',
      })
  def testMultiTaskPerNodeRetrieval(self):
    slurm_cluster_resolver = SlurmClusterResolver(
        jobs={
            'ps': 1,
            'worker': 4
        },
        port_base=8888,
        gpus_per_node=2,
        gpus_per_task=1,
        auto_set_gpu=True)

    actual_cluster_spec = slurm_cluster_resolver.cluster_spec()
    expected_proto = """
    job { name: 'ps' tasks { value: 't02n13:8888' } }
    job { name: 'worker' tasks { key: 0 value: 't02n13:8889' }
                         tasks { key: 1 value: 't02n41:8888' }
                         tasks { key: 2 value: 't02n41:8889' }
                         tasks { key: 3 value: 't02n43:8888' } }
    """

    self._verifyClusterSpecEquality(actual_cluster_spec, expected_proto)
    assert os.environ['CUDA_VISIBLE_DEVICES'] == '1'

  @mock.patch.dict(
      os.environ, {
          'SLURM_PROCID': '1',
          'SLURM_STEP_NUM_TASKS': '5',
          'SLURM_STEP_TASKS_PER_NODE': '2(x2),1',
          'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
          # Changed from '': that hides every GPU, and gpus_per_node=4 cannot
          # make hidden GPUs visible (a RuntimeError now); Slurm's list is
          # 0,1,2,3.
          'CUDA_VISIBLE_DEVICES': '0,1,2,3',
      })
  def testMultipleGpusPerTaskRetrieval(self):
    slurm_cluster_resolver = SlurmClusterResolver(
        jobs={
            'ps': 1,
            'worker': 4
        },
        port_base=8888,
        gpus_per_node=4,
        gpus_per_task=2,
        auto_set_gpu=True)

    actual_cluster_spec = slurm_cluster_resolver.cluster_spec()
    expected_proto = """
    job { name: 'ps' tasks { value: 't02n13:8888' } }
    job { name: 'worker' tasks { key: 0 value: 't02n13:8889' }
                         tasks { key: 1 value: 't02n41:8888' }
                         tasks { key: 2 value: 't02n41:8889' }
                         tasks { key: 3 value: 't02n43:8888' } }
    """

    self._verifyClusterSpecEquality(actual_cluster_spec, expected_proto)
    assert os.environ['CUDA_VISIBLE_DEVICES'] == '2,3'


_THREE_NODE_STEP = {
    'SLURM_PROCID': '0',
    'SLURM_STEP_NUM_TASKS': '3',
    'SLURM_STEP_TASKS_PER_NODE': '1(x3)',
    'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
}


class ExtensionPointTest(slurm_test_util.ResolverTestCase):
  """Subclasses overriding TF 2.x's `_resolve_*` methods change the result."""

  def setUp(self):
    super().setUp()
    self.use_env(_THREE_NODE_STEP)

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


class StepLayoutTest(slurm_test_util.ResolverTestCase):
  """Rank -> node for every Slurm task distribution, checked against Slurm."""

  def testNodeOrderFollowsNodelistNotStringSort(self):
    self.use_env(slurm_test_util.step_env('n[9-10]', '1(x2)', 'n9 n10', 0))
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n9:8888', 'n10:8888'], resolver)
    self.assertEqual('grpc://n9:8888', resolver.master())

  def testCyclicDistributionPutsRank1OnSecondNode(self):
    # srun -n5 -N2 -m cyclic (as recorded on Slurm 22.05).
    self.use_env(
        slurm_test_util.step_env('n[1-2]', '4,1', 'n1 n2 n1 n1 n1', 1,
                  SLURM_DISTRIBUTION='cyclic'))
    resolver = SlurmClusterResolver()
    self.assertEqual(('worker', 1), resolver.get_task_info())
    self.assertEqual('grpc://n2:8888', resolver.master())

  @parameterized.named_parameters(
      ('_default_is_block', {}) + slurm_test_util.N2_N5_BLOCK,
      ('_block', {
          'SLURM_DISTRIBUTION': 'block'
      }) + slurm_test_util.N2_N5_BLOCK,
      ('_block_cyclic_is_block_across_nodes', {
          'SLURM_DISTRIBUTION': 'block:cyclic'
      }) + slurm_test_util.N2_N5_BLOCK,
      ('_cyclic', {
          'SLURM_DISTRIBUTION': 'cyclic'
      }) + slurm_test_util.N2_N5_CYCLIC,
      ('_cyclic_block_is_cyclic_across_nodes', {
          'SLURM_DISTRIBUTION': 'cyclic:block'
      }) + slurm_test_util.N2_N5_CYCLIC,
      ('_cyclic_three_levels', {
          'SLURM_DISTRIBUTION': 'cyclic:cyclic:fcyclic'
      }, 'n[1-2]', '2(x2)', 'n1 n2 n1 n2',
       ['n1:8888', 'n2:8888', 'n1:8889', 'n2:8889']),
      # srun -n6 -N2 -m plane=2 (as recorded on Slurm 22.05).
      ('_plane_2', {
          'SLURM_DISTRIBUTION': 'plane',
          'SLURM_DIST_PLANESIZE': '2'
      }, 'n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1',
       ['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889', 'n1:8890', 'n1:8891']),
      # srun -N4 -n10 (as recorded on Slurm 22.05).
      ('_block_N4_n10', {}, 'n[1-4]', '4(x2),1(x2)',
       'n1 n1 n1 n1 n2 n2 n2 n2 n3 n4', [
           'n1:8888', 'n1:8889', 'n1:8890', 'n1:8891', 'n2:8888', 'n2:8889',
           'n2:8890', 'n2:8891', 'n3:8888', 'n4:8888'
       ]),
  )
  def testEveryTaskResolvesTheSameSpecAndItsOwnNode(self, overrides, nodelist,
                                                    tasks_per_node, rank_hosts,
                                                    expected):
    for rank, address in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(
            slurm_test_util.step_env(nodelist, tasks_per_node, rank_hosts, rank,
                                     **overrides))
        resolver = SlurmClusterResolver()
        self.assertWorkers(expected, resolver)
        self.assertEqual('grpc://' + address, resolver.master())

  @parameterized.named_parameters(
      ('_one_host_a_line', 'n2\nn1\nn2\nn1\nn1\n'),
      ('_hostlists_and_comments', '# ranks 0-3\nn2,n1 n[2,1]\nn1  # rank 4\n'),
      ('_extra_lines_unused', 'n2\nn1\nn2\nn1\nn1\nn2\nn2\n'),
  )
  def testArbitraryDistributionFollowsHostfile(self, content):
    # SLURM_HOSTFILE=<n2,n1,n2,n1,n1> srun -n5 -m arbitrary
    # (as recorded on Slurm 22.05).
    hostfile = self.create_tempfile(content=content).full_path
    expected = ['n2:8888', 'n1:8888', 'n2:8889', 'n1:8889', 'n1:8890']
    for rank, address in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(
            slurm_test_util.step_env('n[1-2]', '3,2', 'n2 n1 n2 n1 n1', rank,
                      node_ids='n1 n2', SLURM_DISTRIBUTION='arbitrary',
                      SLURM_HOSTFILE=hostfile))
        resolver = SlurmClusterResolver()
        self.assertWorkers(expected, resolver)
        self.assertEqual('grpc://' + address, resolver.master())

  @parameterized.named_parameters(
      ('_slurm_22_05', {
          'SLURM_HET_SIZE': '2',
          'SLURM_PACK_SIZE': '2',
          'SLURM_JOB_NODELIST_PACK_GROUP_0': 'n3',
          'SLURM_JOB_NODELIST_PACK_GROUP_1': 'n1'
      }),
      ('_pack_names_only', {
          'SLURM_PACK_SIZE': '2',
          'SLURM_JOB_NODELIST_PACK_GROUP_0': 'n3',
          'SLURM_JOB_NODELIST_PACK_GROUP_1': 'n1'
      }),
      ('_het_names_only', {
          'SLURM_HET_SIZE': '2',
          'SLURM_JOB_NODELIST_HET_GROUP_0': 'n3',
          'SLURM_JOB_NODELIST_HET_GROUP_1': 'n1'
      }),
  )
  def testHeterogeneousStepNumbersRanksByComponent(self, het_variables):
    # srun -w n3 -n2 : -w n1 -n1: the step node list is sorted (n[1,3], tasks
    # 1,2), but ranks 0-1 run on n3 (SLURM_NODEID 0) and rank 2 on n1.
    expected = ['n3:8888', 'n3:8889', 'n1:8888']
    for rank, address in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(
            slurm_test_util.step_env('n[1,3]',
                                     '1,2',
                                     'n3 n3 n1',
                                     rank,
                                     node_ids='n3 n1',
                                     SLURM_DISTRIBUTION='block',
                                     **het_variables))
        resolver = SlurmClusterResolver()
        self.assertWorkers(expected, resolver)
        self.assertEqual('grpc://' + address, resolver.master())

  def testRealHeterogeneousStep(self):
    # srun -N1 -n1 : -N2 -n3 (as recorded on Slurm 22.05).
    self.use_env(
        slurm_test_util.step_env('n[1-3]', '1,2,1', 'n1 n2 n2 n3', 2,
                  SLURM_DISTRIBUTION='block', SLURM_HET_SIZE='2',
                  SLURM_PACK_SIZE='2', SLURM_JOB_NODELIST_PACK_GROUP_0='n1',
                  SLURM_JOB_NODELIST_PACK_GROUP_1='n[2-3]'))
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n1:8888', 'n2:8888', 'n2:8889', 'n3:8888'], resolver)
    self.assertEqual('grpc://n2:8889', resolver.master())

  @parameterized.named_parameters(
      ('_node_name', 'SLURMD_NODENAME', 'n2',
       r"SLURMD_NODENAME: Slurm says 'n2', derived 'n1'"),
      ('_node_id', 'SLURM_NODEID', '1',
       r"SLURM_NODEID: Slurm says '1', derived '0'"),
      ('_local_id', 'SLURM_LOCALID', '0',
       r"SLURM_LOCALID: Slurm says '0', derived '1'"),
      ('_global_task_ids', 'SLURM_GTIDS', '1,3',
       r"SLURM_GTIDS: Slurm says '1,3', derived '0,1'"),
  )
  def testLayoutContradictingTaskVariablesIsErrorShowingBoth(
      self, name, value, regex):
    self.use_env(
        slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1,
                                 **{name: value}))
    self.assertResolverFails(RuntimeError, regex)

  def testCyclicStepWithoutSlurmDistributionIsErrorNotWrongSpec(self):
    # The truth says cyclic, the variables say block: rank 1 is on n2.
    self.use_env(slurm_test_util.step_env('n[1-2]', '4,1', 'n1 n2 n1 n1 n1', 1))
    self.assertResolverFails(
        RuntimeError, r"SLURMD_NODENAME: Slurm says 'n2', derived 'n1'")

  def testHeterogeneousStepContradictingNodeIdIsError(self):
    self.use_env(
        slurm_test_util.step_env('n[1,3]',
                                 '1,2',
                                 'n3 n3 n1',
                                 0,
                                 SLURM_NODEID='1',
                                 SLURM_HET_SIZE='2',
                                 SLURM_JOB_NODELIST_PACK_GROUP_0='n3',
                                 SLURM_JOB_NODELIST_PACK_GROUP_1='n1'))
    self.assertResolverFails(RuntimeError,
                             r"SLURM_NODEID: Slurm says '1', derived '0'")

  def testNamesWithSuffixesAndUnevenTasks(self):
    # srun -p mixed -N5 -n7 (as recorded on Slurm 22.05).
    self.use_env(
        slurm_test_util.step_env('c[09-11],gpu1-ib,gpu2-ib', '3,1(x4)',
                  'c09 c09 c09 c10 c11 gpu1-ib gpu2-ib', 5))
    resolver = SlurmClusterResolver()
    self.assertWorkers([
        'c09:8888', 'c09:8889', 'c09:8890', 'c10:8888', 'c11:8888',
        'gpu1-ib:8888', 'gpu2-ib:8888'
    ], resolver)
    self.assertEqual(('worker', 5), resolver.get_task_info())

  def testStepSmallerThanItsJobUsesStepVariables(self):
    # srun -N1 -n1 inside sbatch -N2 --ntasks-per-node=2
    # (as recorded on Slurm 22.05).
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '1',
                                 'n1',
                                 0,
                                 SLURM_JOB_NODELIST='n[1-2]',
                                 SLURM_NODELIST='n[1-2]',
                                 SLURM_NTASKS_PER_NODE='2',
                                 SLURM_JOB_CPUS_PER_NODE='2(x2)'))
    self.assertWorkers(['n1:8888'], SlurmClusterResolver())

  def testBatchScriptUsesJobVariables(self):
    self.use_env(slurm_test_util.BATCH_ENV)
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'], resolver)
    self.assertEqual(('worker', 0), resolver.get_task_info())
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())
    self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])

  def testSallocShellIsErrorSayingToUseSrun(self):
    self.use_env(slurm_test_util.SALLOC_ENV)
    self.assertResolverFails(RuntimeError, r'SLURM_PROCID is not set.*srun')


class HeterogeneousNumberingTest(slurm_test_util.ResolverTestCase):
  """Heterogeneous steps number tasks node by node, in component order."""

  # srun -w n9 -n1 : -w n10,n11 -N2 -n4 -m cyclic, as Slurm ran it: component
  # 1 deals ranks 1-4 over n10, n11 cyclically (3 and 1 tasks).
  _RANK_HOSTS = 'n9 n10 n11 n10 n10'

  def _env(self, rank):
    return slurm_test_util.step_env('n[9-11]',
                                    '1,3,1',
                                    self._RANK_HOSTS,
                                    rank,
                                    SLURM_DISTRIBUTION='cyclic',
                                    **slurm_test_util.het_variables(
                                        'slurm_22_05', 'n9', 'n[10-11]'))

  def testCyclicComponentGivesOneSpecWithEveryTaskOnItsNode(self):
    expected = ['n9:8888', 'n10:8888', 'n10:8889', 'n10:8890', 'n11:8888']
    ids = {}
    for rank, host in enumerate(self._RANK_HOSTS.split()):
      with self.subTest(rank=rank):
        self.use_env(self._env(rank))
        resolver = SlurmClusterResolver()
        self.assertWorkers(expected, resolver)
        self.assertEqual(host, resolver.master().split('//')[1].split(':')[0])
        ids[rank] = resolver.task_id
    self.assertEqual({0: 0, 1: 1, 3: 2, 4: 3, 2: 4}, ids)


class GpuTest(slurm_test_util.ResolverTestCase):
  """GPUs follow Slurm's binding; CUDA_VISIBLE_DEVICES is written once."""

  @parameterized.named_parameters(('_first_task', 0, '4,5'),
                                  ('_second_task', 1, '6,7'))
  def testNodeGpusAreSplitByValueNotByIndex(self, rank, expected):
    self.use_gpu_env('4,5,6,7', rank=rank, SLURM_GPUS_ON_NODE='4')
    resolver = SlurmClusterResolver()
    self.assertEqual(expected, os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testGresGpusAreSplitAmongLocalTasks(self):
    # srun inside sbatch -N2 --ntasks-per-node=2 --gres=gpu:2
    # (as recorded on Slurm 22.05).
    self.use_env(
        slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3,
                  CUDA_VISIBLE_DEVICES='0,1', SLURM_STEP_GPUS='0,1',
                  SLURM_JOB_GPUS='0,1', SLURM_GPUS_ON_NODE='2'))
    resolver = SlurmClusterResolver()
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(
      ('_gpus_per_task_1', '1', 1, 1, '2', 'n1 n1',
       {'SLURMD_TRES_BIND': 'gpu:per_task:1', 'SLURM_GPUS_ON_NODE': '2'}),
      ('_gpus_per_task_2', '2,3', 2, 1, '2', 'n1 n1',
       {'SLURMD_TRES_BIND': 'gpu:per_task:2', 'SLURM_GPUS_ON_NODE': '4'}),
      ('_gpu_bind_single', '2', 1, 2, '4', 'n1 n1 n1 n1',
       {'SLURMD_TRES_BIND': 'gpu:single:1', 'SLURM_GPUS_ON_NODE': '4'}),
      ('_more_gpus_on_node_than_visible', '3', 1, 3, '4', 'n1 n1 n1 n1',
       {'SLURM_GPUS_ON_NODE': '4'}),
  )
  def testGpusBoundPerTaskAreKept(self, cvd, gpus, rank, tasks, rank_hosts,
                                  more):
    self.use_gpu_env(cvd, rank=rank, tasks=tasks, rank_hosts=rank_hosts,
                     **more)
    before = dict(os.environ)
    resolver = SlurmClusterResolver()
    self.assertEqual(before, dict(os.environ))
    self.assertEqual({'GPU': gpus}, resolver.num_accelerators())

  def testGpusPerTaskTakesFirstOfTheBoundGpus(self):
    self.use_gpu_env('2,3', SLURMD_TRES_BIND='gpu:per_task:2',
                     SLURM_GPUS_ON_NODE='4')
    resolver = SlurmClusterResolver(gpus_per_task=1)
    self.assertEqual('2', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(('_empty', ''),
                                  ('_no_dev_files', 'NoDevFiles'))
  def testNoGpuValueMeansNoGpus(self, cvd):
    self.use_gpu_env(cvd)
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.assertEqual(cvd, os.environ['CUDA_VISIBLE_DEVICES'])
    self.run.assert_not_called()

  def testCpuOnlyStepWithoutNvidiaSmiHasNoGpus(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)
    self.assertEqual(['nvidia-smi', '--list-gpus'],
                     self.run.call_args[0][0])

  def testNvidiaSmiCountsGpusWhenCudaVisibleDevicesIsUnset(self):
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver()
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testNvidiaSmiWithoutDevicesMeansNoGpus(self):
    self.set_run_result(slurm_test_util.completed(returncode=6,
                                   stdout='No devices were found\n'))
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    self.assertEqual({'GPU': 0}, SlurmClusterResolver().num_accelerators())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)

  def testFailingNvidiaSmiIsRuntimeError(self):
    self.set_run_result(
        slurm_test_util.completed(
            returncode=9,
            stdout='NVIDIA-SMI has failed because it couldn\'t communicate '
            'with the NVIDIA driver.\n'))
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    self.assertResolverFails(RuntimeError, r'nvidia-smi.*status 9')

  def testGpuBindClosestGivingEveryTaskTheNodesGpusIsSplit(self):
    # srun --gpus-per-node=4 --gpu-bind=closest: without a GPU topology every
    # task of a node sees all four GPUs.
    self.use_gpu_env('0,1,2,3', SLURM_GPUS_ON_NODE='4',
                     SLURMD_TRES_BIND='gpu:closest')
    resolver = SlurmClusterResolver()
    self.assertEqual('2,3', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testNvidiaSmiIsNotRunWhenGpusPerNodeIsGiven(self):
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(gpus_per_node=2)
    self.run.assert_not_called()
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testExplicitZeroGpusPerNodeHidesTheNodesGpus(self):
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(gpus_per_node=0)
    self.run.assert_not_called()
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  def testExplicitGpusPerNodeBelowTheTaskCountLeavesTasksWithout(self):
    # As TF 2.x: 2 GPUs per node for 4 tasks is 0 per task when asked for.
    self.use_gpu_env('0,1', rank=2, tasks='4', rank_hosts='n1 n1 n1 n1')
    with self.assertLogs(level='WARNING') as logs:
      resolver = SlurmClusterResolver(gpus_per_node=2)
    self.assertIn('this task gets none', '\n'.join(logs.output))
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  @parameterized.named_parameters(
      ('_slurm_22_05', {'SLURM_GPUS_ON_NODE': '4'}),
      ('_without_gpus_on_node', {}))
  def testSecondResolverInTheSameProcessDoesNotSplitAgain(self, more):
    self.use_gpu_env('4,5,6,7', **more)
    SlurmClusterResolver()
    resolver = SlurmClusterResolver()
    self.assertEqual('6,7', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testResolverInLauncherDoesNotChangeGpusOfTheStepItStarts(self):
    # A batch script resolves itself (CUDA_VISIBLE_DEVICES 0,1 -> 0), then
    # runs `srun --gpus-per-task=1`, which passes its environment on and
    # binds GPU 1 to the second task on n1.
    self.use_env(slurm_test_util.BATCH_ENV)
    SlurmClusterResolver()
    task = slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1,
                     CUDA_VISIBLE_DEVICES='1', SLURM_STEP_GPUS='1',
                     SLURM_GPUS_ON_NODE='2',
                     SLURMD_TRES_BIND='gpu:per_task:1')
    self.use_env(dict(os.environ, **task))
    resolver = SlurmClusterResolver()
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testWithoutAutoSetGpuTheEnvironmentIsUnchanged(self):
    self.use_gpu_env('4,5,6,7', SLURM_GPUS_ON_NODE='4')
    before = dict(os.environ)
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    self.assertEqual(before, dict(os.environ))
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testCudaVisibleDevicesIsNotWrittenWhenALaterCheckFails(self):
    self.use_gpu_env('4,5,6,7', SLURM_GPUS_ON_NODE='4')
    self.assertResolverFails(RuntimeError, r'Requested 3 tasks',
                             jobs={'worker': 3})

  def testFailingSecondResolverKeepsWhatTheFirstSet(self):
    self.use_gpu_env('4,5,6,7', SLURM_GPUS_ON_NODE='4')
    SlurmClusterResolver()
    self.assertResolverFails(ValueError, r'port_base=0', port_base=0)
    self.assertEqual('6,7', os.environ['CUDA_VISIBLE_DEVICES'])

  def testMoreGpusPerNodeThanSlurmGaveIsRuntimeErrorWithBothNumbers(self):
    self.use_gpu_env('0,1', SLURM_GPUS_ON_NODE='2')
    self.assertResolverFails(RuntimeError, r'gpus_per_node=4 but .* has 2',
                             gpus_per_node=4)

  def testGpusPerNodeWithEmptyCudaVisibleDevicesIsRuntimeError(self):
    # TF 2.x's testMultiTaskPerNodeRetrieval set CUDA_VISIBLE_DEVICES='' and
    # gpus_per_node=2; '' means no GPUs, so that would hand out unseen ones.
    self.use_gpu_env('')
    self.assertResolverFails(RuntimeError, r'gpus_per_node=2 but .* has 0',
                             gpus_per_node=2)

  def testMoreGpusPerTaskThanBoundIsRuntimeErrorWithBothNumbers(self):
    self.use_gpu_env('1', SLURMD_TRES_BIND='gpu:per_task:1',
                     SLURM_GPUS_ON_NODE='2')
    self.assertResolverFails(RuntimeError, r'Requested 2 GPUs per task .* 1',
                             gpus_per_task=2)

  def testGpuOversubscriptionOfAnyNodeFailsOnEveryTask(self):
    # srun -N2 -n3 lays out 2,1: 2 tasks x 2 GPUs exceed n1's 2 GPUs, so the
    # task alone on n2 must fail too instead of waiting for the others.
    self.use_env(slurm_test_util.step_env('n[1-2]', '2,1', 'n1 n1 n2', 2))
    self.assertResolverFails(RuntimeError, r'2 GPUs per task',
                             gpus_per_node=2, gpus_per_task=2)

  @parameterized.named_parameters(('_list', '0,1', 2), ('_empty', '', 0),
                                  ('_no_dev_files', 'NoDevFiles', 0))
  def testGetNumGpusCountsCudaVisibleDevices(self, cvd, expected):
    self.use_env({'CUDA_VISIBLE_DEVICES': cvd})
    self.assertEqual(expected, slurm_cluster_resolver.get_num_gpus())

  def testGetNumGpusWithoutNvidiaSmiIsZero(self):
    self.use_env({})
    self.assertEqual(0, slurm_cluster_resolver.get_num_gpus())


class DefaultGpuCountTest(slurm_test_util.ResolverTestCase):
  """Without gpus_per_task/gpus_per_node every worker gets as many GPUs."""

  @parameterized.named_parameters(
      # srun -N2 -n3 --gres=gpu:1 lays out 2,1.
      ('_gres1_2_1', 'n[1-2]', '2,1', 'n1 n1 n2', '0', ['0', '0', '0']),
      # srun -N2 -n4 -m cyclic --gres=gpu:2 lands 3,1.
      ('_cyclic_gres2_3_1', 'n[1-2]', '3,1', 'n1 n2 n1 n1', '0,1',
       ['0', '0', '1', '0'], 'cyclic'),
      # srun -N2 -n6 --gpus-per-node=3 lays out 4,2.
      ('_gpus_per_node3_4_2', 'n[1-2]', '4,2', 'n1 n1 n1 n1 n2 n2', '0,1,2',
       ['0', '1', '2', '0', '0', '1']),
      # srun -N3 -n5 --gres=gpu:3 lays out 3,1,1.
      ('_gres3_3_1_1', 'n[1-3]', '3,1,1', 'n1 n1 n1 n2 n3', '0,1,2',
       ['0', '1', '2', '0', '0']),
      # srun -N2 -n3 --gres=gpu:4 lays out 2,1: 2 each, also on n2.
      ('_gres4_2_1', 'n[1-2]', '2,1', 'n1 n1 n2', '0,1,2,3',
       ['0,1', '2,3', '0,1']),
  )
  def testEveryTaskOfTheStepGetsTheSameNumberOfGpus(
      self, nodelist, tasks, rank_hosts, cvd, expected, distribution=None):
    for rank, gpus in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(slurm_test_util.step_env(
            nodelist, tasks, rank_hosts, rank, CUDA_VISIBLE_DEVICES=cvd,
            SLURM_DISTRIBUTION=distribution,
            SLURM_STEP_GPUS=cvd, SLURM_GPUS_ON_NODE=str(len(cvd.split(',')))))
        resolver = SlurmClusterResolver()
        self.assertEqual(gpus, os.environ['CUDA_VISIBLE_DEVICES'])
        self.assertEqual({'GPU': len(gpus.split(','))},
                         resolver.num_accelerators())

  def testTaskOnLessBusyNodeSaysItsGpusStayUnused(self):
    # srun -N2 -n3 --gres=gpu:4, rank 2 alone on n2: 2 of its 4 GPUs.
    self.use_env(slurm_test_util.step_env('n[1-2]', '2,1', 'n1 n1 n2', 2,
                           CUDA_VISIBLE_DEVICES='0,1,2,3',
                           SLURM_GPUS_ON_NODE='4'))
    with self.assertLogs(level='INFO') as logs:
      SlurmClusterResolver()
    self.assertRegex('\n'.join(logs.output),
                     r'2 of this node\'s 4 GPUs stay unused.*gpus_per_task')

  @parameterized.named_parameters(('_rank0', 0, '4'), ('_rank1', 1, '5'),
                                  ('_rank2', 2, '4'))
  def testFewerGpusThanTasksAreSharedRoundRobinByValue(self, rank, expected):
    self.use_gpu_env('4,5', rank=rank, tasks='3', rank_hosts='n1 n1 n1',
                     SLURM_GPUS_ON_NODE='2')
    resolver = SlurmClusterResolver()
    self.assertEqual(expected, os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(
      ('_uuids', 'GPU-8f2a1c3e-0000-1111-2222-333344445555,'
       'GPU-19d0e6b7-6666-7777-8888-9999aaaabbbb',
       'GPU-19d0e6b7-6666-7777-8888-9999aaaabbbb'),
      ('_mig', 'MIG-GPU-aa/1/0,MIG-GPU-aa/2/0', 'MIG-GPU-aa/2/0'))
  def testSharedGpusAreDealtByTheirNames(self, cvd, expected):
    self.use_gpu_env(cvd, rank=3, tasks='4', rank_hosts='n1 n1 n1 n1')
    SlurmClusterResolver()
    self.assertEqual(expected, os.environ['CUDA_VISIBLE_DEVICES'])

  def testTaskSharingItsGpuSetsAllowGrowth(self):
    self.use_gpu_env('4,5', rank=2, tasks='3', rank_hosts='n1 n1 n1')
    SlurmClusterResolver()
    self.assertEqual('true', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])

  def testTaskWithAGpuOfItsOwnSetsNoAllowGrowth(self):
    # 3 tasks on GPUs 4,5: rank 1 is alone on GPU 5.
    self.use_gpu_env('4,5', rank=1, tasks='3', rank_hosts='n1 n1 n1')
    SlurmClusterResolver()
    self.assertNotIn('TF_FORCE_GPU_ALLOW_GROWTH', os.environ)

  def testAllowGrowthSetByTheUserIsKept(self):
    self.use_gpu_env('4,5', rank=2, tasks='3', rank_hosts='n1 n1 n1',
                     TF_FORCE_GPU_ALLOW_GROWTH='false')
    SlurmClusterResolver()
    self.assertEqual('false', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])

  def testSharedGpuWithoutAutoSetGpuChangesNothing(self):
    self.use_gpu_env('4,5', rank=2, tasks='3', rank_hosts='n1 n1 n1')
    before = dict(os.environ)
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    self.assertEqual(before, dict(os.environ))
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(('_shared', 2, 'used by 2 tasks'),
                                  ('_own', 1, 'has its GPU to itself'))
  def testEveryTaskIsWarnedHowManyTasksUseItsGpu(self, rank, text):
    self.use_gpu_env('4,5', rank=rank, tasks='3', rank_hosts='n1 n1 n1')
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertIn(text, '\n'.join(logs.output))

  def testHeterogeneousComponentsCountTheirOwnBusiestNode(self):
    # srun -w n1 -n1 --gres=gpu:2 : -w n[2-3] -n3 --gres=gpu:4 (2,1): the
    # GPU component's tasks get 4 // 2 each; component 0's one task both.
    het = {'SLURM_HET_SIZE': '2', 'SLURM_JOB_NODELIST_HET_GROUP_0': 'n1',
           'SLURM_JOB_NODELIST_HET_GROUP_1': 'n[2-3]',
           'SLURM_DISTRIBUTION': 'block'}
    cases = [(0, '0,1', '0,1'), (1, '0,1,2,3', '0,1'),
             (2, '0,1,2,3', '2,3'), (3, '0,1,2,3', '0,1')]
    for rank, cvd, expected in cases:
      with self.subTest(rank=rank):
        self.use_env(
            slurm_test_util.step_env('n[1-3]',
                                     '1,2,1',
                                     'n1 n2 n2 n3',
                                     rank,
                                     CUDA_VISIBLE_DEVICES=cvd,
                                     **het))
        resolver = SlurmClusterResolver()
        self.assertEqual(expected, os.environ['CUDA_VISIBLE_DEVICES'])
        self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testHeterogeneousComponentWithMoreTasksThanGpusShares(self):
    het = {'SLURM_HET_SIZE': '2', 'SLURM_JOB_NODELIST_HET_GROUP_0': 'n1',
           'SLURM_JOB_NODELIST_HET_GROUP_1': 'n2',
           'SLURM_DISTRIBUTION': 'block'}
    self.use_env(slurm_test_util.step_env('n[1-2]', '1,3', 'n1 n2 n2 n2', 3,
                           CUDA_VISIBLE_DEVICES='0,1', **het))
    with self.assertLogs(level='WARNING') as logs:
      resolver = SlurmClusterResolver()
    self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual('true', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())
    self.assertIn('The busiest node of the component runs 3 tasks',
                  '\n'.join(logs.output))

  def testGpusSpreadUnevenlyByGpusTotalWarnThatWorkersMayDiffer(self):
    # salloc -N3 -n5 --gpus=5: n1 got 3 GPUs, n2 and n3 one each.
    self.use_env(
        slurm_test_util.step_env('n[1-3]',
                                 '3,1,1',
                                 'n1 n1 n1 n2 n3',
                                 0,
                                 CUDA_VISIBLE_DEVICES='0,1,2',
                                 SLURM_GPUS='5',
                                 SLURM_GPUS_ON_NODE='3'))
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertRegex('\n'.join(logs.output),
                     r'SLURM_GPUS=5 .* 3 nodes .* gave this one 3')

  def testGpusTotalSpreadEvenlyIsNotWarned(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 0,
                           CUDA_VISIBLE_DEVICES='0,1', SLURM_GPUS='a100:4'))
    with mock.patch.object(slurm_cluster_resolver.logging,
                           'warning') as warning:
      SlurmClusterResolver()
    warning.assert_not_called()

  def testMalformedGpusTotalIsValueErrorNamingIt(self):
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '1',
                                 'n1',
                                 0,
                                 CUDA_VISIBLE_DEVICES='0',
                                 SLURM_GPUS='four'))
    self.assertResolverFails(ValueError, r"SLURM_GPUS='four'")


class ClusterSpecEqualityTest(slurm_test_util.ResolverTestCase):
  """The ClusterSpec, built from its ClusterDef, is ClusterSpec(dict)'s."""

  @parameterized.named_parameters(
      ('_one_task_per_node', 'n[1-3]', '1(x3)', 'n1 n2 n3', {}, {}),
      ('_block', 'n[1-2]', '4,1', 'n1 n1 n1 n1 n2', {}, {}),
      ('_cyclic', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'}, {}),
      ('_plane', 'n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1',
       {'SLURM_DISTRIBUTION': 'plane=2'}, {}),
      ('_jobs', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {},
       {'jobs': {'chief': 1, 'ps': 1, 'worker': 2}}),
      ('_het_jobs', 'n[1-3]', '1,2,1', 'n1 n2 n2 n3',
       dict(slurm_test_util.het_variables('het_group', 'n1', 'n[2-3]'),
            SLURM_DISTRIBUTION='block'), {'het_jobs': ['ps', 'worker']}),
  )
  def testEqualsTheClusterSpecOfItsDict(self, nodelist, tasks, rank_hosts,
                                        more, kwargs):
    self.use_env(
        slurm_test_util.step_env(nodelist, tasks, rank_hosts, 1, **more))
    spec = SlurmClusterResolver(auto_set_gpu=False, **kwargs).cluster_spec()
    from_dict = server_lib.ClusterSpec(spec.as_dict())
    self.assertEqual(from_dict, spec)
    self.assertEqual(from_dict.as_dict(), spec.as_dict())
    self.assertEqual(from_dict.as_cluster_def(), spec.as_cluster_def())
    self.assertEqual(sorted(spec.jobs), list(spec.as_cluster_def().job[i].name
                                             for i in range(len(spec.jobs))))


class ApiTest(slurm_test_util.ResolverTestCase):
  """The r1.15 / TF 2.x API, with the examples of TF's tests and docs."""

  @parameterized.named_parameters(
      ('_tasks_per_node_given', {}, {'tasks_per_node': 1}),
      ('_tasks_per_node_from_slurm',
       {'SLURM_STEP_TASKS_PER_NODE': '1(x3)'}, {}),
  )
  def testPsAndWorkerJobsSplitTheRanks(self, more_env, more_args):
    # TF 2.x testSimpleSuccessfulRetrieval and testTaskPerNodeNotSetRetrieval.
    self.use_env(dict(slurm_test_util.TF_TEST_ENV, **more_env))
    resolver = SlurmClusterResolver(
        jobs={'ps': 1, 'worker': 2}, port_base=8888, gpus_per_node=1,
        gpus_per_task=1, auto_set_gpu=False, **more_args)
    self.assertEqual({'ps': ['t02n13:8888'],
                      'worker': ['t02n41:8888', 't02n43:8888']},
                     resolver.cluster_spec().as_dict())
    self.assertEqual(('ps', 0), resolver.get_task_info())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)

  @parameterized.named_parameters(('_one_gpu_per_task', 2, 1, '1'),
                                  ('_two_gpus_per_task', 4, 2, '2,3'))
  def testMultiTaskPerNodeRetrieval(self, gpus_per_node, gpus_per_task,
                                    expected_gpus):
    # TF 2.x testMultiTaskPerNodeRetrieval and testMultipleGpusPerTaskRetrieval.
    # TF 2.x's versions also set CUDA_VISIBLE_DEVICES='' (their copies in
    # SlurmClusterResolverTest use Slurm's lists instead; '' is
    # GpuTest.testGpusPerNodeWithEmptyCudaVisibleDevicesIsRuntimeError).
    self.use_env({
        'SLURM_PROCID': '1',
        'SLURM_STEP_NUM_TASKS': '5',
        'SLURM_STEP_TASKS_PER_NODE': '2(x2),1',
        'SLURM_STEP_NODELIST': 't02n13,t02n41,t02n43',
    })
    resolver = SlurmClusterResolver(
        jobs={'ps': 1, 'worker': 4}, port_base=8888,
        gpus_per_node=gpus_per_node, gpus_per_task=gpus_per_task,
        auto_set_gpu=True)
    self.assertEqual(
        {'ps': ['t02n13:8888'],
         'worker': ['t02n13:8889', 't02n41:8888', 't02n41:8889',
                    't02n43:8888']}, resolver.cluster_spec().as_dict())
    self.assertEqual(('worker', 0), resolver.get_task_info())
    self.assertEqual(expected_gpus, os.environ['CUDA_VISIBLE_DEVICES'])

  def use_two_node_env(self, rank, **more):
    """`salloc --nodes=2 --ntasks-per-node=2` on TF's README hosts."""
    self.use_env(
        slurm_test_util.step_env('t02n[13,41]', '2(x2)',
                                 't02n13 t02n13 t02n41 t02n41', rank, **more))

  def testReadmeBasicExampleSplitsFourGpusPerNode(self):
    # salloc --nodes=2 --ntasks-per-node=2 --gres=gpu:k80:4; srun ...
    self.use_two_node_env(3, CUDA_VISIBLE_DEVICES='0,1,2,3')
    resolver = SlurmClusterResolver()
    self.assertWorkers(
        ['t02n13:8888', 't02n13:8889', 't02n41:8888', 't02n41:8889'], resolver)
    self.assertEqual(('worker', 3), resolver.get_task_info())
    self.assertEqual('2,3', os.environ['CUDA_VISIBLE_DEVICES'])

  def testReadmeAdvancedExampleWithPositionalJobs(self):
    self.use_two_node_env(1)
    resolver = SlurmClusterResolver(
        {'ps': 1, 'worker': 3}, port_base=1337, tasks_per_node=2,
        gpus_per_node=2, gpus_per_task=1, auto_set_gpu=False)
    self.assertEqual(
        {'ps': ['t02n13:1337'],
         'worker': ['t02n13:1338', 't02n41:1337', 't02n41:1338']},
        resolver.cluster_spec().as_dict())
    self.assertEqual(('worker', 0), resolver.get_task_info())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)

  def testPositionalArgumentsKeepTheR115Order(self):
    self.use_two_node_env(3)
    # jobs, port_base, gpus_per_node, gpus_per_task, tasks_per_node,
    # auto_set_gpu, rpc_layer.
    resolver = SlurmClusterResolver({'ps': 1, 'worker': 3}, 8000, 2, 1, 2, True,
                                    'ab')
    self.assertEqual(('worker', 2), resolver.get_task_info())
    self.assertEqual('ab://t02n41:8001', resolver.master())
    # r1.15's README: t02n41:8889 (here 8001) sees GPU 1.
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testJobsDefaultsToOneWorkerPerTask(self):
    self.use_env(slurm_test_util.step_env('n[1-3]', '1(x3)', 'n1 n2 n3', 2))
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n1:8888', 'n2:8888', 'n3:8888'], resolver)
    self.assertEqual(('worker', 2), resolver.get_task_info())

  def testRanksGoToJobsInSortedJobNameOrder(self):
    self.use_env(slurm_test_util.step_env('n[1-4]', '1(x4)', 'n1 n2 n3 n4', 2))
    resolver = SlurmClusterResolver(
        jobs={'worker': 1, 'ps': 1, 'evaluator': 1, 'chief': 1})
    self.assertEqual(
        {'chief': ['n1:8888'], 'evaluator': ['n2:8888'], 'ps': ['n3:8888'],
         'worker': ['n4:8888']}, resolver.cluster_spec().as_dict())
    self.assertEqual(('ps', 0), resolver.get_task_info())

  @parameterized.named_parameters(
      ('_int', 2, '2(x2)', 'n1 n1 n2 n2'),
      ('_dict', {'n1': 2, 'n2': 1}, '2,1', 'n1 n1 n2'))
  def testTasksPerNodeAgreeingWithSlurm(self, tasks_per_node, slurm_value,
                                        rank_hosts):
    self.use_env(slurm_test_util.step_env('n[1-2]', slurm_value, rank_hosts, 1))
    resolver = SlurmClusterResolver(tasks_per_node=tasks_per_node)
    self.assertEqual('grpc://n1:8889', resolver.master())

  def testTasksPerNodeDictWithoutNodeList(self):
    # TF 2.x: a dict needs no SLURM_STEP_NODELIST.
    self.use_env({'SLURM_PROCID': '2'})
    resolver = SlurmClusterResolver(tasks_per_node={'a': 2, 'b': 1},
                                    gpus_per_node=0)
    self.assertWorkers(['a:8888', 'a:8889', 'b:8888'], resolver)
    self.assertEqual(('worker', 2), resolver.get_task_info())

  def testPortBaseAtTheTopOfTheRangeIsAllowed(self):
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(port_base=65534)
    self.assertWorkers(['n1:65534', 'n1:65535'], resolver)

  def testMasterDefaultsToOwnAddressWithGrpc(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3))
    self.assertEqual('grpc://n2:8889', SlurmClusterResolver().master())

  def testMasterOfAnotherTaskWithItsOwnRpcLayer(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3))
    resolver = SlurmClusterResolver()
    self.assertEqual('grpc://n1:8889', resolver.master('worker', 1))
    self.assertEqual('test://n2:8888', resolver.master('worker', 2, 'test'))

  def testMasterWithoutRpcLayerIsTheBareAddress(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3))
    self.assertEqual('n2:8889', SlurmClusterResolver(rpc_layer=None).master())

  def testMasterKeepsTaskTypeAndIdSetByTheUser(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3))
    resolver = SlurmClusterResolver()
    resolver.task_type = 'worker'
    resolver.task_id = 1
    self.assertEqual('grpc://n1:8889', resolver.master())
    self.assertEqual(('worker', 1), resolver.get_task_info())

  def testMasterAndClusterSpecChangeNothing(self):
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '2',
                                 'n1 n1',
                                 1,
                                 CUDA_VISIBLE_DEVICES='4,5,6,7'))
    resolver = SlurmClusterResolver()
    after_init = dict(os.environ)
    for _ in range(3):
      resolver.master()
      resolver.master('worker', 0)
      self.assertWorkers(['n1:8888', 'n1:8889'], resolver)
    self.assertEqual(after_init, dict(os.environ))
    self.assertEqual(('worker', 1), resolver.get_task_info())

  def testFailingMasterCallLeavesResolverAndEnvironmentUnchanged(self):
    self.use_env(slurm_test_util.step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver()
    before = dict(os.environ)
    with self.assertRaisesRegex(ValueError, 'chief'):
      resolver.master('chief', 0)
    self.assertEqual(before, dict(os.environ))
    self.assertEqual(('worker', 1), resolver.get_task_info())
    self.assertEqual('grpc', resolver.rpc_layer)
    self.assertWorkers(['n1:8888', 'n1:8889'], resolver)

  def testNumAcceleratorsIsPerTaskWhateverTheArguments(self):
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '2',
                                 'n1 n1',
                                 0,
                                 CUDA_VISIBLE_DEVICES='0,1,2,3'))
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())
    self.assertEqual({'GPU': 2}, resolver.num_accelerators('worker', 1, None))

  def testEnvironmentIsEmpty(self):
    self.use_env(slurm_test_util.step_env('n1', '1', 'n1', 0))
    self.assertEqual('', SlurmClusterResolver().environment)

  def testTaskTypeTaskIdAndRpcLayerAreSettable(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '1(x2)', 'n1 n2', 0))
    resolver = SlurmClusterResolver(jobs={'chief': 1, 'worker': 1})
    self.assertEqual(('chief', 0), resolver.get_task_info())
    resolver.task_type, resolver.task_id, resolver.rpc_layer = 'worker', 0, 'ab'
    self.assertEqual(('worker', 0), (resolver.task_type, resolver.task_id))
    self.assertEqual('ab://n2:8888', resolver.master())

  def testExportedAsTfDistributeClusterResolver(self):
    self.assertEqual('distribute.cluster_resolver.SlurmClusterResolver',
                     tf_export.get_canonical_name_for_symbol(
                         SlurmClusterResolver))

  @parameterized.named_parameters(('_more', {'worker': 4}, 4),
                                  ('_fewer', {'ps': 1, 'worker': 1}, 2))
  def testTaskCountOtherThanSlurmsIsRuntimeErrorWithBothNumbers(
      self, jobs, requested):
    self.use_env(slurm_test_util.step_env('n[1-3]', '1(x3)', 'n1 n2 n3', 0))
    self.assertResolverFails(
        RuntimeError, r'Requested %d tasks .* Slurm assigned 3 tasks' %
        requested, jobs=jobs)


class ScontrolTest(slurm_test_util.ResolverTestCase):
  """hostlist_expansion='scontrol': `scontrol show hostnames`, as r1.15."""

  def setUp(self):
    super().setUp()
    self.use_env(slurm_test_util.step_env('n[1-2]', '1(x2)', 'n1 n2', 1))

  def testScontrolOutputIsTheNodeList(self):
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    resolver = SlurmClusterResolver(gpus_per_node=0,
                                    hostlist_expansion='scontrol')
    self.assertWorkers(['n1:8888', 'n2:8888'], resolver)

  def testWithoutSlurmConfItFailsAtOnceWithoutRunningScontrol(self):
    # Outside a task, scontrol without a configuration would look for a
    # controller in DNS.
    del os.environ['SLURM_CONF']
    with mock.patch.object(slurm_hostlist.os.path, 'exists',
                           return_value=False):
      self.assertResolverFails(RuntimeError, r'SLURM_CONF is not set',
                               gpus_per_node=0, hostlist_expansion='scontrol')
    self.run.assert_not_called()

  def testWithoutSlurmConfASiteSlurmConfIsEnough(self):
    del os.environ['SLURM_CONF']
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    with mock.patch.object(slurm_hostlist.os.path, 'exists',
                           side_effect=lambda path: path ==
                           '/etc/slurm/slurm.conf'):
      resolver = SlurmClusterResolver(gpus_per_node=0,
                                      hostlist_expansion='scontrol')
    self.assertWorkers(['n1:8888', 'n2:8888'], resolver)

  def testScontrolIsRunWithAnArgumentListAndATimeout(self):
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    SlurmClusterResolver(gpus_per_node=0, hostlist_expansion='scontrol')
    self.run.assert_called_once()
    args, kwargs = self.run.call_args
    self.assertEqual(['scontrol', 'show', 'hostnames', 'n[1-2]'], args[0])
    self.assertGreater(kwargs['timeout'], 0)
    self.assertFalse(kwargs.get('shell', False))

  @parameterized.named_parameters(
      ('_missing_binary', FileNotFoundError(2, 'No such file or directory'),
       RuntimeError, r"'n\[1-2\]': scontrol is not installed"),
      ('_non_zero_exit',
       slurm_test_util.completed(returncode=1,
                                 stderr='scontrol: error: too many arguments'),
       RuntimeError, r'exited with status 1: scontrol: error'),
      ('_invalid_hostlist_with_exit_zero',
       slurm_test_util.completed(stderr='Invalid hostlist: n[1-2]\n'),
       ValueError, r"'n\[1-2\]': scontrol says Invalid hostlist"),
      ('_timeout', subprocess.TimeoutExpired(
          'scontrol', 30), RuntimeError, r'did not finish'),
  )
  def testScontrolFailureIsClearError(self, result, error, regex):
    self.set_run_result(result)
    self.assertResolverFails(error, regex, gpus_per_node=0,
                             hostlist_expansion='scontrol')


class BadInputTest(slurm_test_util.ResolverTestCase):
  """Every bad input is an error naming it, and changes nothing."""

  def setUp(self):
    super().setUp()
    # srun -N2 --ntasks-per-node=2 --gres=gpu:4, rank 1: resolving would set
    # CUDA_VISIBLE_DEVICES to 2,3.
    self.base_env = slurm_test_util.step_env(
        'n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1, CUDA_VISIBLE_DEVICES='0,1,2,3',
        SLURM_STEP_GPUS='0,1,2,3', SLURM_GPUS_ON_NODE='4')

  @parameterized.named_parameters(
      ('_procid_not_a_number', {'SLURM_PROCID': 'abc'}, ValueError,
       r"SLURM_PROCID='abc'"),
      ('_procid_negative', {'SLURM_PROCID': '-1'}, ValueError,
       r"SLURM_PROCID='-1'"),
      ('_procid_empty', {'SLURM_PROCID': ''}, ValueError, r"SLURM_PROCID=''"),
      ('_procid_non_ascii_digit', {'SLURM_PROCID': '\u00b2'}, ValueError,
       "SLURM_PROCID='\u00b2'"),
      ('_procid_past_last_task', {'SLURM_PROCID': '4'}, RuntimeError,
       r'SLURM_PROCID=4 .* 4 tasks'),
      ('_procid_missing', {'SLURM_PROCID': None}, RuntimeError,
       r'SLURM_PROCID is not set.*srun'),
      ('_tasks_per_node_letter', {'SLURM_STEP_TASKS_PER_NODE': 'x'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='x'"),
      ('_tasks_per_node_zero_repeats', {'SLURM_STEP_TASKS_PER_NODE': '2(x0)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2\(x0\)'"),
      ('_tasks_per_node_empty', {'SLURM_STEP_TASKS_PER_NODE': ''}, ValueError,
       r"SLURM_STEP_TASKS_PER_NODE=''"),
      ('_tasks_per_node_empty_entry', {'SLURM_STEP_TASKS_PER_NODE': '2,,2'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2,,2'"),
      ('_tasks_per_node_zero_tasks', {'SLURM_STEP_TASKS_PER_NODE': '0(x2)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='0\(x2\)'"),
      ('_tasks_per_node_too_short', {'SLURM_STEP_TASKS_PER_NODE': '4'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='4' has 1 entries but "
       r"SLURM_STEP_NODELIST='n\[1-2\]' has 2 nodes"),
      ('_tasks_per_node_too_long', {'SLURM_STEP_TASKS_PER_NODE': '2(x3)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2\(x3\)' has 3 entries"),
      ('_tasks_per_node_missing', {'SLURM_STEP_TASKS_PER_NODE': None},
       RuntimeError, r'SLURM_STEP_TASKS_PER_NODE is not set'),
      ('_nodelist_descending', {'SLURM_STEP_NODELIST': 'n[2-1]'}, ValueError,
       r"SLURM_STEP_NODELIST='n\[2-1\]'"),
      ('_nodelist_unbalanced', {'SLURM_STEP_NODELIST': 'n[1-2'}, ValueError,
       r"SLURM_STEP_NODELIST='n\[1-2'"),
      ('_nodelist_duplicate', {'SLURM_STEP_NODELIST': 'n1,n1'}, ValueError,
       r"SLURM_STEP_NODELIST='n1,n1' names node 'n1' twice"),
      ('_nodelist_duplicate_after_range', {
          'SLURM_STEP_NODELIST': 'n[1-2],n1',
          'SLURM_STEP_TASKS_PER_NODE': '1,1,2'
      }, ValueError, r"SLURM_STEP_NODELIST='n\[1-2\],n1' names node 'n1' twice"),
      ('_nodelist_missing', {'SLURM_STEP_NODELIST': None}, RuntimeError,
       r'SLURM_STEP_NODELIST is not set'),
      ('_num_tasks_disagrees', {'SLURM_STEP_NUM_TASKS': '5'}, RuntimeError,
       r'SLURM_STEP_NUM_TASKS=5 but .* add up to 4'),
      ('_num_tasks_not_a_number', {'SLURM_STEP_NUM_TASKS': 'four'}, ValueError,
       r"SLURM_STEP_NUM_TASKS='four'"),
      ('_distribution_unknown', {'SLURM_DISTRIBUTION': 'spread'}, ValueError,
       r"SLURM_DISTRIBUTION='spread'"),
      ('_plane_without_size', {'SLURM_DISTRIBUTION': 'plane'}, RuntimeError,
       r"SLURM_DISTRIBUTION='plane' needs SLURM_DIST_PLANESIZE"),
      ('_plane_size_zero', {
          'SLURM_DISTRIBUTION': 'plane',
          'SLURM_DIST_PLANESIZE': '0'
      }, ValueError, r"SLURM_DIST_PLANESIZE='0'"),
      ('_plane_size_not_a_number', {
          'SLURM_DISTRIBUTION': 'plane',
          'SLURM_DIST_PLANESIZE': 'two'
      }, ValueError, r"SLURM_DIST_PLANESIZE='two'"),
      ('_arbitrary_without_hostfile', {'SLURM_DISTRIBUTION': 'arbitrary'},
       RuntimeError, r'SLURM_HOSTFILE is not set'),
      ('_het_size_not_a_number', {'SLURM_HET_SIZE': 'two'}, ValueError,
       r"SLURM_HET_SIZE='two'"),
      ('_cuda_visible_devices_empty_entry', {'CUDA_VISIBLE_DEVICES': '0,,1'},
       ValueError, r"CUDA_VISIBLE_DEVICES='0,,1'"),
      ('_cuda_visible_devices_repeated', {'CUDA_VISIBLE_DEVICES': '0,0'},
       ValueError, r"CUDA_VISIBLE_DEVICES='0,0'"),
      ('_gpus_on_node_not_a_number', {'SLURM_GPUS_ON_NODE': 'four'},
       ValueError, r"SLURM_GPUS_ON_NODE='four'"),
  )
  def testBadSlurmVariable(self, overrides, error, regex):
    env = dict(self.base_env, **overrides)
    self.use_env({k: v for k, v in env.items() if v is not None})
    self.assertResolverFails(error, regex)

  @parameterized.named_parameters(
      ('_unknown_host', 'n2\nn1\nn9\nn1\n', RuntimeError,
       r"SLURM_HOSTFILE=.* names hosts \['n9'\]"),
      ('_wrong_counts', 'n1\nn1\nn1\nn2\n', RuntimeError,
       r'SLURM_HOSTFILE=.* runs \[2, 2\] tasks'),
      ('_too_few_lines', 'n1\nn2\n', RuntimeError,
       r'SLURM_HOSTFILE=.* puts 2 ranks'),
      ('_malformed_hostlist', 'n[2-1]\n', ValueError,
       r"SLURM_HOSTFILE=.*'n\[2-1\]'"),
  )
  def testBadHostfile(self, content, error, regex):
    hostfile = self.create_tempfile(content=content).full_path
    self.use_env(
        dict(self.base_env, SLURM_DISTRIBUTION='arbitrary',
             SLURM_HOSTFILE=hostfile))
    self.assertResolverFails(error, regex)

  @parameterized.named_parameters(
      ('_jobs_not_a_dict', {'jobs': ['worker']}, ValueError,
       r"jobs=\['worker'\]"),
      ('_jobs_empty', {'jobs': {}}, ValueError, r'jobs=\{\}'),
      ('_job_name_with_dash', {'jobs': {'my-job': 4}}, ValueError,
       r"job name 'my-job'"),
      ('_job_name_empty', {'jobs': {'': 4}}, ValueError, r"job name ''"),
      ('_job_name_not_a_string', {'jobs': {1: 4}}, ValueError,
       r'job name 1 '),
      ('_job_count_negative', {'jobs': {'ps': 5, 'worker': -1}}, ValueError,
       r"jobs\['worker'\]=-1"),
      ('_job_count_bool', {'jobs': {'worker': True}}, ValueError,
       r"jobs\['worker'\]=True"),
      ('_job_count_float', {'jobs': {'worker': 4.0}}, ValueError,
       r"jobs\['worker'\]=4\.0"),
      ('_job_count_string', {'jobs': {'worker': '4'}}, ValueError,
       r"jobs\['worker'\]='4'"),
      ('_job_count_none', {'jobs': {'worker': None}}, ValueError,
       r"jobs\['worker'\]=None"),
      ('_jobs_total_too_large', {'jobs': {'ps': 1, 'worker': 4}}, RuntimeError,
       r'Requested 5 tasks .* assigned 4'),
      ('_jobs_total_too_small', {'jobs': {'ps': 1, 'worker': 2}}, RuntimeError,
       r'Requested 3 tasks .* assigned 4'),
      ('_port_zero', {'port_base': 0}, ValueError, r'port_base=0:'),
      ('_port_negative', {'port_base': -1}, ValueError, r'port_base=-1:'),
      ('_port_overflow_with_two_local_tasks', {'port_base': 65535}, ValueError,
       r'port_base=65535: .*65535\.\.65536'),
      ('_port_above_range', {'port_base': 65536}, ValueError,
       r'port_base=65536:'),
      ('_port_string', {'port_base': '8888'}, ValueError,
       r"port_base='8888'"),
      ('_port_bool', {'port_base': True}, ValueError, r'port_base=True'),
      ('_port_float', {'port_base': 8888.0}, ValueError,
       r'port_base=8888\.0'),
      ('_port_none', {'port_base': None}, ValueError, r'port_base=None'),
      ('_gpus_per_node_negative', {'gpus_per_node': -1}, ValueError,
       r'gpus_per_node=-1'),
      ('_gpus_per_node_bool', {'gpus_per_node': True}, ValueError,
       r'gpus_per_node=True'),
      ('_gpus_per_node_string', {'gpus_per_node': '4'}, ValueError,
       r"gpus_per_node='4'"),
      ('_gpus_per_node_float', {'gpus_per_node': 2.5}, ValueError,
       r'gpus_per_node=2\.5'),
      ('_gpus_per_node_more_than_visible', {'gpus_per_node': 5}, RuntimeError,
       r'gpus_per_node=5 but this node has 4'),
      ('_gpus_per_task_negative', {'gpus_per_task': -1}, ValueError,
       r'gpus_per_task=-1'),
      ('_gpus_per_task_bool', {'gpus_per_task': True}, ValueError,
       r'gpus_per_task=True'),
      ('_gpus_per_task_string', {'gpus_per_task': '1'}, ValueError,
       r"gpus_per_task='1'"),
      ('_gpus_per_task_float', {'gpus_per_task': 1.5}, ValueError,
       r'gpus_per_task=1\.5'),
      ('_gpus_per_task_oversubscribing_node', {'gpus_per_task': 3},
       RuntimeError, r'2 tasks .* 3 GPUs per task \(gpus_per_task\) > 4'),
      ('_tasks_per_node_contradicting_slurm', {'tasks_per_node': 3},
       RuntimeError, r"tasks_per_node=3 .*SLURM_STEP_TASKS_PER_NODE='2\(x2\)'"),
      ('_tasks_per_node_dict_other_hosts', {
          'tasks_per_node': {'n1': 2, 'n3': 2}
      }, RuntimeError, r"tasks_per_node names hosts \['n1', 'n3'\]"),
      ('_tasks_per_node_dict_contradicting_slurm', {
          'tasks_per_node': {'n1': 3, 'n2': 1}
      }, RuntimeError, r"tasks_per_node=\{'n1': 3, 'n2': 1\}"),
      ('_tasks_per_node_string', {'tasks_per_node': '2'}, ValueError,
       r"tasks_per_node='2'"),
      ('_tasks_per_node_negative', {'tasks_per_node': -1}, ValueError,
       r'tasks_per_node=-1'),
      ('_tasks_per_node_bool', {'tasks_per_node': True}, ValueError,
       r'tasks_per_node=True'),
      ('_tasks_per_node_zero', {'tasks_per_node': 0}, ValueError,
       r'tasks_per_node=0'),
      ('_hostlist_expansion_unknown', {'hostlist_expansion': 'shell'},
       ValueError, r"hostlist_expansion='shell'"),
      ('_hostlist_expansion_empty', {'hostlist_expansion': ''}, ValueError,
       r"hostlist_expansion=''"),
      ('_gpus_per_node_above_maximum', {'gpus_per_node': 10**12}, ValueError,
       r'gpus_per_node=1000000000000: expected None or an integer in '
       r'0..1024'),
      ('_gpus_per_task_above_maximum', {'gpus_per_task': 10**12}, ValueError,
       r'gpus_per_task=1000000000000: expected None or an integer in '
       r'0..1024'),
      ('_tasks_per_node_above_maximum', {'tasks_per_node': 10**9},
       ValueError, r'tasks_per_node=1000000000: expected None or an integer '
       r'in 1..65533'),
      ('_tasks_per_node_dict_host_not_a_string', {
          'tasks_per_node': {'n1': 2, 2: 2}
      }, ValueError, r'tasks_per_node: host 2 is not a string'),
      ('_job_count_above_maximum', {'jobs': {'worker': 10**12}}, ValueError,
       r"jobs\['worker'\]=1000000000000: expected an integer in"),
      ('_rpc_layer_not_a_string', {'rpc_layer': 5}, ValueError,
       r'rpc_layer=5: expected a string or None'),
      ('_auto_set_gpu_string', {'auto_set_gpu': 'no'}, ValueError,
       r"auto_set_gpu='no': expected True or False"),
  )
  def testBadArgument(self, kwargs, error, regex):
    self.use_env(self.base_env)
    self.assertResolverFails(error, regex, **kwargs)

  def testHugeGpusPerNodeWithoutGpuVariablesBuildsNoDeviceList(self):
    # Refused before a device name is made for each of 10**12 GPUs.
    self.use_env(slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0))
    self.assertResolverFails(ValueError, r'gpus_per_node=1000000000000',
                             gpus_per_node=10**12)

  def testRepeatedReservedPortsAreValueErrorNamingTheVariable(self):
    self.use_env(dict(self.base_env,
                      SLURM_STEP_RESV_PORTS='12000,12000,12000,12000'))
    self.assertResolverFails(
        ValueError, r"SLURM_STEP_RESV_PORTS='12000,12000,12000,12000': ports "
        r'\[12000\] are repeated', port_base='reserved')

  def testHostsThatAreTheSameAsTextAreValueError(self):

    class SameText(SlurmClusterResolver):

      def _resolve_task_configuration(self):
        return {1: 1, '1': 1}

      def _resolve_own_rank(self):
        return 0

      def _resolve_num_tasks(self):
        return 2

    self.use_env(self.base_env)
    with self.assertRaisesRegex(
        ValueError, r"the task configuration: hosts \[1, '1'\] include names "
        r'that are the same as text'):
      SameText(gpus_per_node=0)

  def testHostfileOfRandomBytesIsValueErrorNamingIt(self):
    hostfile = self.create_tempfile(content=bytes(range(256)),
                                    mode='wb').full_path
    self.use_env(dict(self.base_env, SLURM_DISTRIBUTION='arbitrary',
                      SLURM_HOSTFILE=hostfile))
    self.assertResolverFails(
        ValueError, r'SLURM_HOSTFILE=%r: not UTF-8 text' % hostfile)

  def testHostfileThatIsAFifoIsValueError(self):
    fifo = os.path.join(self.create_tempdir().full_path, 'fifo')
    os.mkfifo(fifo)
    self.use_env(dict(self.base_env, SLURM_DISTRIBUTION='arbitrary',
                      SLURM_HOSTFILE=fifo))
    self.assertResolverFails(
        ValueError, r'SLURM_HOSTFILE=%r: not a regular file' % fifo)

  @parameterized.named_parameters(
      ('_unknown_job', {'task_type': 'ps'},
       r"task_type='ps': no such job; the jobs are \['worker'\]"),
      ('_task_past_the_job', {'task_id': 4},
       r"task_id=4: job 'worker' has 4 tasks"),
      ('_task_type_not_a_string', {'task_type': ['worker']},
       r"task_type=\['worker'\]: expected a string"),
      ('_task_id_negative', {'task_id': -1}, r'task_id=-1: expected None or'),
      ('_task_id_string', {'task_id': '1'}, r"task_id='1': expected None or"),
      ('_rpc_layer_not_a_string', {'rpc_layer': 1},
       r'rpc_layer=1: expected a string'),
  )
  def testBadMasterArgumentIsValueErrorNamingIt(self, kwargs, regex):
    self.use_env(self.base_env)
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    with self.assertRaisesRegex(ValueError, regex):
      resolver.master(**kwargs)


class HeterogeneousJobsTest(slurm_test_util.ResolverTestCase):
  """het_jobs: each component of `srun A : B` is a TensorFlow job."""

  @parameterized.named_parameters(*slurm_test_util.HET_SCHEMES)
  def testEachComponentIsAJobIndexedInRankOrder(self, scheme):
    expected_tasks = [('ps', 0), ('worker', 0), ('worker', 1), ('worker', 2)]
    for rank, task in enumerate(expected_tasks):
      with self.subTest(rank=rank):
        self.use_env(slurm_test_util.het_gpu_env(rank, scheme))
        resolver = SlurmClusterResolver(het_jobs=['ps', 'worker'])
        self.assertEqual(
            {'ps': ['n1:8888'], 'worker': ['n2:8888', 'n2:8889', 'n3:8888']},
            resolver.cluster_spec().as_dict())
        self.assertEqual(task, resolver.get_task_info())

  @parameterized.named_parameters(*slurm_test_util.HET_SCHEMES)
  def testComponentZeroOnTheLaterSortedNodeIsTheFirstJob(self, scheme):
    expected = [('ps', 0, 'n3:8888'), ('ps', 1, 'n3:8889'),
                ('worker', 0, 'n1:8888')]
    for rank, (job, index, address) in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(slurm_test_util.het_later_node_env(rank, scheme))
        resolver = SlurmClusterResolver(het_jobs=['ps', 'worker'])
        self.assertEqual({'ps': ['n3:8888', 'n3:8889'], 'worker': ['n1:8888']},
                         resolver.cluster_spec().as_dict())
        self.assertEqual((job, index), resolver.get_task_info())
        self.assertEqual('grpc://' + address, resolver.master())

  def testJobsAgreeingWithTheComponentsAreAccepted(self):
    self.use_env(slurm_test_util.het_gpu_env(2))
    resolver = SlurmClusterResolver(jobs={'worker': 3, 'ps': 1},
                                    het_jobs=('ps', 'worker'))
    self.assertEqual(('worker', 1), resolver.get_task_info())
    self.assertEqual('grpc://n2:8889', resolver.master())

  @parameterized.named_parameters(
      ('_other_counts', {'ps': 2, 'worker': 2}),
      ('_other_names', {'chief': 1, 'worker': 3}),
      ('_one_job_for_all', {'worker': 4}),
  )
  def testJobsContradictingTheComponentsIsRuntimeErrorNamingBoth(self, jobs):
    self.use_env(slurm_test_util.het_gpu_env(2))
    self.assertResolverFails(
        RuntimeError, r"jobs=%s .*het_jobs=\['ps', 'worker'\] gives "
        r"\{'ps': 1, 'worker': 3\}" % re.escape(repr(jobs)), jobs=jobs,
        het_jobs=['ps', 'worker'])

  def testHetJobsInAStepThatIsNotHeterogeneousIsRuntimeError(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        RuntimeError, r"het_jobs=\['ps', 'worker'\] needs a heterogeneous "
        r'step.*SLURM_HET_SIZE is not set', het_jobs=['ps', 'worker'])

  @parameterized.named_parameters(
      ('_string', 'ps,worker', r"het_jobs='ps,worker': expected a list"),
      ('_one_name_string', 'worker', r"het_jobs='worker': expected a list"),
      ('_dict', {'ps': 1, 'worker': 3},
       r"het_jobs=\{'ps': 1, 'worker': 3\}: expected a list"),
      ('_int', 2, r'het_jobs=2: expected a list'),
      ('_name_with_dash', ['ps', 'my-worker'],
       r"het_jobs: job name 'my-worker' is not a valid"),
      ('_empty_name', ['', 'worker'], r"het_jobs: job name '' is not a valid"),
      ('_name_not_a_string', ['ps', None],
       r'het_jobs: job name None is not a valid'),
      ('_too_few_names', ['ps'],
       r"het_jobs=\['ps'\] names 1 components, but the step has tasks of "
       r'component 1'),
      ('_no_names', [], r'het_jobs=\[\] names 0 components'),
  )
  def testBadHetJobsIsValueError(self, het_jobs, regex):
    self.use_env(slurm_test_util.het_gpu_env(1))
    self.assertResolverFails(ValueError, regex, het_jobs=het_jobs)

  @parameterized.named_parameters(
      ('_components_in_node_order', slurm_test_util.het_gpu_env,
       ['n1:8888', 'n2:8888', 'n2:8889', 'n3:8888']),
      ('_component_zero_on_later_node', slurm_test_util.het_later_node_env,
       ['n3:8888', 'n3:8889', 'n1:8888']),
  )
  def testSameJobForTwoComponentsKeepsRankOrder(self, make_env, expected):
    for rank, address in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(make_env(rank))
        resolver = SlurmClusterResolver(het_jobs=['worker', 'worker'])
        self.assertWorkers(expected, resolver)
        self.assertEqual(('worker', rank), resolver.get_task_info())
        self.assertEqual('grpc://' + address, resolver.master())

  @parameterized.named_parameters(
      ('_cpu_only_component', 0, 0, None),
      ('_bound_gpu_0', 1, 1, '0'),
      ('_bound_gpu_1', 2, 1, '1'),
      ('_alone_on_its_node', 3, 1, '0'),
  )
  def testNumAcceleratorsIsThisTasksInTheRealStep(self, rank, gpus, cvd):
    # As recorded on Slurm 22.05: ps has no GPUs, workers 1.
    self.use_env(slurm_test_util.het_gpu_env(rank))
    resolver = SlurmClusterResolver(het_jobs=['ps', 'worker'])
    self.assertEqual({'GPU': gpus}, resolver.num_accelerators())
    self.assertEqual(cvd, os.environ.get('CUDA_VISIBLE_DEVICES'))

  @parameterized.named_parameters(('_ps', 0, 4, '0,1,2,3'),
                                  ('_worker', 2, 1, '1'))
  def testComponentsMayHaveDifferentGpusPerTask(self, rank, gpus, cvd):
    # srun -N1 -n1 --gres=gpu:4 : -N2 -n3 --gpus-per-task=1.
    node_gpus = {'CUDA_VISIBLE_DEVICES': '0,1,2,3',
                 'SLURM_STEP_GPUS': '0,1,2,3', 'SLURM_GPUS_ON_NODE': '4'}
    self.use_env(
        slurm_test_util.het_gpu_env(rank, **(node_gpus if rank == 0 else {})))
    resolver = SlurmClusterResolver(het_jobs=['ps', 'worker'])
    self.assertEqual({'GPU': gpus}, resolver.num_accelerators())
    self.assertEqual(cvd, os.environ['CUDA_VISIBLE_DEVICES'])

  @parameterized.named_parameters(
      ('_first_slurm_22_05', 'slurm_22_05', 'SLURM_JOB_NODELIST_PACK_GROUP_0',
       'SLURM_JOB_NODELIST_HET_GROUP_0'),
      ('_second_slurm_22_05', 'slurm_22_05', 'SLURM_JOB_NODELIST_PACK_GROUP_1',
       'SLURM_JOB_NODELIST_HET_GROUP_1'),
      ('_second_het_group', 'het_group', 'SLURM_JOB_NODELIST_HET_GROUP_1',
       'SLURM_JOB_NODELIST_HET_GROUP_1'),
  )
  def testMissingComponentNodeListIsRuntimeErrorNamingIt(self, scheme, missing,
                                                         named):
    # Also without het_jobs: ranks are not numbered by guesswork.
    self.use_env(slurm_test_util.het_gpu_env(1, scheme, **{missing: None}))
    self.assertResolverFails(RuntimeError, r'%s is not set' % named)

  def testComponentNodeListsLeavingANodeOutIsRuntimeError(self):
    self.use_env(
        slurm_test_util.het_gpu_env(1, SLURM_JOB_NODELIST_PACK_GROUP_1='n2'))
    self.assertResolverFails(RuntimeError,
                             r"Nodes \['n3'\] of the heterogeneous step")

  @parameterized.named_parameters(
      ('_het_size', {'SLURM_HET_SIZE': 'two'}, "SLURM_HET_SIZE='two'"),
      ('_pack_size_alone', {'SLURM_HET_SIZE': None, 'SLURM_PACK_SIZE': 'two'},
       "SLURM_PACK_SIZE='two'"),
  )
  def testBadComponentCountIsValueErrorNamingItsVariable(self, overrides,
                                                         regex):
    self.use_env(slurm_test_util.het_gpu_env(1, **overrides))
    self.assertResolverFails(ValueError, regex)


class PortTest(slurm_test_util.ResolverTestCase):
  """port_base: a number, Slurm's reserved ports, or derived from the ids."""

  @parameterized.named_parameters(
      ('_range', '12000-12003', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {},
       ['n1:12000', 'n1:12001', 'n2:12000', 'n2:12001']),
      ('_range_and_single_port', '12000-12001,12005', 'n[1-2]', '3,1',
       'n1 n1 n1 n2', {}, ['n1:12000', 'n1:12001', 'n1:12005', 'n2:12000']),
      ('_more_than_needed', '12000-12009', 'n1', '2', 'n1 n1', {},
       ['n1:12000', 'n1:12001']),
      ('_cyclic', '12000-12003', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'},
       ['n1:12000', 'n2:12000', 'n1:12001', 'n1:12002', 'n1:12003']),
  )
  def testReservedPortOfATaskIsItsIndexOnItsNode(self, reserved, nodelist,
                                                 tasks_per_node, rank_hosts,
                                                 more, expected):
    for rank, address in enumerate(expected):
      with self.subTest(rank=rank):
        self.use_env(
            slurm_test_util.step_env(nodelist, tasks_per_node, rank_hosts, rank,
                      SLURM_STEP_RESV_PORTS=reserved, **more))
        resolver = SlurmClusterResolver(port_base='reserved')
        self.assertWorkers(expected, resolver)
        self.assertEqual('grpc://' + address, resolver.master())

  def testReservedPortsInHeterogeneousStepAreRefused(self):
    # Slurm reserves each component's ports on its own nodes, yet gives every
    # task the ports of all components: no task can tell which are its own.
    self.use_env(
        slurm_test_util.step_env('n[1,3]',
                                 '1,2',
                                 'n3 n3 n1',
                                 0,
                                 SLURM_STEP_RESV_PORTS='12000-12002',
                                 **dict(slurm_test_util.het_variables(
                                     'slurm_22_05', 'n3', 'n1'),
                                        node_ids='n3 n1')))
    self.assertResolverFails(RuntimeError, r"heterogeneous step.*'derived'",
                             port_base='reserved')

  def testReservedWithoutResvPortsIsRuntimeErrorSayingToUseSrunResvPorts(self):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        RuntimeError, r'SLURM_STEP_RESV_PORTS.*srun --resv-ports',
        port_base='reserved')

  @parameterized.named_parameters(('_on_the_busiest_node', 1, '12000'),
                                  ('_on_another_node', 3, '12000-12001'))
  def testFewerReservedPortsThanTasksOnTheBusiestNodeIsRuntimeError(
      self, rank, reserved):
    # srun -N2 -n4 lays out 3,1: the task alone on n2 must fail too.
    self.use_env(
        slurm_test_util.step_env('n[1-2]', '3,1', 'n1 n1 n1 n2', rank,
                  SLURM_STEP_RESV_PORTS=reserved))
    self.assertResolverFails(
        RuntimeError, r'SLURM_STEP_RESV_PORTS has \d ports .* busiest node '
        r'runs 3 tasks', port_base='reserved')

  @parameterized.named_parameters(
      ('_letters', 'abc'),
      ('_descending', '12003-12000'),
      ('_empty', ''),
      ('_empty_item', '12000,,12001'),
      ('_space_separated', '12000 12001'),
      ('_brackets', '[12000-12001]'),
      ('_negative', '-12000'),
  )
  def testMalformedResvPortsIsValueErrorNamingIt(self, value):
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '2',
                                 'n1 n1',
                                 1,
                                 SLURM_STEP_RESV_PORTS=value))
    self.assertResolverFails(
        ValueError, r'SLURM_STEP_RESV_PORTS=%s' % re.escape(repr(value)),
        port_base='reserved')

  @parameterized.named_parameters(('_zero', '0-1'),
                                  ('_above_65535', '65535-65536'))
  def testReservedPortOutsideOneTo65535IsValueErrorNamingIt(self, value):
    # A port outside 1..65535 is a ValueError (SlurmClusterResolver's
    # port_base), and a malformed Slurm variable is one.
    self.use_env(
        slurm_test_util.step_env('n1',
                                 '2',
                                 'n1 n1',
                                 1,
                                 SLURM_STEP_RESV_PORTS=value))
    self.assertResolverFails(ValueError, r'SLURM_STEP_RESV_PORTS',
                             port_base='reserved')

  def testDefaultPortBaseIs8888EvenWithReservedPorts(self):
    self.use_env(
        slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1,
                  SLURM_STEP_RESV_PORTS='12000-12001'))
    self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'],
                       SlurmClusterResolver())

  def derived(self, job_id='42', step_id='0', rank=0, nodelist='n[1-2]',
              tasks_per_node='2(x2)', rank_hosts='n1 n1 n2 n2'):
    """Returns the workers' addresses with port_base='derived'."""
    self.use_env(
        slurm_test_util.step_env(nodelist, tasks_per_node, rank_hosts, rank,
                  SLURM_JOB_ID=job_id, SLURM_STEP_ID=step_id))
    resolver = SlurmClusterResolver(port_base='derived')
    return resolver.cluster_spec().as_dict()['worker']

  @parameterized.named_parameters(
      ('_small_ids', '1', '0'),
      ('_typical_ids', '4242', '3'),
      ('_large_ids', '4294967294', '4294967293'),
      ('_ids_unset', None, None),
  )
  def testDerivedPortsLieIn20000To32767(self, job_id, step_id):
    for port in slurm_test_util.ports(self.derived(job_id, step_id)):
      self.assertBetween(port, 20000, 32767)

  def testDerivedPortsForManyTasksOnANodeLieIn20000To32767(self):
    ports = slurm_test_util.ports(self.derived('4242', '3', nodelist='n1',
                                tasks_per_node='70',
                                rank_hosts=' '.join(['n1'] * 70)))
    self.assertBetween(min(ports), 20000, 32767)
    self.assertBetween(max(ports), 20000, 32767)

  @parameterized.named_parameters(
      ('_block', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {}),
      ('_cyclic', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'}),
  )
  def testDerivedPortsAreTheSameInEveryTask(self, nodelist, tasks_per_node,
                                            rank_hosts, more):
    specs = []
    for rank in (0, len(rank_hosts.split()) - 1):
      self.use_env(
          slurm_test_util.step_env(nodelist, tasks_per_node, rank_hosts, rank,
                    SLURM_JOB_ID='4242', SLURM_STEP_ID='3', **more))
      specs.append(
          SlurmClusterResolver(port_base='derived').cluster_spec().as_dict())
    self.assertEqual(specs[0], specs[1])

  def testDerivedPortsAreTheSameInEveryComponentOfAHeterogeneousStep(self):
    # Slurm 22.05 sets component 0's SLURM_JOB_ID in every component's tasks.
    specs = []
    for rank in (0, 3):
      self.use_env(slurm_test_util.het_gpu_env(rank))
      resolver = SlurmClusterResolver(port_base='derived',
                                      het_jobs=['ps', 'worker'])
      specs.append(resolver.cluster_spec().as_dict())
    self.assertEqual(specs[0], specs[1])

  @parameterized.named_parameters(
      ('_next_step', ('42', '0'), ('42', '1')),
      ('_later_step', ('42', '0'), ('42', '5')),
      ('_next_job', ('42', '0'), ('43', '0')),
      ('_next_job_earlier_step', ('42', '1'), ('43', '0')),
      ('_large_job_ids', ('1000000', '0'), ('1000001', '0')),
  )
  def testDerivedPortsDifferForAnotherStep(self, ids, other_ids):
    ports = slurm_test_util.ports(self.derived(*ids))
    other_ports = slurm_test_util.ports(self.derived(*other_ids))
    self.assertEmpty(set(ports) & set(other_ports))

  def testDerivedPortsOfARequeuedJobAreTheSame(self):
    # A requeued job keeps its id, restarts its step ids at 0 and may land
    # on other nodes.
    first = self.derived('4242', '0', nodelist='n[1-2]',
                         rank_hosts='n1 n1 n2 n2')
    requeued = self.derived('4242', '0', nodelist='n[3-4]',
                            rank_hosts='n3 n3 n4 n4')
    self.assertEqual(slurm_test_util.ports(first),
                     slurm_test_util.ports(requeued))

  def testDerivedPortsAreConsecutiveOnANode(self):
    ports = slurm_test_util.ports(self.derived(tasks_per_node='3,1',
                                rank_hosts='n1 n1 n1 n2'))
    base = ports[0]
    self.assertEqual([base, base + 1, base + 2, base], ports)

  @parameterized.named_parameters(('_auto', 'auto'), ('_empty', ''),
                                  ('_capitalized', 'Derived'))
  def testUnknownPortBaseStringIsValueError(self, port_base):
    self.use_env(slurm_test_util.step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        ValueError, r"port_base=%s: expected an integer port, 'reserved' or "
        r"'derived'" % re.escape(repr(port_base)), port_base=port_base)


class HostlistCheckTest(slurm_test_util.ResolverTestCase):
  """hostlist_expansion='check': the built-in expansion, checked by scontrol."""

  def use_step(self, nodelist='n[1-2]', rank_hosts='n1 n2'):
    """Uses a two-task step."""
    self.use_env(slurm_test_util.step_env(nodelist, '1(x2)', rank_hosts, 1))

  def resolve(self, hostlist_expansion='check'):
    # gpus_per_node: without nvidia-smi, scontrol is the only command run.
    return SlurmClusterResolver(gpus_per_node=0,
                                hostlist_expansion=hostlist_expansion)

  def testScontrolGivingTheSameNamesResolves(self):
    self.use_step()
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve())
    self.run.assert_called_once()
    self.assertEqual(['scontrol', 'show', 'hostnames', 'n[1-2]'],
                     self.run.call_args[0][0])

  @parameterized.named_parameters(
      ('_other_name', 'n1\nn3\n', r"\['n1', 'n3'\]"),
      ('_other_order', 'n2\nn1\n', r"\['n2', 'n1'\]"),
      ('_fewer_names', 'n1\n', r"\['n1'\]"),
  )
  def testScontrolGivingOtherNamesIsRuntimeErrorShowingBoth(
      self, stdout, scontrol_regex):
    self.use_step()
    self.set_run_result(slurm_test_util.completed(stdout=stdout))
    self.assertResolverFails(
        RuntimeError, r"Hostlist 'n\[1-2\]': the built-in expansion gives "
        r"\['n1', 'n2'\] but `scontrol show hostnames` gives %s" %
        scontrol_regex, gpus_per_node=0, hostlist_expansion='check')

  def testScontrolRejectingWhatTheModuleAcceptsIsRuntimeError(self):
    # Slurm 22.05 rejects text after a bracket; the module accepts it, as
    # Slurm 23.11 does.
    self.use_step('gpu[1-2]-ib', 'gpu1-ib gpu2-ib')
    self.set_run_result(
        slurm_test_util.completed(stderr='Invalid hostlist: gpu[1-2]-ib\n'))
    self.assertResolverFails(
        RuntimeError, r"the built-in expansion gives \['gpu1-ib', 'gpu2-ib'\] "
        r'but `scontrol show hostnames` gives an error \(.*Invalid hostlist',
        gpus_per_node=0, hostlist_expansion='check')

  def testModuleRejectingWhatScontrolAcceptsIsRuntimeError(self):
    # Slurm's parser accepts an unclosed bracket; the module does not.
    self.use_step('n[1-2', 'n1 n2')
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertResolverFails(
        RuntimeError, r"the built-in expansion gives an error \(.*\) but "
        r"`scontrol show hostnames` gives \['n1', 'n2'\]", gpus_per_node=0,
        hostlist_expansion='check')

  def testBothRejectingIsValueErrorNamingTheVariable(self):
    self.use_step('n[2-1]', 'n1 n2')
    self.set_run_result(
        slurm_test_util.completed(stderr='Invalid hostlist: n[2-1]\n'))
    self.assertResolverFails(
        ValueError, r"SLURM_STEP_NODELIST='n\[2-1\]': .*goes down",
        gpus_per_node=0, hostlist_expansion='check')

  def testCheckWithoutScontrolIsRuntimeError(self):
    self.use_step()
    self.assertResolverFails(RuntimeError, r'scontrol is not installed',
                             gpus_per_node=0, hostlist_expansion='check')

  def testScontrolAloneExpandsWhatOnlyItAccepts(self):
    self.use_step('n[1-2', 'n1 n2')
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve('scontrol'))
    self.assertEqual(['scontrol', 'show', 'hostnames', 'n[1-2'],
                     self.run.call_args[0][0])

  def testBuiltinRunsNoScontrol(self):
    self.use_step()
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve('builtin'))
    self.run.assert_not_called()

  @parameterized.named_parameters(('_unknown', 'shell'), ('_empty', ''),
                                  ('_capitalized', 'Check'),
                                  ('_list', ['builtin']), ('_none', None))
  def testUnknownExpansionIsValueErrorNamingTheArgument(self, value):
    self.use_step()
    self.assertResolverFails(
        ValueError, r'hostlist_expansion=%s: expected one of' %
        re.escape(repr(value)), hostlist_expansion=value)



if __name__ == '__main__':
  test.main()
