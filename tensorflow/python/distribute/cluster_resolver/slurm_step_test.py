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
"""Tests of slurm_step: what Slurm tells a task of its step."""

from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_step
from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tensorflow.python.platform import test

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


class ReadRankTest(test.TestCase, parameterized.TestCase):
  """Tasks are numbered node by node, in node list order."""

  def testBlockStepInListOrderNumbersTasksAsSlurmProcid(self):
    envs = step_envs('n[1-2]', '4,1', 'n1 n1 n1 n1 n2')
    self.assertEqual([0, 1, 2, 3, 4], [slurm_step.read_rank(e) for e in envs])

  @parameterized.named_parameters(
      # srun -n5 -N2 -m cyclic, as recorded on Slurm 22.05.
      ('_cyclic', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1', [0, 4, 1, 2, 3]),
      # srun -n6 -N2 -m plane=2.
      ('_plane', 'n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1', [0, 1, 4, 5, 2, 3]),
      # srun -m arbitrary with a hostfile putting rank 0 on the second node.
      ('_arbitrary', 'n[1-2]', '3,2', 'n2 n1 n1 n2 n1', [3, 0, 1, 4, 2]),
      # Slurm 26.05's topology order: ranks dealt to n3 first.
      ('_topology_order', 'n[1-3]', '1(x3)', 'n3 n1 n2', [2, 0, 1]),
  )
  def testEveryLayoutIsNumberedNodeByNode(self, nodelist, tasks, rank_hosts,
                                          indices):
    envs = step_envs(nodelist, tasks, rank_hosts)
    self.assertEqual(indices, [slurm_step.read_rank(e) for e in envs])

  def testHeterogeneousStepFollowsTheListNotSlurmNodeid(self):
    # srun -w n3 -n2 : -w n1 -n1: SLURM_NODEID puts n3 first.
    envs = step_envs('n[1,3]', '1,2', 'n3 n3 n1', node_ids='n3 n1')
    self.assertEqual([1, 2, 0], [slurm_step.read_rank(e) for e in envs])

  def testNodeListIsNotSortedAsText(self):
    envs = step_envs('n[9-10]', '1(x2)', 'n9 n10')
    self.assertEqual([0, 1], [slurm_step.read_rank(e) for e in envs])

  def testWithoutNodeNameAndLocalIdTheRankIsSlurmProcid(self):
    env = step_env('n[1-2]', '4,1', 'n1 n1 n1 n1 n2', 1, SLURMD_NODENAME=None,
                   SLURM_LOCALID=None)
    self.assertEqual(1, slurm_step.read_rank(env))

  def testLocalIdWithoutNodeNameIsRuntimeErrorNamingIt(self):
    env = step_env('n[1-2]', '4,1', 'n1 n2 n1 n1 n1', 1, SLURMD_NODENAME=None)
    with self.assertRaisesRegex(RuntimeError, 'SLURMD_NODENAME is not set, '
                                'but SLURM_LOCALID is'):
      slurm_step.read_rank(env)

  def testNodeOutsideTheListIsRuntimeErrorNamingIt(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 1, SLURMD_NODENAME='n7')
    with self.assertRaisesRegex(RuntimeError, "SLURMD_NODENAME='n7' is not in"):
      slurm_step.read_rank(env)

  def testLocalIdBeyondTheNodesTasksIsRuntimeError(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 1, SLURM_LOCALID='1')
    with self.assertRaisesRegex(RuntimeError, 'SLURM_LOCALID=1 but'):
      slurm_step.read_rank(env)

  def testGtidsWithoutThisTasksProcidIsRuntimeError(self):
    env = step_env('n1', '2', 'n1 n1', 1, SLURM_GTIDS='0,7')
    with self.assertRaisesRegex(RuntimeError, "SLURM_GTIDS='0,7'"):
      slurm_step.read_rank(env)

  def testMalformedProcidIsValueErrorNamingIt(self):
    env = step_env('n1', '2', 'n1 n1', 1, SLURM_PROCID='-1')
    with self.assertRaisesRegex(ValueError, "SLURM_PROCID='-1'"):
      slurm_step.read_rank(env)


class MpiLauncherTest(test.TestCase):
  """Ranks of mpirun and mpiexec see their daemons' step: they refuse."""

  def testMpirunRankIsRefusedSayingToStartWithSrun(self):
    # Rank 3 of 5 on the second node, whose daemon is task 1 of 3.
    env = step_env('n[1-3]', '1(x3)', 'n1 n2 n3', 1, OMPI_COMM_WORLD_RANK='3',
                   OMPI_COMM_WORLD_SIZE='5')
    with self.assertRaisesRegex(
        RuntimeError, 'OMPI_COMM_WORLD_RANK=3 but SLURM_PROCID=1; '
        'OMPI_COMM_WORLD_SIZE=5 but SLURM_STEP_NUM_TASKS=3: an MPI launcher '
        r'.* Start the program with srun -n 5\.'):
      slurm_step.read_rank(env)

  def testMpiexecRankOfTheSameNumberIsRefusedByItsSize(self):
    env = step_env('n[1-3]', '1(x3)', 'n1 n2 n3', 0, PMI_RANK='0',
                   PMI_SIZE='5', MPI_LOCALRANKID='0')
    with self.assertRaisesRegex(RuntimeError, 'PMI_SIZE=5 but '
                                'SLURM_STEP_NUM_TASKS=3'):
      slurm_step.read_rank(env)

  def testSrunMpiRankIsTheSlurmTask(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 1, PMI_RANK='1', PMI_SIZE='2',
                   PMI_JOBID='42.0')
    self.assertEqual(1, slurm_step.read_rank(env))


class ReadNodesTest(test.TestCase):
  """The step's nodes and tasks per node."""

  def testNodesAreInListOrder(self):
    env = step_env('n[9-10],a1', '1(x3)', 'n9 n10 a1', 0)
    self.assertEqual(['n9', 'n10', 'a1'], slurm_step.read_nodes(env))

  def testNodeListedTwiceIsValueError(self):
    env = step_env('n1,n1', '1(x2)', 'n1 n1', 0)
    with self.assertRaisesRegex(ValueError, 'names a node twice'):
      slurm_step.read_nodes(env)

  def testCountsFollowTheNodes(self):
    env = step_env('n[1-3]', '2,1(x2)', 'n1 n1 n2 n3', 0)
    self.assertEqual([2, 1, 1],
                     slurm_step.read_tasks_per_node(env, ['n1', 'n2', 'n3']))

  def testCountsForOtherNodesAreValueError(self):
    env = step_env('n[1-2]', '2', 'n1 n1', 0)
    with self.assertRaisesRegex(ValueError, 'has 1 entries but'):
      slurm_step.read_tasks_per_node(env, ['n1', 'n2'])

  def testCountsThatMissTheStepsTasksAreValueError(self):
    env = step_env('n[1-2]', '1,1', 'n1 n2', 0, SLURM_STEP_NUM_TASKS='3')
    with self.assertRaisesRegex(ValueError, 'SLURM_STEP_NUM_TASKS=3'):
      slurm_step.read_tasks_per_node(env, ['n1', 'n2'])

  def testOutsideAStepItSaysToUseSrun(self):
    with self.assertRaisesRegex(RuntimeError, 'SLURM_STEP_NODELIST is not set'
                                '.*srun'):
      slurm_step.read_nodes({})


class BatchScriptTest(test.TestCase):
  """A batch script is no step."""

  def testBatchScriptOfAJobOfSeveralTasksSaysToStartWithSrun(self):
    for read in (slurm_step.read_nodes, slurm_step.read_rank,
                 slurm_step.read_num_tasks):
      with self.subTest(read=read.__name__):
        with self.assertRaisesRegex(
            RuntimeError, 'Slurm job 25 outside an srun step .*4 tasks .*: '
            r'start the program with srun \(srun python train.py\)'):
          read(slurm_test_util.BATCH_ENV)

  def testBatchScriptOfAOneTaskJobIsOneTaskOnItsNode(self):
    env = dict(slurm_test_util.BATCH_ENV, SLURM_NTASKS='1',
               SLURM_TASKS_PER_NODE='1')
    self.assertEqual([env['SLURMD_NODENAME']], slurm_step.read_nodes(env))
    self.assertEqual(1, slurm_step.read_num_tasks(env))
    self.assertEqual(0, slurm_step.read_rank(env))


class ReadGpusTest(test.TestCase, parameterized.TestCase):
  """Which GPUs a task may use, and whether they are its own."""

  def testIdsAreKeptAsSlurmListsThem(self):
    self.assertEqual((['4', '5'], False),
                     slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '4,5'}))

  @parameterized.named_parameters(('_empty', ''), ('_no_dev_files',
                                                   'NoDevFiles'))
  def testHiddenGpusAreNone(self, value):
    self.assertEqual([], slurm_step.read_gpus(
        {'CUDA_VISIBLE_DEVICES': value})[0])

  def testNoVariableMeansUnknown(self):
    self.assertEqual((None, False), slurm_step.read_gpus({}))

  def testJobGpusAloneInAStepMeanTheStepHasNone(self):
    env = {'SLURM_JOB_GPUS': '0,1', 'SLURM_STEP_NODELIST': 'n1'}
    self.assertEqual(([], True), slurm_step.read_gpus(env))

  def testJobGpusInTheBatchScriptAreItsOwn(self):
    self.assertEqual((['0', '1'], False),
                     slurm_step.read_gpus({'SLURM_JOB_GPUS': '0,1'}))

  def testFewerThanSlurmGaveTheNodeAreTheTasksOwn(self):
    env = {'CUDA_VISIBLE_DEVICES': '0', 'SLURM_STEP_GPUS': '0,1,2,3'}
    self.assertEqual((['0'], True), slurm_step.read_gpus(env))

  def testFewerThanGpusOnNodeAreTheTasksOwn(self):
    env = {'CUDA_VISIBLE_DEVICES': '1', 'SLURM_GPUS_ON_NODE': '2'}
    self.assertEqual((['1'], True), slurm_step.read_gpus(env))

  @parameterized.named_parameters(
      ('_slurm_22_05', 'gpu:single:2'),
      ('_slurm_24_11', 'gres/gpu:single:2'),
      ('_upper_case', 'gres/gpu:SINGLE:2'),
      ('_verbose', 'gpu:verbose,per_task:1'),
      ('_joined_with_another_tres', 'gres/nic:closest+gres/gpu:map:0,0'),
  )
  def testGpusSlurmBoundToTheTaskAreItsOwn(self, binding):
    env = {'CUDA_VISIBLE_DEVICES': '0', 'SLURM_GPUS_ON_NODE': '1',
           'SLURMD_TRES_BIND': binding}
    self.assertEqual((['0'], True), slurm_step.read_gpus(env))

  def testGpuBindNoneGivesTheNodesFirstGpus(self):
    env = {'SLURMD_TRES_BIND': 'gpu:none', 'SLURM_GPUS_ON_NODE': '2',
           'SLURM_JOB_GPUS': '0,1', 'SLURM_STEP_NODELIST': 'n1'}
    self.assertEqual((['0', '1'], False), slurm_step.read_gpus(env))

  def testRepeatedIdIsValueErrorNamingTheVariable(self):
    with self.assertRaisesRegex(ValueError, "CUDA_VISIBLE_DEVICES='0,0'"):
      slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '0,0'})


if __name__ == '__main__':
  test.main()
