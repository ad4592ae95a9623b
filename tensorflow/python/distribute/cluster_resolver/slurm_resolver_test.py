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
"""Tests of SlurmClusterResolver on real step layouts, beyond TensorFlow's."""

import os
import subprocess

from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import get_num_gpus
from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import SlurmClusterResolver
from tensorflow.python.platform import test

mock = test.mock
step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


def _nvidia_smi(returncode=0, stdout='', error=None):
  """A stand-in for subprocess.run of nvidia-smi."""
  if error is not None:
    return mock.patch.object(subprocess, 'run', side_effect=error)
  result = subprocess.CompletedProcess(['nvidia-smi'], returncode, stdout, '')
  return mock.patch.object(subprocess, 'run', return_value=result)


class SlurmResolverTestCase(test.TestCase, parameterized.TestCase):
  """Each test resolves in environments it sets whole; no nvidia-smi."""

  def setUp(self):
    super().setUp()
    self.enter_context(mock.patch.dict(os.environ, clear=True))
    self.enter_context(_nvidia_smi(error=FileNotFoundError('nvidia-smi')))

  def resolve_every_task(self, envs, **kwargs):
    """Returns (cluster, [(job, index, CUDA_VISIBLE_DEVICES)]) of the step.

    Every task must resolve the same cluster, and its own address must be
    on its own node.
    """
    cluster, tasks = None, []
    for env in envs:
      with mock.patch.dict(os.environ, env, clear=True):
        resolver = SlurmClusterResolver(**kwargs)
        spec = resolver.cluster_spec().as_dict()
        if cluster is not None:
          self.assertEqual(cluster, spec)
        cluster = spec
        job, index = resolver.get_task_info()
        self.assertStartsWith(spec[job][index], env['SLURMD_NODENAME'] + ':')
        tasks.append((job, index, os.environ.get('CUDA_VISIBLE_DEVICES')))
    return cluster, tasks


class LayoutTest(SlurmResolverTestCase):
  """Every task finds itself at its own node's address, in any layout."""

  def testNodesKeepListOrderNotTextOrder(self):
    cluster, _ = self.resolve_every_task(step_envs('n[9-10]', '1(x2)',
                                                   'n9 n10'))
    self.assertEqual({'worker': ['n9:8888', 'n10:8888']}, cluster)

  @parameterized.named_parameters(
      ('_block', 'n1 n1 n1 n1 n2', [0, 1, 2, 3, 4]),
      ('_cyclic', 'n1 n2 n1 n1 n1', [0, 4, 1, 2, 3]),
      ('_arbitrary_rank_0_on_the_second_node', 'n2 n1 n1 n1 n1',
       [4, 0, 1, 2, 3]),
  )
  def testEveryLayoutGivesTheSameNodeByNodeCluster(self, rank_hosts,
                                                   indices):
    cluster, tasks = self.resolve_every_task(
        step_envs('n[1-2]', '4,1', rank_hosts))
    self.assertEqual({'worker': ['n1:8888', 'n1:8889', 'n1:8890', 'n1:8891',
                                 'n2:8888']}, cluster)
    self.assertEqual(indices, [index for _, index, _ in tasks])

  def testChiefIsTheFirstTaskOfTheFirstNode(self):
    cluster, tasks = self.resolve_every_task(
        step_envs('n[1-2]', '2,2', 'n1 n2 n1 n2'),
        jobs={'chief': 1, 'worker': 3})
    self.assertEqual({'chief': ['n1:8888'],
                      'worker': ['n1:8889', 'n2:8888', 'n2:8889']}, cluster)
    self.assertEqual([('chief', 0), ('worker', 1), ('worker', 0),
                      ('worker', 2)], [task[:2] for task in tasks])

  def testJobOfNoTasksIsLeftOut(self):
    cluster, _ = self.resolve_every_task(step_envs('n1', '2', 'n1 n1'),
                                         jobs={'ps': 0, 'worker': 2})
    self.assertEqual({'worker': ['n1:8888', 'n1:8889']}, cluster)

  def testTaskInfoIsKnownBeforeClusterSpec(self):
    with mock.patch.dict(os.environ, step_env('n1', '2', 'n1 n1', 1)):
      self.assertEqual(('worker', 1), SlurmClusterResolver().get_task_info())

  def testOtherTaskCountThanSlurmsIsRuntimeError(self):
    with mock.patch.dict(os.environ, step_env('n1', '2', 'n1 n1', 1)):
      with self.assertRaisesRegex(RuntimeError, 'Requested 3 tasks'):
        SlurmClusterResolver(jobs={'worker': 3})

  def testBatchScriptOfSeveralTasksSaysToStartWithSrun(self):
    with mock.patch.dict(os.environ, slurm_test_util.BATCH_ENV):
      with self.assertRaisesRegex(RuntimeError, 'start the program with srun'):
        SlurmClusterResolver()

  def testPortsBeyond65535AreValueError(self):
    with mock.patch.dict(os.environ, step_env('n1', '2', 'n1 n1', 1)):
      with self.assertRaisesRegex(ValueError, 'port_base=65535'):
        SlurmClusterResolver(port_base=65535)


