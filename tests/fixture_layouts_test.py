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
"""SlurmClusterResolver over the recorded environments of real Slurm steps.

`fixtures/slurm-env/<layout>/<rank>.env` holds the SLURM_*/GPU environment of
every task of a real Slurm 22.05 job step (see fixtures/slurm-env/README.txt).
For each step, every task resolves with default arguments, as `srun python
train.py` would, and the tasks must agree with each other and with Slurm.
"""

import os
import subprocess
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

_FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures', 'slurm-env')
# The arbitrary layout's SLURM_HOSTFILE, as fixtures/slurm-env/README.txt
# records it: the host of rank r on line r.
_ARBITRARY_HOSTFILE = 'n2\nn1\nn2\nn1\nn1\n'


def _read_env(path):
  with open(path) as f:
    return dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)


def _step_dirs():
  """Every folder holding the <rank>.env files of one step, sorted."""
  steps = []
  for folder, _, files in os.walk(_FIXTURES):
    if any(name[0].isdigit() and name.endswith('.env') for name in files):
      steps.append(os.path.relpath(folder, _FIXTURES))
  return sorted(steps)


def _task_envs(step):
  folder = os.path.join(_FIXTURES, step)
  names = [n for n in os.listdir(folder) if n[0].isdigit()]
  return [
      _read_env(os.path.join(folder, name))
      for name in sorted(names, key=lambda n: int(n.split('.')[0]))
  ]


def _no_nvidia_smi(*args, **kwargs):
  raise FileNotFoundError(2, 'No such file or directory', args[0][0])


class FixtureLayoutTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    # Whatever the machine has, the recorded steps had no nvidia-smi.
    self.enter_context(
        mock.patch.object(subprocess, 'run', side_effect=_no_nvidia_smi))
    self.hostfile = self.create_tempfile(content=_ARBITRARY_HOSTFILE)

  def _resolve_every_task(self, step, **kwargs):
    """Resolves in each task's environment; returns (env, resolver, CVD)."""
    results = []
    for env in _task_envs(step):
      if 'SLURM_HOSTFILE' in env:
        env['SLURM_HOSTFILE'] = self.hostfile.full_path
      with mock.patch.dict(os.environ, env, clear=True):
        resolver = slurm_cluster_resolver.SlurmClusterResolver(**kwargs)
        results.append(
            (env, resolver, os.environ.get('CUDA_VISIBLE_DEVICES')))
    return results

  def testEveryRecordedStepIsCovered(self):
    self.assertLen(_step_dirs(), 26)

  @parameterized.parameters(_step_dirs())
  def testEveryTaskResolvesTheSameClusterSpec(self, step):
    results = self._resolve_every_task(step)
    specs = [r.cluster_spec().as_dict() for _, r, _ in results]
    for spec in specs[1:]:
      self.assertEqual(specs[0], spec)
    self.assertLen(specs[0]['worker'], len(results))

  @parameterized.parameters(_step_dirs())
  def testTaskIdIsSlurmRankAndAddressIsOnItsNode(self, step):
    for env, resolver, _ in self._resolve_every_task(step):
      self.assertEqual(('worker', int(env['SLURM_PROCID'])),
                       resolver.get_task_info())
      self.assertEqual(
          'grpc://%s:%d' % (env['SLURMD_NODENAME'],
                            8888 + int(env['SLURM_LOCALID'])),
          resolver.master())

  @parameterized.parameters(_step_dirs())
  def testAllAddressesDiffer(self, step):
    _, resolver, _ = self._resolve_every_task(step)[0]
    addresses = resolver.cluster_spec().as_dict()['worker']
    self.assertLen(set(addresses), len(addresses))

  @parameterized.parameters(_step_dirs())
  def testGpusStayWithinSlurmsBindingAndDoNotOverlapOnANode(self, step):
    used_on_node = {}
    for env, resolver, visible in self._resolve_every_task(step):
      given = env.get('CUDA_VISIBLE_DEVICES')
      gpus = [] if visible in (None, '') else visible.split(',')
      if given is None:
        self.assertIsNone(visible)
      else:
        self.assertContainsSubset(gpus, given.split(','))
      self.assertEqual({'GPU': len(gpus)}, resolver.num_accelerators())
      node_gpus = used_on_node.setdefault(env['SLURMD_NODENAME'], set())
      self.assertEmpty(node_gpus.intersection(gpus))
      node_gpus.update(gpus)

  @parameterized.parameters(_step_dirs())
  def testEveryTaskWithGpusUsesTheSameNumber(self, step):
    counts = {
        resolver.num_accelerators()['GPU']
        for env, resolver, _ in self._resolve_every_task(step)
        if env.get('CUDA_VISIBLE_DEVICES')
    }
    self.assertLessEqual(len(counts), 1)

  @parameterized.parameters(_step_dirs())
  def testGpusSlurmBoundPerTaskAreKept(self, step):
    for env, _, visible in self._resolve_every_task(step):
      if 'SLURMD_TRES_BIND' in env:
        self.assertEqual(env['CUDA_VISIBLE_DEVICES'], visible)

  def testArbitraryLayoutFollowsTheHostfile(self):
    results = self._resolve_every_task('n5-arbitrary-hostfile')
    self.assertEqual(['n2:8888', 'n1:8888', 'n2:8889', 'n1:8889', 'n1:8890'],
                     results[0][1].cluster_spec().as_dict()['worker'])

  def testArbitraryLayoutWithoutReadableHostfileIsAnError(self):
    # Tasks that cannot read it cannot know which rank runs where.
    self.hostfile = mock.Mock(full_path='/nonexistent/hostfile')
    with self.assertRaisesRegex(RuntimeError,
                                "SLURM_HOSTFILE='/nonexistent/hostfile'"):
      self._resolve_every_task('n5-arbitrary-hostfile')

  def testJobsSplitEveryStepInRankOrder(self):
    results = self._resolve_every_task(
        'N3-n7', jobs={'chief': 1, 'ps': 2, 'worker': 4})
    self.assertEqual(
        {
            'chief': ['n1:8888'],
            'ps': ['n1:8889', 'n1:8890'],
            'worker': ['n1:8891', 'n2:8888', 'n2:8889', 'n3:8888'],
        },
        results[0][1].cluster_spec().as_dict())
    self.assertEqual([('chief', 0), ('ps', 0), ('ps', 1), ('worker', 0),
                      ('worker', 1), ('worker', 2), ('worker', 3)],
                     [r.get_task_info() for _, r, _ in results])

  def testBatchScriptResolvesAsRankZeroOfTheJob(self):
    env = _read_env(os.path.join(_FIXTURES, 'sbatch-N2-ntpn2-gres2',
                                 'batch.env'))
    with mock.patch.dict(os.environ, env, clear=True):
      resolver = slurm_cluster_resolver.SlurmClusterResolver()
      self.assertEqual(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'],
                       resolver.cluster_spec().as_dict()['worker'])
      self.assertEqual(('worker', 0), resolver.get_task_info())

  def testSallocShellIsToldToUseSrun(self):
    env = _read_env(os.path.join(_FIXTURES, 'salloc-N3-n5', 'salloc.env'))
    with mock.patch.dict(os.environ, env, clear=True):
      with self.assertRaisesRegex(RuntimeError, 'SLURM_PROCID.*srun'):
        slurm_cluster_resolver.SlurmClusterResolver()
      self.assertEqual(env, dict(os.environ))


if __name__ == '__main__':
  absltest.main()
