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
"""Tests for the placement of mpirun and mpiexec.hydra ranks."""

from absl.testing import absltest

from tf_slurm import launchers
from tf_slurm import slurm_launcher
from tf_slurm import slurm_test_util

# Ranks of launches in `sbatch -N3 -n5` (its job: _JOB).
_JOB = slurm_test_util.MPI_JOB
_ompi_env = slurm_test_util.ompi_env
_hydra_env = slurm_test_util.hydra_env


class PlacementRulesTest(absltest.TestCase):

  def testBySlotFillsEachNodeBeforeTheNext(self):
    self.assertEqual((0, 0, 0, 1, 2),
                     launchers.placement([3, 1, 1], 5, 'slot'))

  def testBySlotLeavesLaterNodesEmptyWhenFewerRanks(self):
    self.assertEqual((0, 0), launchers.placement([3, 1, 1], 2, 'slot'))

  def testByNodeDealsInTurnsSkippingFullNodes(self):
    self.assertEqual((0, 1, 2, 0, 0),
                     launchers.placement([3, 1, 1], 5, 'node'))

  def testByNodeCutShortStopsAfterTheFirstTurns(self):
    self.assertEqual((0, 1, 2, 0), launchers.placement([3, 1, 1], 4, 'node'))


class ReadLaunchTest(absltest.TestCase):

  def testNotUnderMpiLaunchersIsNone(self):
    self.assertIsNone(launchers.read_launch({'SLURM_PROCID': '0'}, 'n9'))

  def testOpenMpiBySlotPlacesEveryRank(self):
    launch = launchers.read_launch(_ompi_env(3, 0, 1, 'n10'), 'n10')
    self.assertEqual(('n9', 'n10', 'n11'), launch.nodes)
    self.assertEqual([('n9', 0), ('n9', 1), ('n9', 2), ('n10', 0), ('n11', 0)],
                     slurm_test_util.launch_places(launch))
    self.assertEqual((3, slurm_launcher.OPEN_MPI_4, 'slot'),
                     (launch.rank, launch.launcher, launch.mapping))

  def testOpenMpiMapByNodeDealsRanksRoundRobin(self):
    env = _ompi_env(3, 1, 3, 'n9', OMPI_MCA_rmaps_base_mapping_policy='node')
    launch = launchers.read_launch(env, 'n9')
    self.assertEqual([('n9', 0), ('n10', 0), ('n11', 0), ('n9', 1), ('n9', 2)],
                     slurm_test_util.launch_places(launch))
    self.assertEqual('node', launch.mapping)

  def testTheJobsNodeListIsExpandedByTheCallersExpander(self):
    # The job's nodes are those the caller's expander names, in its order.
    expanded = []

    def expand(nodelist):
      expanded.append(nodelist)
      return ['n11', 'n10', 'n9']

    launch = launchers.read_launch(_ompi_env(3, 0, 1, 'n10'), 'n10', expand)
    self.assertEqual([_JOB['SLURM_JOB_NODELIST']], expanded)
    self.assertEqual([('n11', 0), ('n11', 1), ('n11', 2), ('n10', 0),
                      ('n9', 0)], slurm_test_util.launch_places(launch))

  def testNodesWithoutRanksAreLeftOut(self):
    launch = launchers.read_launch(
        _ompi_env(1, 1, 2, 'n9', size=2, universe=5), 'n9')
    self.assertEqual(('n9',), launch.nodes)
    self.assertEqual((0, 0), launch.rank_nodes)

  def testUnderOpenMpiTheNodeIsSlurmdNodename(self):
    # The host name is not consulted: mpirun's ranks share their daemon's node.
    launch = launchers.read_launch(_ompi_env(4, 0, 1, 'n11'), 'elsewhere')
    self.assertEqual(2, launch.rank_nodes[4])

  def testRankOnAnotherNodeThanModelledIsRefused(self):
    # mpirun -H n10,... put rank 3 on n11, where by slot it would be on n10.
    with self.assertRaisesRegex(
        RuntimeError,
        r'mpirun \(Open MPI 4\): cannot place the ranks for sure: rank 3 runs '
        r"on n11, but the model \(by slot over SLURM_JOB_NODELIST='n\[9-11\]', "
        r"SLURM_JOB_CPUS_PER_NODE='3,1\(x2\)'\) places it on n10\. Launch with "
        r'srun -N3 -n5'):
      launchers.read_launch(_ompi_env(3, 0, 1, 'n11'), 'n11')

  def testOtherLocalRankThanModelledIsRefused(self):
    with self.assertRaisesRegex(
        RuntimeError, r'rank 1 is local rank 0 of 2 on n9, but the model '
        r'\(by slot .*\) makes it 1 of 3'):
      launchers.read_launch(_ompi_env(1, 0, 2, 'n9'), 'n9')

  def testUniverseOtherThanTheJobsCpusIsRefused(self):
    # sbatch --exclusive: 4 CPUs a node, but mpirun counted the 5 tasks.
    env = _ompi_env(0, 0, 2, 'n9', SLURM_JOB_CPUS_PER_NODE='4(x3)')
    with self.assertRaisesRegex(
        RuntimeError, r"OMPI_UNIVERSE_SIZE=5 \(mpirun's slots\) but the job "
        'has 12 CPUs'):
      launchers.read_launch(env, 'n9')

  def testUnmodelledMappingPolicyIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9',
                    OMPI_MCA_rmaps_base_mapping_policy='ppr:2:node')
    with self.assertRaisesRegex(
        RuntimeError, "OMPI_MCA_rmaps_base_mapping_policy='ppr:2:node'"):
      launchers.read_launch(env, 'n9')

  def testOtherMappingVariablesAreRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', OMPI_MCA_rmaps_rank_file_path='/tmp/rf')
    with self.assertRaisesRegex(RuntimeError,
                                'OMPI_MCA_rmaps_rank_file_path=.*changes how'):
      launchers.read_launch(env, 'n9')

  def testOpenMpi5HasNoMappingPolicyToRead(self):
    env = _ompi_env(0, 0, 3, 'n9', version=5,
                    OMPI_MCA_rmaps_base_mapping_policy='node')
    with self.assertRaisesRegex(RuntimeError,
                                r"only mpirun's default placement \(by slot\) "
                                'can be modelled'):
      launchers.read_launch(env, 'n9')

  def testMoreRanksThanSlotsIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', size=6, universe=5)
    with self.assertRaisesRegex(RuntimeError, '6 ranks but the job has 5'):
      launchers.read_launch(env, 'n9')

  def testHydraTakesTheNodeFromTheHostName(self):
    # SLURMD_NODENAME is mpiexec's (n9) on every rank.
    launch = launchers.read_launch(_hydra_env(3, 0, 1), 'n10')
    self.assertEqual(slurm_launcher.HYDRA, launch.launcher)
    self.assertEqual([('n9', 0), ('n9', 1), ('n9', 2), ('n10', 0), ('n11', 0)],
                     slurm_test_util.launch_places(launch))

  def testHydraAcceptsAQualifiedHostName(self):
    launch = launchers.read_launch(_hydra_env(4, 0, 1), 'n11.cluster')
    self.assertEqual(4, launch.rank)

  def testHydraHostNameOutsideTheJobIsRefused(self):
    with self.assertRaisesRegex(
        RuntimeError, "host name 'login1' is none of the job's nodes "
        r"\['n9', 'n10', 'n11'\]"):
      launchers.read_launch(_hydra_env(3, 0, 1), 'login1')

  def testHydraPerNodeCyclicIsRefusedWhereItDiffers(self):
    # mpiexec.hydra -ppn 1 -n 5: rank 1 on n10; block would put it on n9.
    with self.assertRaisesRegex(
        RuntimeError, r'rank 1 runs on n10, but the model \(.*\) places it '
        'on n9'):
      launchers.read_launch(_hydra_env(1, 0, 2), 'n10')

  def testMissingLauncherVariableIsNamed(self):
    env = _ompi_env(0, 0, 3, 'n9')
    del env['OMPI_COMM_WORLD_LOCAL_SIZE']
    with self.assertRaisesRegex(RuntimeError,
                                'OMPI_COMM_WORLD_LOCAL_SIZE is not set'):
      launchers.read_launch(env, 'n9')

  def testMalformedLauncherVariableIsNamed(self):
    with self.assertRaisesRegex(
        ValueError, r"PMI_RANK='-1': expected an integer in 0\.\.4"):
      launchers.read_launch(_hydra_env(-1, 0, 1), 'n9')

  def testRankBeyondTheSizeIsRefused(self):
    with self.assertRaisesRegex(ValueError, "OMPI_COMM_WORLD_RANK='5'"):
      launchers.read_launch(_ompi_env(5, 0, 1, 'n11'), 'n11')

  def testNodelistAndCpusOfDifferentLengthsAreRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', SLURM_JOB_CPUS_PER_NODE='3,2')
    with self.assertRaisesRegex(ValueError, r'\(3 nodes\).*\(2 entries\)'):
      launchers.read_launch(env, 'n9')

  def testOutsideAJobIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9')
    del env['SLURM_JOB_NODELIST']
    with self.assertRaisesRegex(RuntimeError, 'SLURM_JOB_NODELIST is not set'):
      launchers.read_launch(env, 'n9')


