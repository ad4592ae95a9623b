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
"""SlurmClusterResolver's API: the cluster spec, jobs, master and task info.

Which node each rank runs on is slurm_step_test's; here, what the resolver
makes of it: every task's address (its node, 8888 + its index on the node)
and its job:index.
"""

import dataclasses
import os
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver as slurm_cluster_resolver
from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_step
from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import SlurmClusterResolver
from tensorflow.python.training import server_lib
from tensorflow.python.util import tf_export

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


class TaskAddressTest(slurm_resolver_test_util.ResolverTestCase):
  """A task's address is its node and 8888 + its index on the node."""

  @parameterized.named_parameters(
      ('_block', 'block', '4,1', 'n1 n1 n1 n1 n2',
       ['n1:8888', 'n1:8889', 'n1:8890', 'n1:8891', 'n2:8888']),
      ('_block_cyclic_is_block_across_nodes', 'block:cyclic', '4,1',
       'n1 n1 n1 n1 n2',
       ['n1:8888', 'n1:8889', 'n1:8890', 'n1:8891', 'n2:8888']),
      # srun -n5 -N2 -m cyclic (as recorded on Slurm 22.05).
      ('_cyclic', 'cyclic', '4,1', 'n1 n2 n1 n1 n1',
       ['n1:8888', 'n2:8888', 'n1:8889', 'n1:8890', 'n1:8891']),
      ('_cyclic_block_is_cyclic_across_nodes', 'cyclic:block', '4,1',
       'n1 n2 n1 n1 n1',
       ['n1:8888', 'n2:8888', 'n1:8889', 'n1:8890', 'n1:8891']),
      ('_cyclic_three_levels', 'cyclic:cyclic:fcyclic', '2(x2)', 'n1 n2 n1 n2',
       ['n1:8888', 'n2:8888', 'n1:8889', 'n2:8889']),
  )
  def testEveryTaskGetsTheAddressOfItsPlace(self, distribution, tasks,
                                            rank_hosts, spec):
    self.assertEveryTask(
        step_envs('n[1-2]', tasks, rank_hosts,
                  SLURM_DISTRIBUTION=distribution), {'worker': spec})

  def testPlaneStepGivesPortsInRankOrderOnEachNode(self):
    # srun -n6 -N2 -m plane=2 (as recorded on Slurm 22.05).
    self.assertEveryTask(
        step_envs('n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1',
                  SLURM_DISTRIBUTION='plane', SLURM_DIST_PLANESIZE='2'),
        {'worker': ['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889', 'n1:8890',
                    'n1:8891']})

  @parameterized.named_parameters(
      ('_one_host_a_line', 'n2\nn1\nn2\nn1\nn1\n'),
      ('_hostlists_and_comments', '# ranks 0-3\nn2,n1 n[2,1]\nn1  # rank 4\n'),
  )
  def testArbitraryStepGivesTheHostfilesHostToEachRank(self, content):
    # SLURM_HOSTFILE=<n2,n1,n2,n1,n1> srun -n5 -m arbitrary
    # (as recorded on Slurm 22.05).
    hostfile = self.create_tempfile(content=content).full_path
    self.assertEveryTask(
        step_envs('n[1-2]', '3,2', 'n2 n1 n2 n1 n1', node_ids='n1 n2',
                  SLURM_DISTRIBUTION='arbitrary', SLURM_HOSTFILE=hostfile),
        {'worker': ['n2:8888', 'n1:8888', 'n2:8889', 'n1:8889', 'n1:8890']})

  def testStepSmallerThanItsJobHasTheStepsTasksOnly(self):
    # srun -N1 -n1 inside sbatch -N2 --ntasks-per-node=2
    # (as recorded on Slurm 22.05).
    self.use_env(
        step_env('n1', '1', 'n1', 0, SLURM_JOB_NODELIST='n[1-2]',
                 SLURM_NODELIST='n[1-2]', SLURM_NTASKS_PER_NODE='2',
                 SLURM_JOB_CPUS_PER_NODE='2(x2)'))
    self.assertWorkers(['n1:8888'], SlurmClusterResolver())

  def testBatchScriptIsWorkerZeroOfTheJobWithItsShareOfTheGpus(self):
    self.use_env(slurm_test_util.BATCH_ENV)
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'], resolver)
    self.assertEqual(('worker', 0), resolver.get_task_info())
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())
    self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])

  def testPortBaseAtTheTopOfTheRangeIsAllowed(self):
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(port_base=65534)
    self.assertWorkers(['n1:65534', 'n1:65535'], resolver)


