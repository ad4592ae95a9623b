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
"""Tests for the model of a Slurm job step."""

import re
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import slurm_step
from tf_slurm import slurm_test_util


def _placements(step):
  """Returns (node name, local index) of every task of `step`, by index."""
  return [(step.nodes[node], local)
          for node, local in zip(step.rank_nodes, step.rank_locals)]


def _one_task_batch_env(**overrides):
  """The batch script of `sbatch -n1 --gres=gpu:2`: a job of one task."""
  env = dict(slurm_test_util.BATCH_ENV, SLURM_JOB_NODELIST='n1',
             SLURM_NODELIST='n1', SLURM_NNODES='1', SLURM_NTASKS='1',
             SLURM_NPROCS='1', SLURM_TASKS_PER_NODE='1',
             SLURM_JOB_CPUS_PER_NODE='1', **overrides)
  del env['SLURM_NTASKS_PER_NODE']
  return env


class ReadStepTest(parameterized.TestCase):
  """Every task is numbered node by node, whatever Slurm's distribution.

  A task's index is the number of the step's tasks on the nodes listed
  before its own in SLURM_STEP_NODELIST, plus its SLURM_LOCALID.
  """

  def testBlockFillsTheNodesInNodelistOrder(self):
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[9-10]', '2,1', 'n9 n9 n10', 2))
    self.assertEqual(('n9', 'n10'), step.nodes)
    self.assertEqual([('n9', 0), ('n9', 1), ('n10', 0)], _placements(step))
    self.assertEqual(2, step.task_index)

  def testCyclicStepIsNumberedNodeByNode(self):
    # Rank 1 of srun -n5 -N2 -m cyclic runs alone on n2, after n1's 4 tasks.
    step = slurm_step.read_step(slurm_test_util.cyclic_env(1))
    self.assertEqual([('n1', 0), ('n1', 1), ('n1', 2), ('n1', 3), ('n2', 0)],
                     _placements(step))
    self.assertEqual(4, step.task_index)

  def testPlaneStepIsNumberedNodeByNode(self):
    # srun -N2 -n6 -m plane=2 (as recorded on Slurm 22.05): rank 4 is n1's
    # local task 2.
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1', 4,
                                 SLURM_DISTRIBUTION='plane',
                                 SLURM_DIST_PLANESIZE='2'))
    self.assertEqual([('n1', 0), ('n1', 1), ('n1', 2), ('n1', 3), ('n2', 0),
                      ('n2', 1)], _placements(step))
    self.assertEqual(2, step.task_index)

  def testArbitraryStepIsNumberedNodeByNode(self):
    # srun -n5 -m arbitrary: rank 0 runs on n2, after n1's 3 tasks.
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[1-2]', '3,2', 'n2 n1 n2 n1 n1', 0,
                                 node_ids='n1 n2',
                                 SLURM_DISTRIBUTION='arbitrary'))
    self.assertEqual([('n1', 0), ('n1', 1), ('n1', 2), ('n2', 0), ('n2', 1)],
                     _placements(step))
    self.assertEqual(3, step.task_index)

  @parameterized.named_parameters(
      ('_unknown', {'SLURM_DISTRIBUTION': 'spread'}),
      ('_plane_without_size', {'SLURM_DISTRIBUTION': 'plane'}),
      ('_plane_size_zero', {'SLURM_DISTRIBUTION': 'plane=0'}),
      ('_plane_size_not_a_number', {'SLURM_DISTRIBUTION': 'plane',
                                    'SLURM_DIST_PLANESIZE': 'two'}),
      ('_arbitrary_without_hostfile', {'SLURM_DISTRIBUTION': 'arbitrary'}),
      ('_hostfile_that_does_not_exist', {
          'SLURM_DISTRIBUTION': 'arbitrary',
          'SLURM_HOSTFILE': '/nonexistent/hostfile'
      }),
  )
  def testDistributionVariablesAndHostfileAreNotRead(self, variables):
    # The numbering needs none of them: a value that would not do changes
    # nothing.
    self.assertEqual(
        slurm_step.read_step(slurm_test_util.cyclic_env(1)),
        slurm_step.read_step(slurm_test_util.cyclic_env(1, **variables)))

  def testHeterogeneousStepKeepsTheNodeListOrder(self):
    # srun -w n3 -n2 : -w n1 -n1: component 0 is on n3, listed after n1.
    step = slurm_step.read_step(slurm_test_util.het_later_node_env(2))
    self.assertEqual(('n1', 'n3'), step.nodes)
    self.assertEqual((1, 0), step.node_components)

  def testHeterogeneousStepIsNumberedNodeByNode(self):
    # Rank 0, component 0's first task on n3, comes after n1's task.
    step = slurm_step.read_step(slurm_test_util.het_later_node_env(0))
    self.assertEqual([('n1', 0), ('n3', 0), ('n3', 1)], _placements(step))
    self.assertEqual(1, step.task_index)

  def testComponentNodesAreTheNodesOfTheSameComponent(self):
    step = slurm_step.read_step(slurm_test_util.het_gpu_env(0))
    self.assertEqual([0], step.component_nodes(0))
    self.assertEqual([1, 2], step.component_nodes(1))
    self.assertEqual([1, 2], step.component_nodes(2))

  def testBatchScriptOfAOneTaskJobIsAStepOfOneTaskOnItsNode(self):
    step = slurm_step.read_step(_one_task_batch_env())
    self.assertEqual((('n1',), (1,), 0),
                     (step.nodes, step.tasks_per_node, step.task_index))

  def testBatchScriptOfAJobOfSeveralTasksIsRuntimeErrorSayingToUseSrun(self):
    with self.assertRaisesRegex(
        RuntimeError, r'^This process runs in Slurm job 25 outside an srun '
        r'step \(in its batch script or salloc shell: SLURM_STEP_NODELIST is '
        r'not set\), and the job has 4 tasks \(SLURM_NTASKS=4\): start the '
        r'program with srun'):
      slurm_step.read_step(slurm_test_util.BATCH_ENV)

  def testTaskWithoutLocalIdIsRuntimeErrorNamingIt(self):
    # Its node alone cannot place it among the node's tasks.
    env = slurm_test_util.cyclic_env(1, SLURM_LOCALID=None)
    with self.assertRaisesRegex(RuntimeError, 'SLURM_LOCALID is not set, but '
                                'SLURMD_NODENAME is'):
      slurm_step.read_step(env)

  def testNodeRanksAreTheTaskIndicesOfTheNodeInOrder(self):
    step = slurm_step.read_step(slurm_test_util.cyclic_env(1))
    self.assertEqual([0, 1, 2, 3], step.node_ranks(0))
    self.assertEqual([4], step.node_ranks(1))

  def testBatchScriptOfSlurm2605WithNegativeStepIdIsItsSpecialId(self):
    # Slurm 26.05 gives the batch script SLURM_STEP_ID=-5 (0xfffffffb).
    env = _one_task_batch_env(SLURM_STEP_ID='-5')
    self.assertEqual(2**32 - 5, slurm_step.read_step(env).job_step[1])