class HooksTest(SlurmResolverTestCase):
  """The constructor reads the step through TensorFlow's hooks."""

  def testSubclassOverridingTheHooksGetsTheClusterTheyDescribe(self):

    class Resolver(SlurmClusterResolver):
      """Describes a step of its own, without Slurm's variables."""

      def _resolve_own_rank(self):
        return 2

      def _resolve_num_tasks(self):
        return 3

      def _resolve_hostlist(self):
        return ['a-ib', 'b-ib']

      def _resolve_task_configuration(self):
        return {'a-ib': 1, 'b-ib': 2}

    resolver = Resolver(auto_set_gpu=False)
    self.assertEqual({'worker': ['a-ib:8888', 'b-ib:8888', 'b-ib:8889']},
                     resolver.cluster_spec().as_dict())
    self.assertEqual(('worker', 2), resolver.get_task_info())

  def testHostlistOverrideRenamesTheNodesOfEveryTask(self):

    class Resolver(SlurmClusterResolver):
      """Puts the interconnect's host names in the addresses."""

      def _resolve_hostlist(self):
        return [node + '-ib' for node in super()._resolve_hostlist()]

    for env in step_envs('n[1-2]', '1,1', 'n2 n1'):
      with self.subTest(rank=env['SLURM_PROCID']):
        with mock.patch.dict(os.environ, env, clear=True):
          resolver = Resolver()
        self.assertEqual({'worker': ['n1-ib:8888', 'n2-ib:8888']},
                         resolver.cluster_spec().as_dict())
        self.assertEqual(env['SLURMD_NODENAME'] + '-ib:8888',
                         resolver.master().split('//')[1])

  def testTasksPerNodeOverridesSlurmsCounts(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 0)
    with mock.patch.dict(os.environ, env, clear=True):
      resolver = SlurmClusterResolver(tasks_per_node=2, jobs={'worker': 4})
    self.assertEqual({'worker': ['n1:8888', 'n1:8889', 'n2:8888',
                                 'n2:8889']},
                     resolver.cluster_spec().as_dict())