class JobsTest(slurm_resolver_test_util.ResolverTestCase):
  """`jobs` splits the ranks, in order, over the jobs sorted by name."""

  def testJobsDefaultsToOneWorkerPerTask(self):
    self.assertEveryTask(
        step_envs('n[1-3]', '1(x3)', 'n1 n2 n3'),
        {'worker': ['n1:8888', 'n2:8888', 'n3:8888']})

  def testRanksGoToJobsInSortedJobNameOrder(self):
    self.assertEveryTask(
        step_envs('n[1-4]', '1(x4)', 'n1 n2 n3 n4'),
        {'chief': ['n1:8888'], 'evaluator': ['n2:8888'], 'ps': ['n3:8888'],
         'worker': ['n4:8888']},
        tasks=[('chief', 0), ('evaluator', 0), ('ps', 0), ('worker', 0)],
        jobs={'worker': 1, 'ps': 1, 'evaluator': 1, 'chief': 1})

  def testReadmeAdvancedExampleWithPositionalJobs(self):
    self.use_env(step_env('t02n[13,41]', '2(x2)',
                          't02n13 t02n13 t02n41 t02n41', 1))
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
    self.use_env(step_env('t02n[13,41]', '2(x2)',
                          't02n13 t02n13 t02n41 t02n41', 3))
    # jobs, port_base, gpus_per_node, gpus_per_task, tasks_per_node,
    # auto_set_gpu, rpc_layer.
    resolver = SlurmClusterResolver({'ps': 1, 'worker': 3}, 8000, 2, 1, 2, True,
                                    'ab')
    self.assertEqual(('worker', 2), resolver.get_task_info())
    self.assertEqual('ab://t02n41:8001', resolver.master())
    # r1.15's README: t02n41:8889 (here 8001) sees GPU 1.
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(
      ('_int', 2, '2(x2)', 'n1 n1 n2 n2'),
      ('_dict', {'n1': 2, 'n2': 1}, '2,1', 'n1 n1 n2'))
  def testTasksPerNodeAgreeingWithSlurmIsAccepted(self, tasks_per_node,
                                                  slurm_value, rank_hosts):
    self.use_env(step_env('n[1-2]', slurm_value, rank_hosts, 1))
    resolver = SlurmClusterResolver(tasks_per_node=tasks_per_node)
    self.assertEqual('grpc://n1:8889', resolver.master())

  def testTasksPerNodeDictNeedsNoNodeList(self):
    # TF 2.x: a dict needs no SLURM_STEP_NODELIST.
    self.use_env({'SLURM_PROCID': '2'})
    resolver = SlurmClusterResolver(tasks_per_node={'a': 2, 'b': 1},
                                    gpus_per_node=0)
    self.assertWorkers(['a:8888', 'a:8889', 'b:8888'], resolver)
    self.assertEqual(('worker', 2), resolver.get_task_info())

  def testTasksPerNodePassedAreLaidOutAsSlurmLaidOutTheStep(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n2 n1 n2', 0,
                          SLURM_DISTRIBUTION='cyclic'))
    resolver = SlurmClusterResolver(tasks_per_node={'n1': 2, 'n2': 2},
                                    gpus_per_node=0)
    self.assertWorkers(['n1:8888', 'n2:8888', 'n1:8889', 'n2:8889'],
                       resolver)

  @parameterized.named_parameters(('_more', {'worker': 4}, 4),
                                  ('_fewer', {'ps': 1, 'worker': 1}, 2))
  def testTaskCountOtherThanSlurmsIsRuntimeErrorWithBothNumbers(
      self, jobs, requested):
    self.use_env(step_env('n[1-3]', '1(x3)', 'n1 n2 n3', 0))
    self.assertResolverFails(
        RuntimeError, r'Requested %d tasks .* Slurm assigned 3 tasks' %
        requested, jobs=jobs)