class DealRanksTest(parameterized.TestCase):
  """Slurm's deal of ranks to nodes in turns: the node of every rank."""

  def testBlockFillsEachNodeInTurn(self):
    self.assertEqual((0, 0, 0, 1, 1, 2), slurm_step.deal_ranks([3, 2, 1]))

  def testCyclicDealsOneRankToEachNodeThatStillHasTasks(self):
    self.assertEqual((0, 1, 2, 0, 1, 0), slurm_step.deal_ranks([3, 2, 1], 1))

  def testPlaneDealsChunksAndShortensTheLastOfANode(self):
    self.assertEqual((0, 0, 1, 1, 2, 0, 0, 1),
                     slurm_step.deal_ranks([4, 3, 1], 2))

  def testNoNodesIsNoRanks(self):
    self.assertEqual((), slurm_step.deal_ranks([]))

  def testLocalIndicesCountTheRanksBeforeOnTheSameNode(self):
    self.assertEqual((0, 0, 1, 1, 2),
                     slurm_step.local_indices([1, 0, 1, 0, 0], 2))


class ReservedPortsTest(parameterized.TestCase):
  """SLURM_STEP_RESV_PORTS: the ports srun --resv-ports reserved."""

  def testReservedPortsAreRead(self):
    step = slurm_step.read_step(
        slurm_test_util.cyclic_env(1,
                                   SLURM_STEP_RESV_PORTS='12000-12002,12005'))
    self.assertEqual((12000, 12001, 12002, 12005), step.reserved_ports)

  @parameterized.named_parameters(('_listed', '12000,12000,12000,12000'),
                                  ('_overlapping_ranges', '12000-12003,12002'))
  def testRepeatedReservedPortsAreValueErrorNamingTheVariable(self, value):
    env = slurm_test_util.cyclic_env(1, SLURM_STEP_RESV_PORTS=value)
    with self.assertRaisesRegex(
        ValueError, r"SLURM_STEP_RESV_PORTS='%s': .*repeated" % value):
      slurm_step.read_step(env)

  def testMoreReservedPortsThanExistAreRefusedBeforeListingThem(self):
    env = slurm_test_util.cyclic_env(
        1, SLURM_STEP_RESV_PORTS=','.join(['1-65535'] * 1000))
    with self.assertRaisesRegex(ValueError,
                                r'SLURM_STEP_RESV_PORTS=.*more than 65535'):
      slurm_step.read_step(env)

  @parameterized.named_parameters(('_letters', '12000-x'),
                                  ('_descending', '12003-12000'),
                                  ('_zero', '0-3'), ('_above_65535', '65536'),
                                  ('_empty_item', '12000,,12001'))
  def testMalformedReservedPortsAreValueErrorNamingTheVariable(self, value):
    env = slurm_test_util.cyclic_env(1, SLURM_STEP_RESV_PORTS=value)
    with self.assertRaisesRegex(
        ValueError, r"^SLURM_STEP_RESV_PORTS='%s': '.*' is not a port or a "
        r'range LO-HI of ports within 1\.\.65535$' % value):
      slurm_step.read_step(env)


