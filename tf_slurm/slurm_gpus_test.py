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
"""The GPUs SlurmClusterResolver gives each task (CUDA_VISIBLE_DEVICES).

The rule: GPUs Slurm bound to a task are kept. Otherwise the task of local
index l on a node gets entries [l*k, (l+1)*k) of the node's list, by value,
where k = G // T: G GPUs per node, T tasks on the busiest node of the step
(of the component, in a heterogeneous step: slurm_het_test); when k would be
0, the tasks share: entry l mod G.
"""

import os

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver as tf_slurm_resolver
from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


class BoundGpusTest(slurm_resolver_test_util.ResolverTestCase):
  """GPUs Slurm bound to the task itself are the task's."""

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
  def testBoundGpusAreKeptAsTheyAre(self, cvd, gpus, rank, tasks, rank_hosts,
                                    more):
    self.use_gpu_env(cvd, rank=rank, tasks=tasks, rank_hosts=rank_hosts,
                     **more)
    before = dict(os.environ)
    resolver = SlurmClusterResolver()
    self.assertEqual(before, dict(os.environ))
    self.assertEqual({'GPU': gpus}, resolver.num_accelerators())

  def testGpusPerTaskTakesTheFirstOfTheBoundGpus(self):
    self.use_gpu_env('2,3', SLURMD_TRES_BIND='gpu:per_task:2',
                     SLURM_GPUS_ON_NODE='4')
    resolver = SlurmClusterResolver(gpus_per_task=1)
    self.assertEqual('2', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testMoreGpusPerTaskThanBoundIsRuntimeErrorWithBothNumbers(self):
    self.use_gpu_env('1', SLURMD_TRES_BIND='gpu:per_task:1',
                     SLURM_GPUS_ON_NODE='2')
    self.assertResolverFails(RuntimeError, r'Requested 2 GPUs per task .* 1',
                             gpus_per_task=2)


class NodeGpuDealingTest(slurm_resolver_test_util.ResolverTestCase):
  """A node's GPUs are dealt to its tasks by local index, by value."""

  @parameterized.named_parameters(
      # srun -N2 -n3 --gres=gpu:1 lays out 2,1: k = 1 // 2 = 0, shared.
      ('_gres1_2_1', '2,1', 'n1 n1 n2', '0', ['0', '0', '0']),
      # srun -N2 -n4 -m cyclic --gres=gpu:2 lands 3,1: shared.
      ('_cyclic_gres2_3_1', '3,1', 'n1 n2 n1 n1', '0,1',
       ['0', '0', '1', '0'], 'cyclic'),
      # srun -N2 -n6 --gpus-per-node=3 lays out 4,2: shared.
      ('_gpus_per_node3_4_2', '4,2', 'n1 n1 n1 n1 n2 n2', '0,1,2',
       ['0', '1', '2', '0', '0', '1']),
      # srun -N2 -n3 --gres=gpu:4 lays out 2,1: k = 2, also on n2.
      ('_gres4_2_1', '2,1', 'n1 n1 n2', '0,1,2,3', ['0,1', '2,3', '0,1']),
      # srun -N2 --ntasks-per-node=2 --gres=gpu:4, Slurm's list by value.
      ('_by_value', '2(x2)', 'n1 n1 n2 n2', '4,5,6,7',
       ['4,5', '6,7', '4,5', '6,7']),
  )
  def testEveryTaskGetsItsShareOfItsNodesList(self, tasks, rank_hosts, cvd,
                                              gpus, distribution=None):
    self.assertEveryTask(
        step_envs('n[1-2]', tasks, rank_hosts, CUDA_VISIBLE_DEVICES=cvd,
                  SLURM_DISTRIBUTION=distribution, SLURM_STEP_GPUS=cvd,
                  SLURM_GPUS_ON_NODE=str(len(cvd.split(',')))),
        gpus=gpus)

  def testGresGpusOfABatchJobStepAreSplitAmongLocalTasks(self):
    # srun inside sbatch -N2 --ntasks-per-node=2 --gres=gpu:2
    # (as recorded on Slurm 22.05).
    self.assertEveryTask(
        step_envs('n[1-2]', '2(x2)', 'n1 n1 n2 n2', CUDA_VISIBLE_DEVICES='0,1',
                  SLURM_STEP_GPUS='0,1', SLURM_JOB_GPUS='0,1',
                  SLURM_GPUS_ON_NODE='2'),
        gpus=['0', '1', '0', '1'])

  def testGpuBindClosestGivingEveryTaskTheNodesGpusIsSplit(self):
    # srun --gpus-per-node=4 --gpu-bind=closest: without a GPU topology every
    # task of a node sees all four GPUs.
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', CUDA_VISIBLE_DEVICES='0,1,2,3',
                  SLURM_GPUS_ON_NODE='4', SLURMD_TRES_BIND='gpu:closest'),
        gpus=['0,1', '2,3'])

  @parameterized.named_parameters(
      ('_uuids', 'GPU-8f2a1c3e-0000-1111-2222-333344445555,'
       'GPU-19d0e6b7-6666-7777-8888-9999aaaabbbb',
       'GPU-19d0e6b7-6666-7777-8888-9999aaaabbbb'),
      ('_mig', 'MIG-GPU-aa/1/0,MIG-GPU-aa/2/0', 'MIG-GPU-aa/2/0'))
  def testSharedGpusAreDealtByTheirNames(self, cvd, expected):
    self.use_gpu_env(cvd, rank=3, tasks='4', rank_hosts='n1 n1 n1 n1')
    SlurmClusterResolver()
    self.assertEqual(expected, os.environ['CUDA_VISIBLE_DEVICES'])

  def testTaskOnALessBusyNodeIsToldItsGpusStayUnused(self):
    # srun -N2 -n3 --gres=gpu:4, rank 2 alone on n2: 2 of its 4 GPUs.
    self.use_env(step_env('n[1-2]', '2,1', 'n1 n1 n2', 2,
                          CUDA_VISIBLE_DEVICES='0,1,2,3',
                          SLURM_GPUS_ON_NODE='4'))
    with self.assertLogs(level='INFO') as logs:
      SlurmClusterResolver()
    self.assertRegex('\n'.join(logs.output),
                     r'2 of this node\'s 4 GPUs stay unused.*gpus_per_task')

  def testGpusSpreadUnevenlyByGpusTotalWarnThatWorkersMayDiffer(self):
    # salloc -N3 -n5 --gpus=5: n1 got 3 GPUs, n2 and n3 one each.
    self.use_env(step_env('n[1-3]', '3,1,1', 'n1 n1 n1 n2 n3', 0,
                          CUDA_VISIBLE_DEVICES='0,1,2', SLURM_GPUS='5',
                          SLURM_GPUS_ON_NODE='3'))
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertRegex('\n'.join(logs.output),
                     r'SLURM_GPUS=5 .* 3 nodes .* gave this one 3')

  def testGpusTotalSpreadEvenlyIsNotWarned(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 0,
                          CUDA_VISIBLE_DEVICES='0,1', SLURM_GPUS='a100:4'))
    with self.assertNoLogs(level='WARNING'):
      SlurmClusterResolver()

  def testMalformedGpusTotalIsValueErrorNamingIt(self):
    self.use_env(step_env('n1', '1', 'n1', 0, CUDA_VISIBLE_DEVICES='0',
                          SLURM_GPUS='four'))
    self.assertResolverFails(ValueError, r"SLURM_GPUS='four'")


