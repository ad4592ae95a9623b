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
"""The launcher model over every rank of real mpirun, hydra and srun launches.

`fixtures/launchers/<launch>/<rank>.env` holds the environment of every rank
of a real launch on the Slurm lab and `<rank>.host` its real host name (see
fixtures/launchers/README.txt). What every rank must get is stated here from
those host names and the launchers' own local ranks: where the model places
the ranks, every rank's row is its real node and local rank, and all ranks
agree; where it cannot, the ranks named here refuse.
"""

import os
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tf_slurm import launchers
from tf_slurm import resolver as tf_slurm_resolver
from tf_slurm import slurm_launcher
from tf_slurm import slurm_test_util

_FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures', 'launchers')
_OPEN_MPI_4 = slurm_launcher.OPEN_MPI_4
_OPEN_MPI_5 = slurm_launcher.OPEN_MPI_5
_HYDRA = slurm_launcher.HYDRA
# Launches whose every rank is placed: (launcher, mapping).
_PLACED = {
    'sbatch-N3-n5-mpirun': (_OPEN_MPI_4, 'slot'),
    'sbatch-N3-n5-mpirun-map-by-node': (_OPEN_MPI_4, 'node'),
    'salloc-N3-n5-mpirun': (_OPEN_MPI_4, 'slot'),
    'salloc-N3-n5-mpirun-map-by-node': (_OPEN_MPI_4, 'node'),
    'sbatch-N3-ntpn2-gpus-per-node2-mpirun': (_OPEN_MPI_4, 'slot'),
    'sbatch-N3-n5-mpirun5': (_OPEN_MPI_5, 'slot'),
    'salloc-N3-n5-mpirun5': (_OPEN_MPI_5, 'slot'),
    'sbatch-N3-n5-hydra': (_HYDRA, 'slot'),
    'salloc-N3-n5-hydra': (_HYDRA, 'slot'),
    'sbatch-N3-ntpn2-gpus-per-node2-hydra': (_HYDRA, 'slot'),
}
# Launches the model cannot follow: the ranks that refuse, and why.
_REFUSED = {
    # --exclusive: 4 CPUs a node, but mpirun's slots are the job's 2,2,1
    # tasks; OMPI_UNIVERSE_SIZE=5 shows it on every rank.
    'sbatch-N3-n5-exclusive-mpirun': ({0, 1, 2, 3, 4}, 'OMPI_UNIVERSE_SIZE=5'),
    # -ppn 1 deals the ranks cyclically; no variable says so, and no rank's
    # node and local size fit the block placement.
    'sbatch-N3-n5-hydra-ppn1': ({0, 1, 2, 3, 4}, 'mpiexec.hydra: cannot'),
    # Open MPI 5 exports no mapping policy: --map-by node is modelled by
    # slot, which ranks 1-4 refuse (their node differs); ranks 0 and 5 sit
    # where the model puts them, and mpirun stops them when rank 1 fails.
    'sbatch-N3-ntpn2-mpirun5-map-by-node': ({1, 2, 3, 4}, 'runs on'),
}
_SRUN = {
    'srun-N3-n5-pmi2': slurm_launcher.SRUN_PMI2,
    'srun-N3-n5-pmix': slurm_launcher.SRUN_PMIX,
}


def _read_env(path):
  with open(path) as f:
    return dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)


def _ranks(launch):
  """[(env, host name)] of every rank of `launch`, in rank order."""
  folder = os.path.join(_FIXTURES, launch)
  count = len([n for n in os.listdir(folder) if n.endswith('.env')])
  ranks = []
  for rank in range(count):
    with open(os.path.join(folder, '%d.host' % rank)) as f:
      ranks.append((_read_env(os.path.join(folder, '%d.env' % rank)),
                    f.read().strip()))
  return ranks


def _launcher_local_rank(env):
  return int(env.get('OMPI_COMM_WORLD_LOCAL_RANK', env.get('MPI_LOCALRANKID')))