class StrictVariableTest(parameterized.TestCase):
  """Every variable is parsed strictly, within bounds, naming itself."""

  def assertReadFails(self, error, regex, env, tasks_per_node=None):
    with self.assertRaisesRegex(error, regex):
      slurm_step.read_step(env, tasks_per_node)

  def testRankMissingFromItsNodesRanksNamesTheTaskAndTheLayout(self):
    # SLURM_PROCID 1 on n1, whose SLURM_GTIDS holds rank 0 alone.
    env = slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0,
                                   SLURM_PROCID='1')
    self.assertReadFails(
        RuntimeError,
        r"SLURM_LOCALID='0' on SLURMD_NODENAME='n1' \(SLURM_PROCID='1'\) is "
        r"task 0 of 2, which the layout \(SLURM_STEP_NODELIST='n\[1-2\]', "
        r"SLURM_STEP_TASKS_PER_NODE='1,1'\) puts on node 'n1' as its local "
        r"task 0; but SLURM_GTIDS: Slurm says '0', expected the ranks of the 1 "
        r"tasks of this node with this task's, SLURM_PROCID 1, at its "
        r'SLURM_LOCALID 0', env)

  def testNumTasksDisagreeingWithTasksPerNodeNamesBoth(self):
    env = slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0,
                                   SLURM_STEP_NUM_TASKS='3')
    self.assertReadFails(
        RuntimeError, r"SLURM_STEP_NUM_TASKS=3 but the tasks per node "
        r"\(SLURM_STEP_TASKS_PER_NODE='1,1'\) add up to 2", env)

  @parameterized.named_parameters(
      ('_procid_of_5000_digits', 'SLURM_PROCID', '9' * 5000),
      ('_procid_above_max_tasks', 'SLURM_PROCID', str(slurm_step.MAX_TASKS)),
      ('_num_tasks_zero', 'SLURM_STEP_NUM_TASKS', '0'),
      ('_num_tasks_above_max_tasks', 'SLURM_STEP_NUM_TASKS',
       str(slurm_step.MAX_TASKS + 1)),
      ('_job_id_above_32_bits', 'SLURM_JOB_ID', str(2**32)),
      ('_step_id_signed', 'SLURM_STEP_ID', '+0'),
      ('_gpus_on_node_above_max', 'SLURM_GPUS_ON_NODE',
       str(slurm_step.MAX_GPUS_PER_NODE + 1)),
  )
  def testIntegerOutOfRangeIsValueErrorNamingTheVariable(self, name, value):
    env = slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0,
                                   **{name: value})
    self.assertReadFails(
        ValueError, '^%s: expected an integer in ' % re.escape(
            '%s=%r' % (name, value)), env)

  def testTasksOnANodeAboveTheMaximumAreValueError(self):
    env = slurm_test_util.step_env('n1', '70000', 'n1', 0,
                                   SLURM_STEP_NUM_TASKS=None)
    self.assertReadFails(
        ValueError, r"SLURM_STEP_TASKS_PER_NODE='70000': tasks of node 'n1'="
        r'70000: expected an integer in 1..65533', env)

  def testStepOfMoreTasksThanTheMaximumIsValueError(self):
    env = slurm_test_util.step_env('n[1-20]', '60000(x20)', 'n1', 0,
                                   node_ids=' '.join('n%d' % i
                                                     for i in range(1, 21)),
                                   SLURM_STEP_NUM_TASKS=None)
    self.assertReadFails(ValueError, r"SLURM_STEP_TASKS_PER_NODE='60000\(x20\)"
                         r"': 1200000 tasks in all; expected at most", env)

  @parameterized.named_parameters(
      ('_above_the_maximum', '2000000', ValueError,
       r"SLURM_HET_SIZE='2000000': expected an integer in 1..1048576"),
      # The step's nodes do not bound it: a step may run one component.
      ('_above_the_listed_components', '4', RuntimeError,
       r'SLURM_JOB_NODELIST_HET_GROUP_2 is not set .* \(SLURM_HET_SIZE=4\)'))
  def testBadHetSizeIsRefusedNamingIt(self, size, error, regex):
    env = slurm_test_util.het_gpu_env(1, SLURM_HET_SIZE=size,
                                      SLURM_PACK_SIZE=size)
    self.assertReadFails(error, regex, env)

  @parameterized.named_parameters(('_space_inside', '0,1 2'),
                                  ('_control_character', '0,\x01'),
                                  ('_semicolon', '0;1'))
  def testGpuIdThatIsNoIndexNorUuidIsValueError(self, value):
    with self.assertRaisesRegex(ValueError,
                                r'CUDA_VISIBLE_DEVICES=.*device ids'):
      slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': value})

  def testGpuUuidsAreIds(self):
    value = 'GPU-5c0b9c4e-4bd7-9a8c-1b1e,MIG-GPU-8d1e7a0f/1/0'
    self.assertEqual(tuple(value.split(',')),
                     slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES':
                                           value}).visible)

  def testMoreGpuIdsThanANodeCanHaveAreValueError(self):
    value = ','.join(map(str, range(slurm_step.MAX_GPUS_PER_NODE + 1)))
    with self.assertRaisesRegex(ValueError,
                                r'CUDA_VISIBLE_DEVICES=.*more than 1024'):
      slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': value})

  def testGpuTotalOfNonAsciiDigitsIsValueErrorNamingTheVariable(self):
    with self.assertRaisesRegex(ValueError, r"SLURM_GPUS='\u00b2'"):
      slurm_step.read_gpus({'SLURM_GPUS': '\u00b2'})

  def testHetNodesInNoComponentNameTheSizeAndTheComponentsLists(self):
    env = slurm_test_util.het_gpu_env(1, SLURM_HET_SIZE='1',
                                      SLURM_PACK_SIZE='1')
    self.assertReadFails(
        RuntimeError, r"Nodes \['n2', 'n3'\] of the step "
        r"\(SLURM_STEP_NODELIST='n\[1-3\]'\) are in none of the heterogeneous "
        r"job's components' node lists \(SLURM_HET_SIZE=1: "
        r"SLURM_JOB_NODELIST_PACK_GROUP_0='n1'\)", env)

  def testHetNodeInTwoComponentsIsRuntimeErrorNamingIt(self):
    env = slurm_test_util.het_gpu_env(
        1, SLURM_JOB_NODELIST_PACK_GROUP_0='n[1-2]')
    self.assertReadFails(
        RuntimeError, r"The node lists of the heterogeneous job's "
        r"components name \['n2'\] more than once \(SLURM_HET_SIZE=2: "
        r"SLURM_JOB_NODELIST_PACK_GROUP_0='n\[1-2\]', "
        r"SLURM_JOB_NODELIST_PACK_GROUP_1='n\[2-3\]'\)", env)

  def testHetLocalIdBeyondTheNodesTasksNamesTheNode(self):
    env = slurm_test_util.het_gpu_env(1, SLURM_LOCALID='5')
    self.assertReadFails(
        RuntimeError, r"SLURM_LOCALID=5 but SLURMD_NODENAME='n2' runs 2 tasks",
        env)

  def testTasksPerNodeHostThatIsNoStringIsValueError(self):
    env = slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0)
    self.assertReadFails(ValueError, r'tasks_per_node: host 1 is not a string',
                         env, {1: 1, 'n2': 1})


