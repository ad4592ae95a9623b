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
"""Tests for the launcher model: mpirun, mpiexec.hydra, srun --mpi."""

from absl.testing import absltest

from tensorflow.python.distribute.cluster_resolver import slurm_launcher
from tensorflow.python.distribute.cluster_resolver import slurm_step
from tensorflow.python.distribute.cluster_resolver import slurm_test_util

# sbatch -N3 -n5: the job as every rank sees it.
_JOB = {
    'SLURM_JOB_NODELIST': 'n[9-11]',
    'SLURM_JOB_CPUS_PER_NODE': '3,1(x2)',
    'SLURM_JOB_NUM_NODES': '3',
}


def _ompi_env(rank, local_rank, local_size, node, size=5, universe=5,
              version=4, **more):
  """An Open MPI rank of `mpirun -n SIZE` in the job above."""
  env = dict(_JOB, SLURMD_NODENAME=node,
             OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(size),
             OMPI_COMM_WORLD_LOCAL_RANK=str(local_rank),
             OMPI_COMM_WORLD_LOCAL_SIZE=str(local_size),
             OMPI_UNIVERSE_SIZE=str(universe))
  if version == 4:
    env['OMPI_MCA_orte_hnp_uri'] = '1.0;tcp://10.0.0.1:1'
  else:
    env['PRTE_LAUNCHED'] = '1'
  env.update(more)
  return env


def _hydra_env(rank, local_rank, local_size, size=5, **more):
  """A rank of `mpiexec.hydra -n SIZE` in the job above (mpiexec on n9)."""
  env = dict(_JOB, SLURMD_NODENAME='n9', PMI_RANK=str(rank),
             PMI_SIZE=str(size), MPI_LOCALRANKID=str(local_rank),
             MPI_LOCALNRANKS=str(local_size), PMI_FD='5')
  env.update(more)
  return env


def _read_launch(environ, hostname, *expand):
  return slurm_launcher.read_launch(environ, hostname, slurm_step.deal_ranks,
                                    *expand)


class DetectLauncherTest(absltest.TestCase):

  def testNoLauncherVariablesIsNoLauncher(self):
    self.assertIsNone(slurm_launcher.detect_launcher({'SLURM_PROCID': '0'}))

  def testOpenMpi4ByItsHnpUri(self):
    self.assertEqual(slurm_launcher.OPEN_MPI_4,
                     slurm_launcher.detect_launcher(_ompi_env(0, 0, 3, 'n9')))

  def testOpenMpi5ByPrteLaunched(self):
    self.assertEqual(
        slurm_launcher.OPEN_MPI_5,
        slurm_launcher.detect_launcher(_ompi_env(0, 0, 3, 'n9', version=5)))

  def testOpenMpiRankWithoutItsLauncherIsRefused(self):
    with self.assertRaisesRegex(RuntimeError, 'OMPI_COMM_WORLD_RANK is set'):
      slurm_launcher.detect_launcher({'OMPI_COMM_WORLD_RANK': '0'})

  def testOpenMpiWinsOverItsOwnPmixVariables(self):
    # mpirun's ranks also get PMIX_RANK and a numeric PMIX_NAMESPACE.
    env = _ompi_env(1, 1, 3, 'n9', PMIX_RANK='1', PMIX_NAMESPACE='3799056385')
    self.assertEqual(slurm_launcher.OPEN_MPI_4,
                     slurm_launcher.detect_launcher(env))

  def testHydraByLocalRankWithoutPmiJobid(self):
    self.assertEqual(slurm_launcher.HYDRA,
                     slurm_launcher.detect_launcher(_hydra_env(0, 0, 3)))

  def testSrunPmi2ByPmiJobid(self):
    env = {'PMI_RANK': '3', 'PMI_SIZE': '5', 'PMI_JOBID': '12.0'}
    self.assertEqual(slurm_launcher.SRUN_PMI2,
                     slurm_launcher.detect_launcher(env))

  def testSrunPmixBySlurmNamespace(self):
    env = {'PMIX_RANK': '3', 'PMIX_NAMESPACE': 'slurm.pmix.1.0'}
    self.assertEqual(slurm_launcher.SRUN_PMIX,
                     slurm_launcher.detect_launcher(env))

  def testPmiRankOfAnUnknownLauncherIsRefused(self):
    with self.assertRaisesRegex(RuntimeError, "PMI_RANK='2'.*unknown launcher"):
      slurm_launcher.detect_launcher({'PMI_RANK': '2'})

  def testPmixRankOfAnUnknownNamespaceIsRefused(self):
    with self.assertRaisesRegex(RuntimeError, "PMIX_NAMESPACE='other@1'"):
      slurm_launcher.detect_launcher({'PMIX_RANK': '0',
                                      'PMIX_NAMESPACE': 'other@1'})