class SharedGpuTest(slurm_resolver_test_util.ResolverTestCase):
  """Fewer GPUs than tasks on a node: tasks share them, and are told."""

  def use_shared_env(self, rank, **more):
    """Task `rank` of three on a node whose GPUs are 4,5."""
    self.use_gpu_env('4,5', rank=rank, tasks='3', rank_hosts='n1 n1 n1',
                     **more)

  def testTaskOfLocalIndexLGetsEntryLModuloTheGpuCount(self):
    self.assertEveryTask(
        step_envs('n1', '3', 'n1 n1 n1', CUDA_VISIBLE_DEVICES='4,5',
                  SLURM_STEP_GPUS='4,5', SLURM_GPUS_ON_NODE='2'),
        gpus=['4', '5', '4'])

  def testTaskSharingItsGpuSetsAllowGrowth(self):
    self.use_shared_env(2)
    SlurmClusterResolver()
    self.assertEqual('true', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])

  def testTaskWithAGpuOfItsOwnSetsNoAllowGrowth(self):
    self.use_shared_env(1)
    SlurmClusterResolver()
    self.assertNotIn('TF_FORCE_GPU_ALLOW_GROWTH', os.environ)

  def testAllowGrowthSetByTheUserIsKept(self):
    self.use_shared_env(2, TF_FORCE_GPU_ALLOW_GROWTH='false')
    SlurmClusterResolver()
    self.assertEqual('false', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])

  def testSharedGpuWithoutAutoSetGpuChangesNothing(self):
    self.use_shared_env(2)
    before = dict(os.environ)
    resolver = SlurmClusterResolver(auto_set_gpu=False)
    self.assertEqual(before, dict(os.environ))
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(('_shared', 2, 'used by 2 task(s)'),
                                  ('_own', 1, 'used by 1 task(s)'))
  def testEveryTaskIsWarnedHowManyTasksUseItsGpu(self, rank, text):
    self.use_shared_env(rank)
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertIn(text, '\n'.join(logs.output))