class ReadGpusTest(parameterized.TestCase):
  """What Slurm made visible to the task."""

  def testSlurmsListIsCudaVisibleDevices(self):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '4,5',
                                 'GPU_DEVICE_ORDINAL': '4,5'})
    self.assertEqual(('4', '5'), gpus.visible)
    self.assertEqual('CUDA_VISIBLE_DEVICES', gpus.source)

  def testCudaVisibleDevicesNarrowedBelowSlurmsListIsBoundToTheTask(self):
    # What a first resolver of the same task, a wrapper or the user leaves.
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '5',
                                 'SLURM_STEP_GPUS': '4,5',
                                 'GPU_DEVICE_ORDINAL': '4,5'})
    self.assertEqual(('5',), gpus.visible)
    self.assertTrue(gpus.bound_per_task)

  @parameterized.named_parameters(('_empty', ''),
                                  ('_no_dev_files', 'NoDevFiles'))
  def testHiddenGpusStayHidden(self, value):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': value,
                                 'GPU_DEVICE_ORDINAL': '0,1'})
    self.assertEqual((), gpus.visible)

  def testOtherGpusThanSlurmsAreTakenAsTheyStand(self):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '7',
                                 'GPU_DEVICE_ORDINAL': '0,1'})
    self.assertEqual(('7',), gpus.visible)

  @parameterized.named_parameters(
      ('_step', 'SLURM_STEP_GPUS'),
      ('_job_in_the_batch_script', 'SLURM_JOB_GPUS'))
  def testWithoutCudaVisibleDevicesSlurmsGpuVariablesCount(self, name):
    self.assertEqual(('0', '1'), slurm_step.read_gpus({name: '0,1'}).visible)

  def testJobGpusAloneInAStepMeanTheStepWasGivenNone(self):
    gpus = slurm_step.read_gpus({'SLURM_JOB_GPUS': '0,1',
                                 'SLURM_STEP_NODELIST': 'n1'})
    self.assertEqual(((), True), (gpus.visible, gpus.withheld))

  def testJobGpusBesideTheStepsOwnAreNotWithheld(self):
    gpus = slurm_step.read_gpus({'SLURM_JOB_GPUS': '0,1',
                                 'SLURM_STEP_GPUS': '1',
                                 'SLURM_STEP_NODELIST': 'n1'})
    self.assertEqual((('1',), False), (gpus.visible, gpus.withheld))

  def testWithoutAnyGpuVariableNothingIsKnown(self):
    self.assertIsNone(slurm_step.read_gpus({}).visible)

  @parameterized.named_parameters(
      ('_per_task', {'SLURMD_TRES_BIND': 'gpu:per_task:1'}),
      ('_single', {'SLURMD_TRES_BIND': 'gpu:single:1'}),
      ('_fewer_visible_than_on_node', {'SLURM_GPUS_ON_NODE': '4'}))
  def testGpusBoundToTheTaskAreMarkedBound(self, more):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '1', **more})
    self.assertTrue(gpus.bound_per_task)

  def testGpuBindClosestIsNotABindingPerTask(self):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '0,1',
                                 'SLURMD_TRES_BIND': 'gpu:closest'})
    self.assertFalse(gpus.bound_per_task)

  @parameterized.named_parameters(('_count', '5', 5), ('_typed', 'a100:4', 4),
                                  ('_types', 'a100:2,v100:1', 3))
  def testGpusTotalIsRead(self, value, expected):
    self.assertEqual(expected,
                     slurm_step.read_gpus({'SLURM_GPUS': value}).step_total)

  @parameterized.named_parameters(('_repeated', '0,0'), ('_empty_item', '0,,1'))
  def testMalformedListIsValueErrorNamingTheVariable(self, value):
    with self.assertRaisesRegex(ValueError,
                                r"CUDA_VISIBLE_DEVICES='%s'" % value):
      slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': value})


