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
makes of it. Tasks are numbered node by node in every layout: a task's
index is the number of the step's tasks on the nodes listed before its own
in SLURM_STEP_NODELIST, plus its SLURM_LOCALID; its address is its node and
8888 + its SLURM_LOCALID.
"""

import dataclasses
import os
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as core_resolver
from tensorflow.python.training import server_lib
from tensorflow.python.util import tf_export
from tf_slurm import resolution
from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_step
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


def _one_task_batch_env():
  """The batch script of `sbatch -n1 --gres=gpu:2`: a job of one task on n1.

  BATCH_ENV (recorded on Slurm 22.05) with the counts of a job of one task.
  """
  env = dict(slurm_test_util.BATCH_ENV, SLURM_JOB_NODELIST='n1',
             SLURM_NODELIST='n1', SLURM_NNODES='1', SLURM_NTASKS='1',
             SLURM_NPROCS='1', SLURM_TASKS_PER_NODE='1',
             SLURM_JOB_CPUS_PER_NODE='1')
  del env['SLURM_NTASKS_PER_NODE']
  return env


class TaskAddressTest(slurm_resolver_test_util.ResolverTestCase):
  """The cluster lists the tasks node by node, whatever Slurm's layout.

  Each node's tasks get 8888, 8889, ... by SLURM_LOCALID; every task finds
  itself at its own node's address (`assertEveryTask`).
  """

  @parameterized.named_parameters(
      ('_block', 'block', 'n1 n1 n1 n1 n2', [0, 1, 2, 3, 4]),
      ('_block_cyclic_is_block_across_nodes', 'block:cyclic',
       'n1 n1 n1 n1 n2', [0, 1, 2, 3, 4]),
      # srun -n5 -N2 -m cyclic (as recorded on Slurm 22.05): ranks 0, 2, 3, 4
      # on n1, rank 1 on n2.
      ('_cyclic', 'cyclic', 'n1 n2 n1 n1 n1', [0, 4, 1, 2, 3]),
      ('_cyclic_block_is_cyclic_across_nodes', 'cyclic:block',
       'n1 n2 n1 n1 n1', [0, 4, 1, 2, 3]),
  )
  def testEveryLayoutListsTheTasksNodeByNode(self, distribution, rank_hosts,
                                             indices):
    # srun -n5 -N2: 4 tasks on n1, 1 on n2. `indices`: each rank's task.
    self.assertEveryTask(
        step_envs('n[1-2]', '4,1', rank_hosts,
                  SLURM_DISTRIBUTION=distribution),
        {'worker': ['n1:8888', 'n1:8889', 'n1:8890', 'n1:8891', 'n2:8888']},
        tasks=[('worker', index) for index in indices])

  def testCyclicStepOfTwoTasksPerNodeListsTheTasksNodeByNode(self):
    # srun -n4 -N2 -m cyclic:cyclic:fcyclic: ranks 0, 2 on n1, 1, 3 on n2.
    self.assertEveryTask(
        step_envs('n[1-2]', '2(x2)', 'n1 n2 n1 n2',
                  SLURM_DISTRIBUTION='cyclic:cyclic:fcyclic'),
        {'worker': ['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889']},
        tasks=[('worker', 0), ('worker', 2), ('worker', 1), ('worker', 3)])

  def testPlaneStepListsTheTasksNodeByNode(self):
    # srun -n6 -N2 -m plane=2 (as recorded on Slurm 22.05): ranks 0, 1, 4, 5
    # on n1, ranks 2, 3 on n2.
    self.assertEveryTask(
        step_envs('n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1',
                  SLURM_DISTRIBUTION='plane', SLURM_DIST_PLANESIZE='2'),
        {'worker': ['n1:8888', 'n1:8889', 'n1:8890', 'n1:8891', 'n2:8888',
                    'n2:8889']},
        tasks=[('worker', 0), ('worker', 1), ('worker', 4), ('worker', 5),
               ('worker', 2), ('worker', 3)])

  def testArbitraryStepListsTheTasksNodeByNode(self):
    # SLURM_HOSTFILE=<n2,n1,n2,n1,n1> srun -n5 -m arbitrary (as recorded on
    # Slurm 22.05): ranks 1, 3, 4 on n1, ranks 0, 2 on n2. The hostfile is
    # not read (here it no longer exists): every task finds its own node.
    hostfile = os.path.join(self.create_tempdir().full_path, 'removed')
    self.assertEveryTask(
        step_envs('n[1-2]', '3,2', 'n2 n1 n2 n1 n1', node_ids='n1 n2',
                  SLURM_DISTRIBUTION='arbitrary', SLURM_HOSTFILE=hostfile),
        {'worker': ['n1:8888', 'n1:8889', 'n1:8890', 'n2:8888', 'n2:8889']},
        tasks=[('worker', 3), ('worker', 0), ('worker', 4), ('worker', 1),
               ('worker', 2)])

  def testStepSmallerThanItsJobHasTheStepsTasksOnly(self):
    # srun -N1 -n1 inside sbatch -N2 --ntasks-per-node=2
    # (as recorded on Slurm 22.05).
    self.use_env(
        step_env('n1', '1', 'n1', 0, SLURM_JOB_NODELIST='n[1-2]',
                 SLURM_NODELIST='n[1-2]', SLURM_NTASKS_PER_NODE='2',
                 SLURM_JOB_CPUS_PER_NODE='2(x2)'))
    self.assertWorkers(['n1:8888'], SlurmClusterResolver())

  def testBatchScriptOfAOneTaskJobIsItsOnlyWorkerWithTheJobsGpus(self):
    self.use_env(_one_task_batch_env())
    resolver = SlurmClusterResolver()
    self.assertWorkers(['n1:8888'], resolver)
    self.assertEqual(('worker', 0), resolver.get_task_info())
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())
    self.assertEqual('0,1', os.environ['CUDA_VISIBLE_DEVICES'])

  def testPortBaseAtTheTopOfTheRangeIsAllowed(self):
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(port_base=65534)
    self.assertWorkers(['n1:65534', 'n1:65535'], resolver)


  def testSubclassRenamingTheHostsGivesEveryTaskItsRenamedAddress(self):

    class Resolver(SlurmClusterResolver):
      """Puts the interconnect's host names in the addresses."""

      def _resolve_hostlist(self):
        return [node + '-ib' for node in super()._resolve_hostlist()]

    for env in step_envs('n[1-2]', '4,1', 'n1 n2 n1 n1 n1'):
      with self.subTest(rank=env['SLURM_PROCID']):
        self.use_env(env)
        resolver = Resolver(auto_set_gpu=False)
        self.assertEqual({'worker': ['n1-ib:8888', 'n1-ib:8889', 'n1-ib:8890',
                                     'n1-ib:8891', 'n2-ib:8888']},
                         resolver.cluster_spec().as_dict())
        self.assertStartsWith(resolver.master(),
                              'grpc://%s-ib:' % env['SLURMD_NODENAME'])

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

  def testTasksPerNodePassedKeepTheTasksNodeByNode(self):
    # srun -n4 -N2 -m cyclic: ranks 0, 2 on n1, ranks 1, 3 on n2.
    self.assertEveryTask(
        step_envs('n[1-2]', '2(x2)', 'n1 n2 n1 n2',
                  SLURM_DISTRIBUTION='cyclic'),
        {'worker': ['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889']},
        tasks=[('worker', 0), ('worker', 2), ('worker', 1), ('worker', 3)],
        tasks_per_node={'n1': 2, 'n2': 2}, gpus_per_node=0)

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
      ('_task_id_negative', {'task_id': -1},
       r"No task with index -1 in job 'worker'"),
      ('_task_id_string', {'task_id': '1'},
       r"No task with index '1' in job 'worker'"),
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

  def testSubclassOfTheCoreGetsTheClusterItsHooksDescribe(self):

    class OtherLaunch(core_resolver.SlurmClusterResolver):
      """Task 2 of a launch of one task on a1 and two on a2."""

      def _resolve_own_rank(self):
        return 2

      def _resolve_num_tasks(self):
        return 3

      def _resolve_hostlist(self):
        return ['a1', 'a2']

      def _resolve_task_configuration(self):
        return {'a1': 1, 'a2': 2}

    self.use_env({'CUDA_VISIBLE_DEVICES': ''})
    resolver = OtherLaunch()
    self.assertWorkers(['a1:8888', 'a2:8888', 'a2:8889'], resolver)
    self.assertEqual(('worker', 2), resolver.get_task_info())
    self.assertEqual('grpc://a2:8889', resolver.master())

  def testEnvironmentIsEmpty(self):
    self.use_env(step_env('n1', '1', 'n1', 0))
    self.assertEqual('', SlurmClusterResolver().environment)

  def testCoresClassIsExportedAsTfDistributeClusterResolver(self):
    # The companion's class, its subclass, takes the name over pip
    # TensorFlow through the overlay (tests/overlay_test.py).
    self.assertEqual('distribute.cluster_resolver.SlurmClusterResolver',
                     tf_export.get_canonical_name_for_symbol(
                         core_resolver.SlurmClusterResolver))

  def testIsASubclassOfTheCoresClass(self):
    self.assertTrue(issubclass(SlurmClusterResolver,
                               core_resolver.SlurmClusterResolver))

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
  """resolution.resolve(): a step to its cluster, this task's role and GPUs."""

  def setUp(self):
    super().setUp()
    # Task 1, the second of n9's two tasks, of a step of 2 and 1 tasks on n9
    # and n10; n9 has GPUs 0 and 1.
    self.step = slurm_step.SlurmStep(
        nodes=('n9', 'n10'), tasks_per_node=(2, 1), rank_nodes=(0, 0, 1),
        task_index=1, gpus=slurm_step.SlurmGpus(visible=('0', '1')))
    self.unnamed_gpus = mock.Mock(return_value=slurm_step.SlurmGpus())

  def resolve(self, step=None, jobs=None):
    return resolution.resolve(step or self.step, jobs, 8888, None, None,
                              self.unnamed_gpus)

  def testStepIsMappedToTheClusterThisTasksRoleAndGpus(self):
    resolved = self.resolve(jobs={'ps': 1, 'worker': 2})
    self.assertEqual((('ps', ('n9:8888',)),
                      ('worker', ('n9:8889', 'n10:8888'))), resolved.cluster)
    self.assertEqual(('worker', 0), (resolved.task_type, resolved.task_id))
    self.assertEqual(('n9:8888', 'n9:8889', 'n10:8888'), resolved.addresses)
    self.assertEqual(('1',), resolved.gpus.task_gpus)

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
    resolved = self.resolve()
    with self.assertRaises(dataclasses.FrozenInstanceError):
      resolved.task_id = 0


if __name__ == '__main__':
  absltest.main()