class MasterTest(slurm_resolver_test_util.ResolverTestCase):
  """master(): a task's address, with an RPC layer."""

  def setUp(self):
    super().setUp()
    # Rank 3 of srun -N2 --ntasks-per-node=2.
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3))

  def testMasterDefaultsToOwnAddressWithGrpc(self):
    self.assertEqual('grpc://n2:8889', SlurmClusterResolver().master())

  def testMasterOfAnotherTaskWithItsOwnRpcLayer(self):
    resolver = SlurmClusterResolver()
    self.assertEqual('grpc://n1:8889', resolver.master('worker', 1))
    self.assertEqual('test://n2:8888', resolver.master('worker', 2, 'test'))

  def testMasterWithoutRpcLayerIsTheBareAddress(self):
    self.assertEqual('n2:8889', SlurmClusterResolver(rpc_layer=None).master())

  def testMasterKeepsTaskTypeAndIdSetByTheUser(self):
    resolver = SlurmClusterResolver()
    resolver.task_type = 'worker'
    resolver.task_id = 1
    self.assertEqual('grpc://n1:8889', resolver.master())
    self.assertEqual(('worker', 1), resolver.get_task_info())

  def testTaskTypeTaskIdAndRpcLayerAreSettable(self):
    resolver = SlurmClusterResolver(jobs={'chief': 1, 'worker': 3})
    self.assertEqual(('worker', 2), resolver.get_task_info())
    resolver.task_type, resolver.task_id, resolver.rpc_layer = 'chief', 0, 'ab'
    self.assertEqual(('chief', 0), (resolver.task_type, resolver.task_id))
    self.assertEqual('ab://n1:8888', resolver.master())

  def testMasterAndClusterSpecChangeNothing(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 3,
                          CUDA_VISIBLE_DEVICES='4,5,6,7'))
    resolver = SlurmClusterResolver()
    after_init = dict(os.environ)
    for _ in range(3):
      resolver.master()
      resolver.master('worker', 0)
      self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'],
                         resolver)
    self.assertEqual(after_init, dict(os.environ))
    self.assertEqual(('worker', 3), resolver.get_task_info())

  def testFailingMasterCallLeavesResolverAndEnvironmentUnchanged(self):
    resolver = SlurmClusterResolver()
    before = dict(os.environ)
    with self.assertRaisesRegex(ValueError, 'chief'):
      resolver.master('chief', 0)
    self.assertEqual(before, dict(os.environ))
    self.assertEqual(('worker', 3), resolver.get_task_info())
    self.assertEqual('grpc', resolver.rpc_layer)
    self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'], resolver)

  @parameterized.named_parameters(
      # Unknown jobs and tasks: ClusterSpec.task_address's errors.
      ('_unknown_job', {'task_type': 'ps'}, r"No such job in cluster: 'ps'"),
      ('_task_past_the_job', {'task_id': 4},
       r"No task with index 4 in job 'worker'"),
      ('_task_type_not_a_string', {'task_type': ['worker']},
       r"task_type=\['worker'\]: expected a string"),
      ('_task_id_negative', {'task_id': -1},
       r"No task with index -1 in job 'worker'"),
      ('_task_id_string', {'task_id': '1'},
       r"No task with index '1' in job 'worker'"),
      ('_rpc_layer_not_a_string', {'rpc_layer': 1},
       r'rpc_layer=1: expected a string'),
  )
  def testBadMasterArgumentIsValueErrorNamingIt(self, kwargs, regex):
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    with self.assertRaisesRegex(ValueError, regex):
      resolver.master(**kwargs)