class GresTypesTest(parameterized.TestCase):
  """`gres_types`: the GRES types a slurm.conf text lists."""

  def testListsTheTypesInLowerCase(self):
    self.assertEqual(('gpu', 'mps'), slurm_step.gres_types(
        'ClusterName=lab\ngrestypes=GPU, mps  # the GPUs\n'))

  def testCommentedOutLinesDoNotCount(self):
    self.assertEqual((), slurm_step.gres_types('#GresTypes=gpu\n'))

  def testTheLastSettingWins(self):
    self.assertEqual(('shard',), slurm_step.gres_types(
        'GresTypes=gpu\nGresTypes=shard\n'))

  def testWithoutGresTypesThereAreNone(self):
    self.assertEqual((), slurm_step.gres_types('NodeName=n1 Gres=gpu:4\n'))


class PlanWithheldGpusTest(absltest.TestCase):
  """`plan_gpus` where Slurm manages the node's GPUs and gave none."""

  def step(self, **environ):
    return slurm_step.read_step(
        slurm_test_util.step_env('n1', '2', 'n1 n1', 1, **environ))

  def testUnnamedGpusThatSlurmWithholdsGiveTheTaskNone(self):
    withheld = slurm_step.SlurmGpus((), '/etc/slurm/slurm.conf',
                                    withheld=True)
    plan = slurm_step.plan_gpus(self.step(), None, None, lambda: withheld)
    self.assertEqual(((), True), (plan.task_gpus, plan.slurm_gpus.withheld))

  def testWithheldJobGpusAreNotCounted(self):
    unnamed = mock.Mock(return_value=slurm_step.SlurmGpus(('0', '1')))
    plan = slurm_step.plan_gpus(self.step(SLURM_JOB_GPUS='0,1'), None, None,
                                unnamed)
    self.assertEqual(((), True), (plan.task_gpus, plan.slurm_gpus.withheld))
    unnamed.assert_not_called()

  def testExplicitZeroGpusPerNodeIsNoneToo(self):
    plan = slurm_step.plan_gpus(self.step(SLURM_JOB_GPUS='0,1'), 0, None,
                                slurm_step.SlurmGpus)
    self.assertEqual((), plan.task_gpus)


if __name__ == '__main__':
  absltest.main()