class GpuCountTest(slurm_resolver_test_util.ResolverTestCase):
  """Without Slurm's list: gpus_per_node, else nvidia-smi, else none."""

  @parameterized.named_parameters(('_empty', ''),
                                  ('_no_dev_files', 'NoDevFiles'))
  def testNoGpuValueMeansNoGpus(self, cvd):
    self.use_gpu_env(cvd)
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.assertEqual(cvd, os.environ['CUDA_VISIBLE_DEVICES'])
    self.run.assert_not_called()

  def testCpuOnlyStepWithoutNvidiaSmiHasNoGpus(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    resolver = SlurmClusterResolver()
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)
    self.assertEqual(['nvidia-smi', '--list-gpus'], self.run.call_args[0][0])

  def testNvidiaSmiCountsGpusWhenCudaVisibleDevicesIsUnset(self):
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    self.assertEveryTask(step_envs('n1', '2', 'n1 n1'), gpus=['0', '1'])

  def testNvidiaSmiWithoutDevicesMeansNoGpus(self):
    self.set_run_result(
        slurm_test_util.completed(returncode=6,
                                  stdout='No devices were found\n'))
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    self.assertEqual({'GPU': 0}, SlurmClusterResolver().num_accelerators())
    self.assertNotIn('CUDA_VISIBLE_DEVICES', os.environ)

  def testFailingNvidiaSmiIsRuntimeError(self):
    self.set_run_result(
        slurm_test_util.completed(
            returncode=9,
            stdout='NVIDIA-SMI has failed because it couldn\'t communicate '
            'with the NVIDIA driver.\n'))
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    self.assertResolverFails(RuntimeError, r'nvidia-smi.*status 9')

  def testNvidiaSmiFailingWithAnyOtherStatusIsRuntimeError(self):
    self.set_run_result(
        slurm_test_util.completed(returncode=9,
                                  stdout='No devices were found\n'))
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    self.assertResolverFails(RuntimeError, r'nvidia-smi.*status 9')

  def testGpusPerNodeIsDealtWithoutRunningNvidiaSmi(self):
    self.assertEveryTask(step_envs('n1', '2', 'n1 n1'), gpus=['0', '1'],
                         gpus_per_node=2)
    self.run.assert_not_called()

  def testExplicitZeroGpusPerNodeHidesTheNodesGpus(self):
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    resolver = SlurmClusterResolver(gpus_per_node=0)
    self.run.assert_not_called()
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  def testExplicitGpusPerNodeWinsOverEmptyCudaVisibleDevices(self):
    # As TensorFlow: '' is the user's (Slurm never writes it), and an explicit
    # count deals GPUs 0..gpus_per_node-1.
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', CUDA_VISIBLE_DEVICES=''),
        gpus=['0,1', '2,3'], gpus_per_node=4, gpus_per_task=2)
    self.run.assert_not_called()

  def testExplicitGpusPerTaskAloneWinsOverEmptyCudaVisibleDevices(self):
    self.set_run_result(slurm_test_util.completed(
        stdout='GPU 0: A\nGPU 1: B\n'))
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', CUDA_VISIBLE_DEVICES=''),
        gpus=['0', '1'], gpus_per_task=1)

  def testExplicitGpusPerNodeOnNoDevFilesIsRuntimeError(self):
    # NoDevFiles is Slurm's "no GPU for this task": dealing GPU ids there
    # would hand out GPUs Slurm gave someone else.
    self.use_gpu_env('NoDevFiles')
    self.assertResolverFails(RuntimeError,
                             r"gpus_per_node=2 but this node has 0 "
                             r"\(CUDA_VISIBLE_DEVICES='NoDevFiles'\)",
                             gpus_per_node=2)

  def testExplicitGpusPerNodeBelowTheTaskCountLeavesTasksWithout(self):
    # As TF 2.x: 2 GPUs per node for 4 tasks is 0 per task when asked for.
    self.use_gpu_env('0,1', rank=2, tasks='4', rank_hosts='n1 n1 n1 n1')
    with self.assertLogs(level='WARNING') as logs:
      resolver = SlurmClusterResolver(gpus_per_node=2)
    self.assertIn("each task uses 0 GPU(s): 2 of this node's 2 GPUs stay "
                  'unused', '\n'.join(logs.output))
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  def testMoreGpusPerNodeThanSlurmGaveIsRuntimeErrorWithBothNumbers(self):
    self.use_gpu_env('0,1', SLURM_GPUS_ON_NODE='2')
    self.assertResolverFails(RuntimeError, r'gpus_per_node=4 but .* has 2',
                             gpus_per_node=4)

  def testGpuOversubscriptionOfAnyNodeFailsOnEveryTask(self):
    # srun -N2 -n3 lays out 2,1: 2 tasks x 2 GPUs exceed n1's 2 GPUs, so the
    # task alone on n2 must fail too instead of waiting for the others.
    self.use_env(step_env('n[1-2]', '2,1', 'n1 n1 n2', 2))
    self.assertResolverFails(RuntimeError, r'2 GPUs per task',
                             gpus_per_node=2, gpus_per_task=2)

  @parameterized.named_parameters(('_list', '0,1', 2), ('_empty', '', 0),
                                  ('_no_dev_files', 'NoDevFiles', 0))
  def testGetNumGpusCountsCudaVisibleDevices(self, cvd, expected):
    self.use_env({'CUDA_VISIBLE_DEVICES': cvd})
    self.assertEqual(expected, tf_slurm_resolver.get_num_gpus())

  def testGetNumGpusWithoutNvidiaSmiIsZero(self):
    self.use_env({})
    self.assertEqual(0, tf_slurm_resolver.get_num_gpus())