class ResolverApiTest(slurm_resolver_test_util.ResolverTestCase):
  """The rest of ClusterResolver's API, as TensorFlow's users call it."""

  def testNumAcceleratorsIsPerTaskWhateverTheArguments(self):
    self.use_env(step_env('n1', '2', 'n1 n1', 0,
                          CUDA_VISIBLE_DEVICES='0,1,2,3'))
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())
    self.assertEqual({'GPU': 2}, resolver.num_accelerators('worker', 1, None))

  def testResolveMethodsReportTheStepOfThisTask(self):
    self.use_env(step_env('n[9-10]', '1,2', 'n9 n10 n10', 2,
                          SLURM_DISTRIBUTION='cyclic'))
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    # pylint: disable=protected-access
    self.assertEqual(
        (2, 3, ['n9', 'n10'], {'n9': 1, 'n10': 2}),
        (resolver._resolve_own_rank(), resolver._resolve_num_tasks(),
         resolver._resolve_hostlist(), resolver._resolve_task_configuration()))

  def testOverridingAResolveMethodDoesNotChangeTheCluster(self):

    class OtherHosts(SlurmClusterResolver):

      def _resolve_hostlist(self):
        return ['a1', 'a2']

    self.use_env(step_env('n[1-2]', '1(x2)', 'n1 n2', 0))
    self.assertEqual({'worker': ['n1:8888', 'n2:8888']},
                     OtherHosts(auto_set_gpu=False).cluster_spec().as_dict())

  def testSubclassMayReadTheStepOfAnotherLaunch(self):

    class OtherLaunch(SlurmClusterResolver):

      def _read_step(self, environ, tasks_per_node):
        del environ, tasks_per_node  # Not Slurm's step: a launch of its own.
        return slurm_step.SlurmStep(nodes=('a1', 'a2'), tasks_per_node=(1, 2),
                                    rank_nodes=(0, 1, 1), task_index=2,
                                    launcher='mpirun')

    self.use_env({'CUDA_VISIBLE_DEVICES': ''})
    resolver = OtherLaunch()
    self.assertWorkers(['a1:8888', 'a2:8888', 'a2:8889'], resolver)
    self.assertEqual(('worker', 2), resolver.get_task_info())

  def testEnvironmentIsEmpty(self):
    self.use_env(step_env('n1', '1', 'n1', 0))
    self.assertEqual('', SlurmClusterResolver().environment)

  def testExportedAsTfDistributeClusterResolver(self):
    self.assertEqual('distribute.cluster_resolver.SlurmClusterResolver',
                     tf_export.get_canonical_name_for_symbol(
                         SlurmClusterResolver))

  @parameterized.named_parameters(
      ('_one_task_per_node', 'n[1-3]', '1(x3)', 'n1 n2 n3', {}, {}),
      ('_cyclic', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'}, {}),
      ('_jobs', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {},
       {'jobs': {'chief': 1, 'ps': 1, 'worker': 2}}),
      ('_het_jobs', 'n[1-3]', '1,2,1', 'n1 n2 n2 n3',
       dict(slurm_test_util.het_variables('het_group', 'n1', 'n[2-3]'),
            SLURM_DISTRIBUTION='block'), {'het_jobs': ['ps', 'worker']}),
  )
  def testClusterSpecEqualsTheClusterSpecOfItsDict(self, nodelist, tasks,
                                                   rank_hosts, more, kwargs):
    self.use_env(step_env(nodelist, tasks, rank_hosts, 1, **more))
    spec = SlurmClusterResolver(auto_set_gpu=False, **kwargs).cluster_spec()
    from_dict = server_lib.ClusterSpec(spec.as_dict())
    self.assertEqual(from_dict, spec)
    self.assertEqual(from_dict.as_dict(), spec.as_dict())
    self.assertEqual(from_dict.as_cluster_def(), spec.as_cluster_def())
    self.assertEqual(sorted(spec.jobs), list(spec.as_cluster_def().job[i].name
                                             for i in range(len(spec.jobs))))


class ResolveTest(slurm_resolver_test_util.ResolverTestCase):
  """resolve(): a step to its cluster, this task's role and its GPUs."""

  def setUp(self):
    super().setUp()
    # Rank 2 of a cyclic step of 2 and 1 tasks on n9 and n10, whose node has
    # GPUs 0 and 1.
    self.step = slurm_step.SlurmStep(
        nodes=('n9', 'n10'), tasks_per_node=(2, 1), rank_nodes=(0, 1, 0),
        task_index=2, gpus=slurm_step.SlurmGpus(visible=('0', '1')))
    self.unnamed_gpus = mock.Mock(return_value=slurm_step.SlurmGpus())

  def resolve(self, step=None, jobs=None):
    return slurm_cluster_resolver.resolve(step or self.step, jobs, 8888, None,
                                          None, self.unnamed_gpus)

  def testStepIsMappedToTheClusterThisTasksRoleAndGpus(self):
    resolution = self.resolve(jobs={'ps': 1, 'worker': 2})
    self.assertEqual((('ps', ('n9:8888',)), ('worker', ('n10:8888',
                                                         'n9:8889'))),
                     resolution.cluster)
    self.assertEqual(('worker', 1),
                     (resolution.task_type, resolution.task_id))
    self.assertEqual(('n9:8888', 'n10:8888', 'n9:8889'), resolution.addresses)
    self.assertEqual(('1',), resolution.gpus.task_gpus)

  def testEnvironmentIsNeitherReadNorChanged(self):
    self.use_env({})
    expected = self.resolve()
    self.use_env(step_env('x[1-5]', '1(x5)', 'x1 x2 x3 x4 x5', 0,
                          CUDA_VISIBLE_DEVICES='7'))
    before = dict(os.environ)
    self.assertEqual(expected, self.resolve())
    self.assertEqual(before, dict(os.environ))

  def testUnnamedGpusAreAskedForOnlyWhereNoVariableNamesAny(self):
    self.resolve()
    self.unnamed_gpus.assert_not_called()
    self.resolve(dataclasses.replace(self.step, gpus=slurm_step.SlurmGpus()))
    self.unnamed_gpus.assert_called_once_with()

  def testResolutionIsFrozen(self):
    resolution = self.resolve()
    with self.assertRaises(dataclasses.FrozenInstanceError):
      resolution.task_id = 0


if __name__ == '__main__':
  absltest.main()
