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

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_step
from tensorflow.python.distribute.cluster_resolver import slurm_test_util


def _placements(step):
  """Returns (node name, local index) of every rank of `step`."""
  return [(step.nodes[node], local)
          for node, local in map(step.place, range(step.num_tasks))]


class ReadStepTest(parameterized.TestCase):
  """Which rank runs where, under each of Slurm's task distributions."""

  def testBlockFillsTheNodesInNodelistOrder(self):
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[9-10]', '2,1', 'n9 n9 n10', 2))
    self.assertEqual(('n9', 'n10'), step.nodes)
    self.assertEqual([('n9', 0), ('n9', 1), ('n10', 0)], _placements(step))
    self.assertEqual(2, step.task_index)

  def testCyclicDealsRanksToTheNodesInTurn(self):
    step = slurm_step.read_step(slurm_test_util.cyclic_env(1))
    self.assertEqual([('n1', 0), ('n2', 0), ('n1', 1), ('n1', 2), ('n1', 3)],
                     _placements(step))

  def testPlaneDealsBlocksOfThePlaneSize(self):
    # srun -N2 -n6 -m plane=2 (as recorded on Slurm 22.05).
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[1-2]', '4,2', 'n1 n1 n2 n2 n1 n1', 4,
                                 SLURM_DISTRIBUTION='plane',
                                 SLURM_DIST_PLANESIZE='2'))
    self.assertEqual([0, 1, 4, 5], step.node_ranks(0))
    self.assertEqual([2, 3], step.node_ranks(1))

  def testArbitraryFollowsTheHostfile(self):
    hostfile = self.create_tempfile(content='n2\nn1\nn2\nn1\nn1\n').full_path
    step = slurm_step.read_step(
        slurm_test_util.step_env('n[1-2]', '3,2', 'n2 n1 n2 n1 n1', 0,
                                 node_ids='n1 n2',
                                 SLURM_DISTRIBUTION='arbitrary',
                                 SLURM_HOSTFILE=hostfile))
    self.assertEqual([('n2', 0), ('n1', 0), ('n2', 1), ('n1', 1), ('n1', 2)],
                     _placements(step))

  def testHeterogeneousStepNumbersNodesByComponent(self):
    step = slurm_step.read_step(slurm_test_util.het_later_node_env(2))
    self.assertEqual(('n3', 'n1'), step.nodes)
    self.assertEqual((0, 1), step.node_components)
    self.assertEqual(2, step.task_index)

  def testBatchScriptUsesTheJobVariables(self):
    step = slurm_step.read_step(slurm_test_util.BATCH_ENV)
    self.assertEqual(('n1', 'n2'), step.nodes)
    self.assertEqual((2, 2), step.tasks_per_node)

  def testLayoutContradictingTheTaskIsRuntimeErrorShowingBoth(self):
    # Rank 1 of a cyclic step, read without SLURM_DISTRIBUTION.
    env = slurm_test_util.cyclic_env(1, SLURM_DISTRIBUTION=None)
    with self.assertRaisesRegex(
        RuntimeError, r"SLURMD_NODENAME: Slurm says 'n2', derived 'n1'"):
      slurm_step.read_step(env)

  def testReservedPortsAreRead(self):
    step = slurm_step.read_step(
        slurm_test_util.cyclic_env(1,
                                   SLURM_STEP_RESV_PORTS='12000-12002,12005'))
    self.assertEqual((12000, 12001, 12002, 12005), step.reserved_ports)


class ReadGpusTest(parameterized.TestCase):
  """What Slurm made visible to the task."""

  def testSlurmsListIsCudaVisibleDevices(self):
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '4,5',
                                 'GPU_DEVICE_ORDINAL': '4,5'})
    self.assertEqual(('4', '5'), gpus.visible)
    self.assertEqual('CUDA_VISIBLE_DEVICES', gpus.source)

  def testNarrowedCudaVisibleDevicesFallsBackToGpuDeviceOrdinal(self):
    # What a first resolver of the same task leaves behind.
    gpus = slurm_step.read_gpus({'CUDA_VISIBLE_DEVICES': '5',
                                 'GPU_DEVICE_ORDINAL': '4,5'})
    self.assertEqual(('4', '5'), gpus.visible)
    self.assertEqual('GPU_DEVICE_ORDINAL', gpus.source)

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

  @parameterized.named_parameters(('_step', 'SLURM_STEP_GPUS'),
                                  ('_job', 'SLURM_JOB_GPUS'))
  def testWithoutCudaVisibleDevicesSlurmsGpuVariablesCount(self, name):
    self.assertEqual(('0', '1'), slurm_step.read_gpus({name: '0,1'}).visible)

  def testWithoutAnyGpuVariableNothingIsKnown(self):
    self.assertIsNone(slurm_step.read_gpus({}).visible)

  @parameterized.named_parameters(
      ('_per_task', {'SLURMD_TRES_BIND': 'gpu:per_task:1'}),
      ('_single', {'SLURMD_TRES_BIND': 'gpu:single:1'}),
      ('_fewer_visible_than_on_node', {'SLURM_GPUS_ON_NODE': '4'}))
  def testGpusBoundToTheTaskAreMarkedBound(self, more):
    gpus = slurm_step.read_gpus(dict(CUDA_VISIBLE_DEVICES='1', **more))
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


class BlockStepTest(absltest.TestCase):
  """The step of a task configuration, as TensorFlow 2.x laid it out."""

  def testRanksFillTheHostsInOrder(self):
    step = slurm_step.block_step({'b': 2, 'a': 1}, 2, slurm_step.SlurmGpus())
    self.assertEqual([('b', 0), ('b', 1), ('a', 0)], _placements(step))
    self.assertEqual(2, step.task_index)

  def testRankOutsideTheStepIsRuntimeError(self):
    with self.assertRaisesRegex(RuntimeError, r'Rank 3 is not one of the 3'):
      slurm_step.block_step({'a': 3}, 3, slurm_step.SlurmGpus())

  def testCountBelowOneIsValueErrorNamingTheHost(self):
    with self.assertRaisesRegex(ValueError, r"node 'a' has 0 tasks"):
      slurm_step.block_step({'a': 0, 'b': 1}, 0, slurm_step.SlurmGpus())


if __name__ == '__main__':
  absltest.main()