class GpuTest(SlurmResolverTestCase):
  """GPUs are dealt by id; GPUs a task already owns stay with it."""

  def testNodesGpusAreDealtByIdInLocalOrder(self):
    envs = step_envs('n[1-2]', '2,2', 'n1 n1 n2 n2',
                     CUDA_VISIBLE_DEVICES='4,5,6,7', SLURM_STEP_GPUS='4,5,6,7')
    _, tasks = self.resolve_every_task(envs)
    self.assertEqual(['4,5', '6,7', '4,5', '6,7'], [t[2] for t in tasks])

  def testEveryTaskGetsTheBusiestNodesShare(self):
    envs = step_envs('n[1-2]', '2,1', 'n1 n1 n2', CUDA_VISIBLE_DEVICES='0,1',
                     SLURM_STEP_GPUS='0,1')
    _, tasks = self.resolve_every_task(envs)
    self.assertEqual(['0', '1', '0'], [t[2] for t in tasks])

  def testGpusSlurmBoundToEachTaskStay(self):
    envs = [
        step_env('n1', '2', 'n1 n1', rank, CUDA_VISIBLE_DEVICES=gpu,
                 SLURM_STEP_GPUS=gpu, SLURM_GPUS_ON_NODE='2',
                 SLURMD_TRES_BIND='gres/gpu:per_task:1')
        for rank, gpu in enumerate(('1', '0'))
    ]
    _, tasks = self.resolve_every_task(envs)
    self.assertEqual(['1', '0'], [t[2] for t in tasks])

  def testNarrowedCudaVisibleDevicesKeepsItsOneGpu(self):
    env = step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='0',
                   SLURM_STEP_GPUS='0,1,2,3', GPU_DEVICE_ORDINAL='0,1,2,3')
    with mock.patch.dict(os.environ, env, clear=True):
      resolver = SlurmClusterResolver()
      self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testSecondResolverKeepsTheFirstOnesShare(self):
    env = step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='0,1',
                   SLURM_STEP_GPUS='0,1')
    with mock.patch.dict(os.environ, env, clear=True):
      SlurmClusterResolver()
      resolver = SlurmClusterResolver()
      self.assertEqual('1', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  def testOnlyCudaVisibleDevicesIsWritten(self):
    env = step_env('n1', '2', 'n1 n1', 1, CUDA_VISIBLE_DEVICES='0,1',
                   SLURM_STEP_GPUS='0,1', GPU_DEVICE_ORDINAL='0,1')
    with mock.patch.dict(os.environ, env, clear=True):
      SlurmClusterResolver()
      after = dict(os.environ)
    self.assertEqual('1', after.pop('CUDA_VISIBLE_DEVICES'))
    del env['CUDA_VISIBLE_DEVICES']
    self.assertEqual(env, after)

  def testStepWithoutTheJobsGpusUsesNone(self):
    env = step_env('n1', '1', 'n1', 0, SLURM_JOB_GPUS='0,1')
    with mock.patch.dict(os.environ, env, clear=True):
      resolver = SlurmClusterResolver()
      self.assertEqual('', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  def testCpuOnlyStepHasNoGpus(self):
    with mock.patch.dict(os.environ, step_env('n[1-2]', '1,1', 'n1 n2', 1)):
      resolver = SlurmClusterResolver()
      self.assertEqual({'worker': ['n1:8888', 'n2:8888']},
                       resolver.cluster_spec().as_dict())
    self.assertEqual({'GPU': 0}, resolver.num_accelerators())

  def testStepWithoutGpuVariablesKeepsItsEnvironment(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 0)
    with mock.patch.dict(os.environ, env, clear=True):
      SlurmClusterResolver()
      self.assertEqual(env, dict(os.environ))

  def testMoreGpusPerTaskThanTheNodeHasIsRuntimeError(self):
    env = step_env('n1', '2', 'n1 n1', 0, CUDA_VISIBLE_DEVICES='0,1')
    with mock.patch.dict(os.environ, env, clear=True):
      with self.assertRaisesRegex(RuntimeError, 'more GPUs per node than'):
        SlurmClusterResolver(gpus_per_task=2)
      self.assertEqual('0,1', os.environ['CUDA_VISIBLE_DEVICES'])

  def testGpusPerTaskWhereTheStepHasNoGpuIsRuntimeError(self):
    with mock.patch.dict(os.environ, step_env('n1', '1', 'n1', 0)):
      with self.assertRaisesRegex(RuntimeError, 'more GPUs per node than'):
        SlurmClusterResolver(gpus_per_task=1)


class NvidiaSmiTest(SlurmResolverTestCase):
  """Where no variable names the GPUs, nvidia-smi counts them."""

  def testListedGpusAreCounted(self):
    with _nvidia_smi(stdout='GPU 0: A (UUID: a)\nGPU 1: A (UUID: b)\n'):
      self.assertEqual(2, get_num_gpus())

  def testExitStatusForNoDeviceIsNoGpu(self):
    with _nvidia_smi(returncode=6):
      self.assertEqual(0, get_num_gpus())

  def testMissingNvidiaSmiIsNoGpu(self):
    self.assertEqual(0, get_num_gpus())

  def testHangingNvidiaSmiIsRuntimeErrorSayingWhatToPass(self):
    with _nvidia_smi(error=subprocess.TimeoutExpired(['nvidia-smi'], 10)):
      with self.assertRaisesRegex(RuntimeError, 'Pass gpus_per_node'):
        get_num_gpus()

  def testFailingNvidiaSmiIsRuntimeError(self):
    with _nvidia_smi(returncode=9):
      with self.assertRaisesRegex(RuntimeError, 'exited with status 9'):
        get_num_gpus()


if __name__ == '__main__':
  test.main()
