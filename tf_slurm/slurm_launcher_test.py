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
"""Tests for telling launchers apart: mpirun, mpiexec.hydra, srun --mpi."""

from absl.testing import absltest

from tf_slurm import slurm_launcher
from tf_slurm import slurm_test_util

# Ranks of launches in `sbatch -N3 -n5`.
_ompi_env = slurm_test_util.ompi_env
_hydra_env = slurm_test_util.hydra_env


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


class LauncherErrorTest(absltest.TestCase):

  def testMpirunRanksAreToldTheSrunLineOfTheSameRanks(self):
    error = slurm_launcher.launcher_error(_ompi_env(0, 0, 3, 'n9'),
                                          slurm_launcher.OPEN_MPI_4)
    self.assertIsInstance(error, RuntimeError)
    self.assertIn('mpirun (Open MPI 4) started this process', str(error))
    self.assertIn('srun -N3 -n5 <command>', str(error))

  def testHydraRanksAreToldTheSrunLineOfTheSameRanks(self):
    error = slurm_launcher.launcher_error(_hydra_env(2, 0, 1),
                                          slurm_launcher.HYDRA)
    self.assertIn('srun -N3 -n5 <command>', str(error))

  def testMalformedWorldSizeIsNotRepeated(self):
    error = slurm_launcher.launcher_error(_hydra_env(0, 0, 1, size='5;rm'),
                                          slurm_launcher.HYDRA)
    self.assertIn('srun -N3 -n<ranks> <command>', str(error))


if __name__ == '__main__':
  absltest.main()