class CheckSrunRankTest(absltest.TestCase):

  def testAgreeingRanksPass(self):
    slurm_launcher.check_srun_rank({'PMI_RANK': '3', 'SLURM_PROCID': '3'},
                                   slurm_launcher.SRUN_PMI2)

  def testPmiRankOtherThanProcidIsRefused(self):
    with self.assertRaisesRegex(
        RuntimeError, r"srun --mpi=pmi2: PMI_RANK='1' but SLURM_PROCID='0'"):
      slurm_launcher.check_srun_rank({'PMI_RANK': '1', 'SLURM_PROCID': '0'},
                                     slurm_launcher.SRUN_PMI2)

  def testPmixRankOtherThanProcidIsRefused(self):
    with self.assertRaisesRegex(RuntimeError, "PMIX_RANK='4'"):
      slurm_launcher.check_srun_rank({'PMIX_RANK': '4', 'SLURM_PROCID': '2'},
                                     slurm_launcher.SRUN_PMIX)


class ReadLaunchTest(absltest.TestCase):

  def testNotUnderMpiLaunchersIsNone(self):
    self.assertIsNone(_read_launch({'SLURM_PROCID': '0'}, 'n9'))

  def testOpenMpiBySlotPlacesEveryRank(self):
    launch = _read_launch(_ompi_env(3, 0, 1, 'n10'), 'n10')
    self.assertEqual(('n9', 'n10', 'n11'), launch.nodes)
    self.assertEqual([('n9', 0), ('n9', 1), ('n9', 2), ('n10', 0), ('n11', 0)],
                     slurm_test_util.launch_places(launch))
    self.assertEqual((3, slurm_launcher.OPEN_MPI_4, 'slot'),
                     (launch.rank, launch.launcher, launch.mapping))

  def testOpenMpiMapByNodeDealsRanksRoundRobin(self):
    env = _ompi_env(3, 1, 3, 'n9', OMPI_MCA_rmaps_base_mapping_policy='node')
    launch = _read_launch(env, 'n9')
    self.assertEqual([('n9', 0), ('n10', 0), ('n11', 0), ('n9', 1), ('n9', 2)],
                     slurm_test_util.launch_places(launch))
    self.assertEqual('node', launch.mapping)

  def testTheJobsNodeListIsExpandedByTheCallersExpander(self):
    # The job's nodes are those the caller's expander names, in its order.
    expanded = []

    def expand(nodelist):
      expanded.append(nodelist)
      return ['n11', 'n10', 'n9']

    launch = _read_launch(_ompi_env(3, 0, 1, 'n10'), 'n10',
                                        expand)
    self.assertEqual([_JOB['SLURM_JOB_NODELIST']], expanded)
    self.assertEqual([('n11', 0), ('n11', 1), ('n11', 2), ('n10', 0),
                      ('n9', 0)], slurm_test_util.launch_places(launch))

  def testNodesWithoutRanksAreLeftOut(self):
    launch = _read_launch(
        _ompi_env(1, 1, 2, 'n9', size=2, universe=5), 'n9')
    self.assertEqual(('n9',), launch.nodes)
    self.assertEqual((0, 0), launch.rank_nodes)

  def testUnderOpenMpiTheNodeIsSlurmdNodename(self):
    # The host name is not consulted: mpirun's ranks share their daemon's node.
    launch = _read_launch(_ompi_env(4, 0, 1, 'n11'), 'elsewhere')
    self.assertEqual(2, launch.rank_nodes[4])

  def testRankOnAnotherNodeThanModelledIsRefused(self):
    # mpirun -H n10,... put rank 3 on n11, where by slot it would be on n10.
    with self.assertRaisesRegex(
        RuntimeError,
        r'mpirun \(Open MPI 4\): cannot place the ranks for sure: rank 3 runs '
        r"on n11, but the model \(by slot over SLURM_JOB_NODELIST='n\[9-11\]', "
        r"SLURM_JOB_CPUS_PER_NODE='3,1\(x2\)'\) places it on n10\. Launch with "
        r'srun -N3 -n5'):
      _read_launch(_ompi_env(3, 0, 1, 'n11'), 'n11')

  def testOtherLocalRankThanModelledIsRefused(self):
    with self.assertRaisesRegex(
        RuntimeError, r'rank 1 is local rank 0 of 2 on n9, but the model '
        r'\(by slot .*\) makes it 1 of 3'):
      _read_launch(_ompi_env(1, 0, 2, 'n9'), 'n9')

  def testUniverseOtherThanTheJobsCpusIsRefused(self):
    # sbatch --exclusive: 4 CPUs a node, but mpirun counted the 5 tasks.
    env = _ompi_env(0, 0, 2, 'n9', SLURM_JOB_CPUS_PER_NODE='4(x3)')
    with self.assertRaisesRegex(
        RuntimeError, r"OMPI_UNIVERSE_SIZE=5 \(mpirun's slots\) but the job "
        'has 12 CPUs'):
      _read_launch(env, 'n9')

  def testUnmodelledMappingPolicyIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9',
                    OMPI_MCA_rmaps_base_mapping_policy='ppr:2:node')
    with self.assertRaisesRegex(
        RuntimeError, "OMPI_MCA_rmaps_base_mapping_policy='ppr:2:node'"):
      _read_launch(env, 'n9')

  def testOtherMappingVariablesAreRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', OMPI_MCA_rmaps_rank_file_path='/tmp/rf')
    with self.assertRaisesRegex(RuntimeError,
                                'OMPI_MCA_rmaps_rank_file_path=.*changes how'):
      _read_launch(env, 'n9')

  def testOpenMpi5HasNoMappingPolicyToRead(self):
    env = _ompi_env(0, 0, 3, 'n9', version=5,
                    OMPI_MCA_rmaps_base_mapping_policy='node')
    with self.assertRaisesRegex(RuntimeError,
                                r"only mpirun's default placement \(by slot\) "
                                'can be modelled'):
      _read_launch(env, 'n9')

  def testMoreRanksThanSlotsIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', size=6, universe=5)
    with self.assertRaisesRegex(RuntimeError, '6 ranks but the job has 5'):
      _read_launch(env, 'n9')

  def testHydraTakesTheNodeFromTheHostName(self):
    # SLURMD_NODENAME is mpiexec's (n9) on every rank.
    launch = _read_launch(_hydra_env(3, 0, 1), 'n10')
    self.assertEqual(slurm_launcher.HYDRA, launch.launcher)
    self.assertEqual([('n9', 0), ('n9', 1), ('n9', 2), ('n10', 0), ('n11', 0)],
                     slurm_test_util.launch_places(launch))

  def testHydraAcceptsAQualifiedHostName(self):
    launch = _read_launch(_hydra_env(4, 0, 1), 'n11.cluster')
    self.assertEqual(4, launch.rank)

  def testHydraHostNameOutsideTheJobIsRefused(self):
    with self.assertRaisesRegex(
        RuntimeError, "host name 'login1' is none of the job's nodes "
        r"\['n9', 'n10', 'n11'\]"):
      _read_launch(_hydra_env(3, 0, 1), 'login1')

  def testHydraPerNodeCyclicIsRefusedWhereItDiffers(self):
    # mpiexec.hydra -ppn 1 -n 5: rank 1 on n10; block would put it on n9.
    with self.assertRaisesRegex(
        RuntimeError, r'rank 1 runs on n10, but the model \(.*\) places it '
        'on n9'):
      _read_launch(_hydra_env(1, 0, 2), 'n10')

  def testMissingLauncherVariableIsNamed(self):
    env = _ompi_env(0, 0, 3, 'n9')
    del env['OMPI_COMM_WORLD_LOCAL_SIZE']
    with self.assertRaisesRegex(RuntimeError,
                                'OMPI_COMM_WORLD_LOCAL_SIZE is not set'):
      _read_launch(env, 'n9')

  def testMalformedLauncherVariableIsNamed(self):
    with self.assertRaisesRegex(
        ValueError, r"PMI_RANK='-1': expected an integer in 0\.\.4"):
      _read_launch(_hydra_env(-1, 0, 1), 'n9')

  def testRankBeyondTheSizeIsRefused(self):
    with self.assertRaisesRegex(ValueError, "OMPI_COMM_WORLD_RANK='5'"):
      _read_launch(_ompi_env(5, 0, 1, 'n11'), 'n11')

  def testNodelistAndCpusOfDifferentLengthsAreRefused(self):
    env = _ompi_env(0, 0, 3, 'n9', SLURM_JOB_CPUS_PER_NODE='3,2')
    with self.assertRaisesRegex(ValueError, r'\(3 nodes\).*\(2 entries\)'):
      _read_launch(env, 'n9')

  def testOutsideAJobIsRefused(self):
    env = _ompi_env(0, 0, 3, 'n9')
    del env['SLURM_JOB_NODELIST']
    with self.assertRaisesRegex(RuntimeError, 'SLURM_JOB_NODELIST is not set'):
      _read_launch(env, 'n9')


if __name__ == '__main__':
  absltest.main()