class WithheldGpuTest(slurm_resolver_test_util.ResolverTestCase):
  """A step Slurm gave no GPUs on a node whose GPUs it manages gets none."""

  def use_job_gpus_env(self, rank=1, **more):
    """A step of a job that has GPUs 0,1 on n1, given none of them."""
    self.use_env(step_env('n1', '2', 'n1 n1', rank, SLURM_JOB_GPUS='0,1',
                          **more))

  def testStepGivenNoneOfTheJobsGpusHidesThemAll(self):
    self.use_job_gpus_env()
    resolver = SlurmClusterResolver()
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.run.assert_not_called()

  def testStepGivenNoneOfTheJobsGpusSaysSoOnce(self):
    self.use_job_gpus_env()
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertLen(logs.output, 1)
    self.assertIn("Slurm manages the GPUs (SLURM_JOB_GPUS) and gave "
                  'this step none', logs.output[0])

  def testGpusPerNodeInAStepGivenNoneOfTheJobsGpusIsRuntimeError(self):
    self.use_job_gpus_env()
    self.assertResolverFails(
        RuntimeError, r"gpus_per_node=1 but this node has 0 \(SLURM_JOB_GPUS="
        r"'0,1': the job's, and this step has none of them\)",
        gpus_per_node=1)

  def testGpusPerTaskInAStepGivenNoneOfTheJobsGpusIsRuntimeError(self):
    self.use_job_gpus_env()
    self.assertResolverFails(RuntimeError, r'> 0 GPUs per node',
                             gpus_per_task=1)

  def testJobGpusInTheBatchScriptOfAOneTaskJobAreItsOwn(self):
    # sbatch -n1 --gres=gpu:2: the batch script is the job's one task.
    env = dict(slurm_test_util.BATCH_ENV, SLURM_JOB_NODELIST='n1',
               SLURM_NODELIST='n1', SLURM_NNODES='1', SLURM_NTASKS='1',
               SLURM_NPROCS='1', SLURM_TASKS_PER_NODE='1',
               SLURM_JOB_CPUS_PER_NODE='1')
    del env['CUDA_VISIBLE_DEVICES'], env['SLURM_NTASKS_PER_NODE']
    self.use_env(env)
    resolver = SlurmClusterResolver()
    self.assertEqual('0,1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testWhereSlurmConfListsGpuAStepWithoutGpuVariablesGetsNone(self):
    conf = self.use_slurm_conf('ClusterName=lab\nGresTypes=gpu\n')
    self.use_env(step_env('n1', '2', 'n1 n1', 1, SLURM_CONF=conf))
    with self.assertLogs(level='INFO') as logs:
      resolver = SlurmClusterResolver()
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.run.assert_not_called()
    self.assertLen(logs.output, 1)
    self.assertIn("Slurm manages the GPUs (%s) and gave this step "
                  'none' % conf, logs.output[0])

  def testWhereSlurmConfListsNoGpuNvidiaSmiCountsTheNodesGpus(self):
    conf = self.use_slurm_conf('GresTypes=mps,shard\n#GresTypes=gpu\n')
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    self.assertEveryTask(step_envs('n1', '2', 'n1 n1', SLURM_CONF=conf),
                         gpus=['0', '1'])

  def testWithoutASlurmConfNvidiaSmiCountsAndWarnsItCouldNotTell(self):
    self.set_run_result(
        slurm_test_util.completed(stdout=slurm_test_util.NVIDIA_SMI_TWO_GPUS))
    self.use_env(step_env('n1', '2', 'n1 n1', 1))
    with self.assertLogs(level='WARNING') as logs:
      SlurmClusterResolver()
    self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertIn('can be read to tell whether Slurm manages GPUs: using '
                  'the 2 GPUs that nvidia-smi lists', '\n'.join(logs.output))

  def testGetNumGpusWhereSlurmConfListsGpuIsZero(self):
    self.use_env({'SLURM_CONF': self.use_slurm_conf('GresTypes=gpu\n')})
    self.assertEqual(0, tf_slurm_resolver.get_num_gpus())
    self.run.assert_not_called()


def _bound_envs(tasks, cvds, bind, on_node, nodes='n1'):
  """Every task of a step whose GPUs Slurm bound: `cvds[rank]` each."""
  rank_hosts = ' '.join('n%d' % (1 + rank // tasks)
                        for rank in range(len(cvds)))
  counts = '%d(x%d)' % (tasks, len(cvds) // tasks)
  return [step_env(nodes, counts, rank_hosts, rank, CUDA_VISIBLE_DEVICES=cvd,
                   GPU_DEVICE_ORDINAL=cvd, SLURM_STEP_GPUS=cvd,
                   SLURM_GPUS_ON_NODE=str(on_node), SLURMD_TRES_BIND=bind)
          for rank, cvd in enumerate(cvds)]


class GpusSlurmMakesTasksShareTest(slurm_resolver_test_util.ResolverTestCase):
  """GPUs Slurm binds to several tasks of a node: kept, with allow-growth.

  Each task gets (CUDA_VISIBLE_DEVICES, GPUs, TF_FORCE_GPU_ALLOW_GROWTH).
  Slurm 22.05 writes SLURMD_TRES_BIND=gpu:..., 24.11 on gres/gpu:...
  """

  def gpus_of_every_task(self, envs, **kwargs):
    got = []
    for env in envs:
      self.use_env(env)
      resolver = SlurmClusterResolver(**kwargs)
      got.append((os.environ.get('CUDA_VISIBLE_DEVICES'),
                  resolver.num_accelerators()['GPU'],
                  os.environ.get('TF_FORCE_GPU_ALLOW_GROWTH')))
    return got

  @parameterized.named_parameters(('_22_05', 'gpu:single:2'),
                                  ('_24_11', 'gres/gpu:single:2'))
  def testNtasksPerGpuTwoSharesEachNodesGpu(self, bind):
    # srun -N2 -n4 --ntasks-per-gpu=2: one GPU per node, for both tasks.
    envs = _bound_envs(2, ['0', '0', '0', '0'], bind, 1, nodes='n[1-2]')
    self.assertEqual([('0', 1, 'true')] * 4, self.gpus_of_every_task(envs))

  def testGpuBindSingleTwoOfFourGpusSharesPairs(self):
    # srun -N1 --gpus-per-node=4 --ntasks-per-node=4 --gpu-bind=single:2.
    envs = _bound_envs(4, ['0', '0', '1', '1'], 'gres/gpu:single:2', 4)
    self.assertEqual([('0', 1, 'true'), ('0', 1, 'true'), ('1', 1, 'true'),
                      ('1', 1, 'true')], self.gpus_of_every_task(envs))

  def testGpuBindSingleTwoLeavesTheOddTaskItsGpuAlone(self):
    # srun --gpus-per-node=2 --ntasks-per-node=3 --gpu-bind=single:2.
    envs = _bound_envs(3, ['0', '0', '1'], 'gpu:single:2', 2)
    self.assertEqual([('0', 1, 'true'), ('0', 1, 'true'), ('1', 1, None)],
                     self.gpus_of_every_task(envs))

  def testGpuBindMapToOneGpuSharesIt(self):
    # srun --gpus-per-node=2 --ntasks-per-node=2 --gpu-bind=map_gpu:1.
    envs = _bound_envs(2, ['1', '1'], 'gpu:map_gpu:1', 2)
    self.assertEqual([('1', 1, 'true')] * 2, self.gpus_of_every_task(envs))

  def testGpuBindMasksShareWhereTheyOverlap(self):
    # srun --gpus-per-node=4 --ntasks-per-node=3 --gpu-bind=mask_gpu:0x3,0x4:
    # the masks are reused from the start, so tasks 0 and 2 share GPUs 0,1.
    envs = _bound_envs(3, ['0,1', '2', '0,1'], 'gpu:mask_gpu:0x3,0x4', 4)
    self.assertEqual([('0,1', 2, 'true'), ('2', 1, None), ('0,1', 2, 'true')],
                     self.gpus_of_every_task(envs))

  @parameterized.named_parameters(
      ('_gpus_per_task', 'gpu:per_task:1'), ('_single_1', 'gpu:single:1'),
      ('_map_distinct', 'gres/gpu:verbose,map_gpu:0,1'),
      ('_map_repeated', 'gpu:map_gpu:0*1,1*3'))
  def testGpusOfTheirOwnSetNoAllowGrowth(self, bind):
    envs = _bound_envs(2, ['0', '1'], bind, 2)
    self.assertEqual([('0', 1, None), ('1', 1, None)],
                     self.gpus_of_every_task(envs))

  def testAllowGrowthSetByTheUserIsKept(self):
    env = _bound_envs(2, ['1', '1'], 'gpu:map_gpu:1', 2)[0]
    env['TF_FORCE_GPU_ALLOW_GROWTH'] = 'false'
    self.assertEqual([('1', 1, 'false')], self.gpus_of_every_task([env]))

  @parameterized.named_parameters(('_map', 'gpu:map_gpu:1,x'),
                                  ('_mask', 'gpu:mask_gpu:0x3,'),
                                  ('_single', 'gpu:single:0'))
  def testMalformedBindingIsValueErrorNamingIt(self, bind):
    self.use_env(_bound_envs(2, ['1', '1'], bind, 2)[0])
    self.assertResolverFails(ValueError, r'SLURMD_TRES_BIND=')


class UnboundStepGpusTest(slurm_resolver_test_util.ResolverTestCase):
  """--gpu-bind=none: Slurm 22.05 names no GPU, but the step holds some."""

  def setUp(self):
    super().setUp()
    # Slurm manages the GPUs: the step's are known from its variables alone.
    self.conf = self.use_slurm_conf('GresTypes=gpu\n')

  @parameterized.named_parameters(
      # srun -N2 --ntasks-per-node=2 --gpus-per-node=2 --gpu-bind=none.
      ('_srun', {}),
      # The same srun inside sbatch --gpus-per-node=2.
      ('_in_batch_job', {'SLURM_JOB_GPUS': '0,1'}))
  def testStepsGpusOnTheNodeAreDealt(self, more):
    self.assertEveryTask(
        step_envs('n[1-2]', '2(x2)', 'n1 n1 n2 n2', SLURM_CONF=self.conf,
                  SLURMD_TRES_BIND='gpu:none', SLURM_GPUS_ON_NODE='2',
                  **more),
        gpus=['0', '1', '0', '1'])
    self.run.assert_not_called()

  def testInSlurm2411FormTheyAreDealtToo(self):
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', SLURM_CONF=self.conf,
                  SLURMD_TRES_BIND='gres/gpu:none', SLURM_GPUS_ON_NODE='2',
                  CUDA_VISIBLE_DEVICES='0,1', SLURM_STEP_GPUS='0,1'),
        gpus=['0', '1'])

  def testWithoutGpusOnTheNodeTheStepHasNone(self):
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', SLURM_CONF=self.conf,
                  SLURMD_TRES_BIND='gpu:none', SLURM_JOB_GPUS='0,1'),
        gpus=['', ''])