class ReadStepTest(absltest.TestCase):
  """The step of a launch: its ranks, as placed, numbered node by node."""

  def testMapByNodeRanksAreNumberedNodeByNode(self):
    # mpirun --map-by node -n5: ranks 0, 3, 4 on n9, 1 on n10, 2 on n11.
    # Each rank: (node, local rank, local size, its task index).
    ranks = [('n9', 0, 3, 0), ('n10', 0, 1, 3), ('n11', 0, 1, 4),
             ('n9', 1, 3, 1), ('n9', 2, 3, 2)]
    for rank, (node, local_rank, local_size, index) in enumerate(ranks):
      with self.subTest(rank=rank):
        env = _ompi_env(rank, local_rank, local_size, node,
                        OMPI_MCA_rmaps_base_mapping_policy='node')
        step = launchers.read_step(env, hostname=node)
        self.assertEqual((('n9', 'n10', 'n11'), (3, 1, 1)),
                         (step.nodes, step.tasks_per_node))
        self.assertEqual(index, step.task_index)
        self.assertEqual((0, 0, 0, 1, 2), step.rank_nodes)

  def testHydraRankIsNumberedNodeByNode(self):
    # mpiexec.hydra -n5 places by slot: rank 3, alone on n10, is task 3.
    step = launchers.read_step(_hydra_env(3, 0, 1), hostname='n10')
    self.assertEqual((slurm_launcher.HYDRA, 3),
                     (step.launcher, step.task_index))
    self.assertEqual((1, 0), step.place)


if __name__ == '__main__':
  absltest.main()