class LauncherFixturesTest(parameterized.TestCase):

  def testEveryRecordedLaunchIsStatedHere(self):
    recorded = {name for name in os.listdir(_FIXTURES)
                if os.path.isdir(os.path.join(_FIXTURES, name))}
    self.assertEqual(recorded, set(_PLACED) | set(_REFUSED) | set(_SRUN))

  @parameterized.named_parameters((name, name) for name in sorted(_PLACED))
  def testEveryRankIsPlacedOnItsRealNode(self, name):
    launcher, mapping = _PLACED[name]
    ranks = _ranks(name)
    launches = [launchers.read_launch(env, host) for env, host in ranks]
    truth = [(host, _launcher_local_rank(env)) for env, host in ranks]
    for rank, launch in enumerate(launches):
      self.assertEqual((launcher, mapping, rank),
                       (launch.launcher, launch.mapping, launch.rank))
      self.assertEqual(truth, slurm_test_util.launch_places(launch))
      self.assertEqual(launches[0].nodes, launch.nodes)

  @parameterized.named_parameters((name, name) for name in sorted(_REFUSED))
  def testTheNamedRanksRefuse(self, name):
    refusing, message = _REFUSED[name]
    for rank, (env, host) in enumerate(_ranks(name)):
      if rank in refusing:
        with self.assertRaisesRegex(RuntimeError,
                                    '%s.*Launch with srun -N3 -n' % message):
          launchers.read_launch(env, host)
      else:
        launch = launchers.read_launch(env, host)
        self.assertEqual((host, _launcher_local_rank(env)),
                         slurm_test_util.launch_places(launch)[rank])

  @parameterized.named_parameters((name, name) for name in sorted(_SRUN))
  def testSrunRanksAgreeWithSlurmAndLeaveTheStepToSlurm(self, name):
    for env, host in _ranks(name):
      self.assertEqual(_SRUN[name], slurm_launcher.detect_launcher(env))
      slurm_launcher.check_srun_rank(env, _SRUN[name])
      self.assertIsNone(launchers.read_launch(env, host))
      self.assertEqual(host, env['SLURMD_NODENAME'])

  def _resolve(self, env, host, resolver_class=None, **kwargs):
    """A resolver in a rank's recorded environment and host.

    Args:
      env: The rank's environment.
      host: Its host name.
      resolver_class: The class (default: the companion's, which places MPI
        launches).
      **kwargs: The constructor's arguments.

    Returns:
      (the resolver, CUDA_VISIBLE_DEVICES after it).
    """
    resolver_class = resolver_class or tf_slurm_resolver.SlurmClusterResolver
    with mock.patch.dict(os.environ, env, clear=True), mock.patch.object(
        launchers.socket, 'gethostname', return_value=host):
      resolver = resolver_class(**kwargs)
      return resolver, os.environ.get('CUDA_VISIBLE_DEVICES')

  @parameterized.named_parameters(
      (name, name) for name in sorted(set(_PLACED) | set(_REFUSED)))
  def testTheCoreResolverRefusesEveryRankNamingTheSrunLine(self, name):
    for rank, (env, host) in enumerate(_ranks(name)):
      with self.subTest(rank=rank), self.assertRaisesRegex(
          RuntimeError, r'(an MPI launcher .*|outside an srun step .*)[:.] '
          r'[Ss]tart the program with srun|SLURM_GTIDS=.* disagree'):
        self._resolve(env, host, slurm_cluster_resolver.SlurmClusterResolver)

  @parameterized.named_parameters((name, name) for name in sorted(_PLACED))
  def testEveryRankResolvesTheClusterOfTheRealPlacement(self, name):
    # Node by node, in the job's node list order, whatever the rank order.
    ranks = _ranks(name)
    nodes = slurm_hostlist.expand_hostlist(ranks[0][0]['SLURM_JOB_NODELIST'])
    places = sorted((nodes.index(host), _launcher_local_rank(env))
                    for env, host in ranks)
    workers = ['%s:%d' % (nodes[node], 8888 + local)
               for node, local in places]
    for rank, (env, host) in enumerate(ranks):
      with self.subTest(rank=rank):
        resolver, _ = self._resolve(env, host, auto_set_gpu=False)
        self.assertEqual({'worker': workers},
                         resolver.cluster_spec().as_dict())
        index = places.index((nodes.index(host), _launcher_local_rank(env)))
        self.assertEqual(('worker', index), resolver.get_task_info())

  @parameterized.named_parameters((name, name) for name in sorted(_PLACED))
  def testTheCallersExpanderReadsTheJobsNodeList(self, name):
    # hostlist_expansion holds under the launchers too: every rank expands
    # the job's node list with the caller's expander, once.
    for rank, (env, host) in enumerate(_ranks(name)):
      with self.subTest(rank=rank):
        expanded = []

        def spy(nodelist, expanded=expanded):
          expanded.append(nodelist)
          return slurm_hostlist.expand_hostlist(nodelist)

        launchers.read_step(env, expand=spy, hostname=host)
        self.assertEqual([env['SLURM_JOB_NODELIST']], expanded)

  @parameterized.named_parameters(
      ('_mpirun', 'sbatch-N3-ntpn2-gpus-per-node2-mpirun'),
      ('_hydra', 'sbatch-N3-ntpn2-gpus-per-node2-hydra'))
  def testGpusAreDealtByTheLaunchersLocalRank(self, name):
    # --gpus-per-node=2, two ranks a node: local rank l gets GPU l.
    for rank, (env, host) in enumerate(_ranks(name)):
      with self.subTest(rank=rank):
        resolver, visible = self._resolve(env, host)
        self.assertEqual(str(_launcher_local_rank(env)), visible)
        self.assertEqual({'GPU': 1}, resolver.num_accelerators())

  @parameterized.named_parameters(
      ('_mpirun', 'sbatch-N3-n5-mpirun'), ('_hydra', 'sbatch-N3-n5-hydra'))
  def testReservedPortsAreRefusedOnEveryRank(self, name):
    for env, host in _ranks(name):
      with self.assertRaisesRegex(ValueError,
                                  r"port_base='reserved' under .*daemon step"):
        self._resolve(env, host, port_base='reserved')

  @parameterized.named_parameters((name, name) for name in sorted(_REFUSED))
  def testTheResolverRefusesWhereTheModelCannotPlaceTheRanks(self, name):
    refusing, message = _REFUSED[name]
    for rank, (env, host) in enumerate(_ranks(name)):
      if rank in refusing:
        with self.assertRaisesRegex(RuntimeError, message):
          self._resolve(env, host)

  def testHydraRanksSeeMpiexecsNodeNameInSbatch(self):
    # Why hydra's ranks are placed by host name: all say n9.
    ranks = _ranks('sbatch-N3-n5-hydra')
    self.assertEqual({'n9'}, {env['SLURMD_NODENAME'] for env, _ in ranks})
    self.assertEqual(['n9', 'n9', 'n9', 'n10', 'n11'],
                     [host for _, host in ranks])


if __name__ == '__main__':
  absltest.main()