class ExplicitZeroGpusTest(slurm_resolver_test_util.ResolverTestCase):
  """gpus_per_node=0 hides every GPU, also those Slurm bound or gave."""

  @parameterized.named_parameters(
      ('_bound', {'SLURMD_TRES_BIND': 'gpu:per_task:1',
                  'SLURM_GPUS_ON_NODE': '2'}),
      ('_bound_shared', {'SLURMD_TRES_BIND': 'gpu:map_gpu:1',
                         'SLURM_GPUS_ON_NODE': '2'}),
      ('_given_to_the_node', {}))
  def testTaskGetsNoGpu(self, more):
    self.use_gpu_env('1', **more)
    resolver = SlurmClusterResolver(gpus_per_node=0)
    self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())
    self.assertNotIn('TF_FORCE_GPU_ALLOW_GROWTH', os.environ)

  def testGpusPerTaskBeyondZeroPerNodeIsRuntimeError(self):
    self.use_gpu_env('1', SLURMD_TRES_BIND='gpu:per_task:1',
                     SLURM_GPUS_ON_NODE='2')
    self.assertResolverFails(RuntimeError, r'1 GPUs per task .* 0 per node',
                             gpus_per_node=0, gpus_per_task=1)


class GpuUuidTest(slurm_resolver_test_util.ResolverTestCase):
  """UUIDs in CUDA_VISIBLE_DEVICES (gres.conf Flags=env_uuid) are opaque."""

  _GPU_A = 'GPU-8f2a1c3e-0000-1111-2222-333344445555'
  _GPU_B = 'GPU-19d0e6b7-6666-7777-8888-9999aaaabbbb'
  _MIG_A = 'MIG-5c0b9c4e-0000-1111-2222-333344445555'
  _MIG_B = 'MIG-7e1d2f3a-6666-7777-8888-9999aaaabbbb'

  @parameterized.named_parameters(('_gpus', _GPU_A, _GPU_B),
                                  ('_mig', _MIG_A, _MIG_B))
  def testNodesUuidsAreDealtByValue(self, first, second):
    cvd = first + ',' + second
    self.assertEveryTask(
        step_envs('n1', '2', 'n1 n1', CUDA_VISIBLE_DEVICES=cvd,
                  SLURM_STEP_GPUS=cvd, SLURM_GPUS_ON_NODE='2'),
        gpus=[first, second])

  def testBoundUuidIsKept(self):
    self.use_gpu_env(self._GPU_B, SLURMD_TRES_BIND='gres/gpu:per_task:1',
                     SLURM_GPUS_ON_NODE='2')
    resolver = SlurmClusterResolver()
    self.assertEqual(self._GPU_B, os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testSecondResolverKeepsTheFirstOnesUuid(self):
    cvd = self._GPU_A + ',' + self._GPU_B
    self.use_gpu_env(cvd, SLURM_GPUS_ON_NODE='2')
    SlurmClusterResolver()
    resolver = SlurmClusterResolver()
    self.assertEqual(self._GPU_B, os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())


class GpuEnvironmentTest(slurm_resolver_test_util.ResolverTestCase):
  """CUDA_VISIBLE_DEVICES is written once, and only on success."""

  @parameterized.named_parameters(
      ('_slurm_22_05', {'SLURM_GPUS_ON_NODE': '4'}),
      ('_without_gpus_on_node', {}))
  def testSecondResolverInTheSameProcessDoesNotSplitAgain(self, more):
    self.use_gpu_env('4,5,6,7', **more)
    SlurmClusterResolver()
    resolver = SlurmClusterResolver()
    self.assertEqual('6,7', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

  def testCudaVisibleDevicesNarrowedBelowSlurmsGpusIsKept(self):
    # A wrapper, a TaskProlog or the user left this task GPU 0 of the four
    # Slurm gave the step (GPU_DEVICE_ORDINAL, Slurm's copy, says all four).
    self.use_env(step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='0',
                          SLURM_STEP_GPUS='0,1,2,3',
                          GPU_DEVICE_ORDINAL='0,1,2,3'))
    resolver = SlurmClusterResolver()
    self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testResolverWritesNoVariableButCudaVisibleDevices(self):
    # Slurm's GPU_DEVICE_ORDINAL, the copy it makes of CUDA_VISIBLE_DEVICES,
    # stays as Slurm wrote it.
    self.use_env(step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='4,5',
                          GPU_DEVICE_ORDINAL='4,5'))
    before = dict(os.environ)
    SlurmClusterResolver()
    del before['CUDA_VISIBLE_DEVICES']
    after = dict(os.environ)
    self.assertEqual('5', after.pop('CUDA_VISIBLE_DEVICES'))
    self.assertEqual(before, after)

  def testGpuDeviceOrdinalIsNotRead(self):
    # A GPU_DEVICE_ORDINAL that lists fewer GPUs than CUDA_VISIBLE_DEVICES
    # narrows nothing: the node's four GPUs are dealt to its two tasks.
    self.use_env(step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='0,1,2,3',
                          SLURM_STEP_GPUS='0,1,2,3', GPU_DEVICE_ORDINAL='0'))
    resolver = SlurmClusterResolver()
    self.assertEqual('2,3', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 2}, resolver.num_accelerators())

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


if __name__ == '__main__':
  absltest.main()
