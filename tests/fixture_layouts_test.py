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
train.py` would, and the tasks must agree with each other and with Slurm:
each task's address, job:index and GPUs are stated from the recorded
variables alone.
"""

import collections
import os
import subprocess
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tests.fixtures import recorded_steps
from tf_slurm import resolution
from tf_slurm import resolver as companion
from tf_slurm import slurm_test_util
from tf_slurm import util

# The bindings of SLURMD_TRES_BIND that give each task GPUs of its own
# (srun --gpus-per-task, --gpu-bind=single|map_gpu|mask_gpu).
_PER_TASK_BINDINGS = ('per_task', 'single', 'map_gpu', 'mask_gpu')


def _gpu_list(value):
  return value.split(',') if value else []


def _bound_per_task(env):
  """Whether Slurm bound this task's GPUs to it (SLURM_GPUS_ON_NODE > own)."""
  binding = env.get('SLURMD_TRES_BIND', '')
  if any(':%s' % kind in binding for kind in _PER_TASK_BINDINGS):
    return True
  on_node = env.get('SLURM_GPUS_ON_NODE')
  return on_node is not None and int(on_node) > len(
      _gpu_list(env['CUDA_VISIBLE_DEVICES']))


def _component_nodes(env):
  """The nodes of this task's heterogeneous component (or of the step)."""
  size = int(env.get('SLURM_HET_SIZE', env.get('SLURM_PACK_SIZE', '1')))
  for component in range(size):
    for kind in ('HET', 'PACK'):
      name = 'SLURM_JOB_NODELIST_%s_GROUP_%d' % (kind, component)
      if name in env:
        nodes = slurm_hostlist.expand_hostlist(env[name])
        if env['SLURMD_NODENAME'] in nodes:
          return set(nodes)
  return None  # Not heterogeneous: every node of the step.


def expected_gpus(envs, by_component=True):
  """CUDA_VISIBLE_DEVICES of each task by Slurm's binding and the rule.

  The rule: a task whose GPUs Slurm bound to it keeps them. Otherwise the
  task of local index l on a node whose list from Slurm is L (G entries) gets
  L[l*k:(l+1)*k], with k = G // T and T the tasks on the busiest node of its
  component (`by_component`, the companion's) or of the step (the core's);
  if k is 0, the companion gives it [L[l % G]], the core none. A task
  without CUDA_VISIBLE_DEVICES (and here no nvidia-smi) gets none.

  Args:
    envs: The recorded environment of every task of the step.
    by_component: Whether to follow the companion's rule.

  Returns:
    For each rank, the expected CUDA_VISIBLE_DEVICES, or None if unset.
  """
  tasks_on = collections.Counter(env['SLURMD_NODENAME'] for env in envs)
  gpus = []
  for env in envs:
    if 'CUDA_VISIBLE_DEVICES' not in env:
      gpus.append(None)
      continue
    slurms = _gpu_list(env['CUDA_VISIBLE_DEVICES'])
    if _bound_per_task(env) or not slurms:
      gpus.append(env['CUDA_VISIBLE_DEVICES'])
      continue
    component = _component_nodes(env) if by_component else None
    busiest = max(count for node, count in tasks_on.items()
                  if component is None or node in component)
    local, per_task = int(env['SLURM_LOCALID']), len(slurms) // busiest
    if per_task:
      share = slurms[local * per_task:(local + 1) * per_task]
    else:
      share = [slurms[local % len(slurms)]] if by_component else []
    gpus.append(','.join(share))
  return gpus


def _node_major_index(env):
  """Tasks on the nodes listed before the task's own, plus its local id."""
  nodes = slurm_hostlist.expand_hostlist(env['SLURM_STEP_NODELIST'])
  counts = slurm_hostlist.expand_tasks_per_node(
      env['SLURM_STEP_TASKS_PER_NODE'])
  node = nodes.index(env['SLURMD_NODENAME'])
  return sum(counts[:node]) + int(env['SLURM_LOCALID'])


_RESOLVERS = [('_core', slurm_cluster_resolver.SlurmClusterResolver),
              ('_companion', companion.SlurmClusterResolver)]


def _steps_of_both_resolvers():
  return [(name + '_' + step.replace('-', '_').replace('/', '_'), step, cls)
          for step in recorded_steps.steps() for name, cls in _RESOLVERS]


class FixtureLayoutTest(parameterized.TestCase):
  """Every task of every recorded step, by the core and by the companion."""

  def setUp(self):
    super().setUp()
    # Whatever the machine has, the recorded steps had no nvidia-smi, and
    # their slurm.conf (SLURM_CONF) is not read: where it lists
    # GresTypes=gpu, the companion's tasks without GPU variables would hide
    # the node's GPUs (slurm_gpus_test.py), which this rule leaves out.
    self.enter_context(
        mock.patch.object(util, 'run_command',
                          side_effect=slurm_test_util.fake_run_command()))
    self.enter_context(mock.patch.object(
        resolution, '_gres_types', return_value=()))
    self.enter_context(mock.patch.object(
        subprocess, 'run', side_effect=FileNotFoundError('nvidia-smi')))

  def _resolve_every_task(self, envs, resolver_class, **kwargs):
    """Resolves in each task's environment; returns (env, resolver, CVD)."""
    results = []
    for env in envs:
      with mock.patch.dict(os.environ, env, clear=True):
        resolver = resolver_class(**kwargs)
        results.append(
            (env, resolver, os.environ.get('CUDA_VISIBLE_DEVICES')))
    return results

  def testEveryRecordedStepIsCovered(self):
    self.assertLen(recorded_steps.steps(), 26)

  @parameterized.named_parameters(_steps_of_both_resolvers())
  def testEveryTaskResolvesTheSameClusterSpec(self, step, resolver_class):
    results = self._resolve_every_task(recorded_steps.task_envs(step),
                                       resolver_class)
    specs = [r.cluster_spec().as_dict() for _, r, _ in results]
    for spec in specs[1:]:
      self.assertEqual(specs[0], spec)
    self.assertLen(specs[0]['worker'], len(results))

  @parameterized.named_parameters(_steps_of_both_resolvers())
  def testTaskIdIsNodeByNodeAndAddressIsOnItsNode(self, step, resolver_class):
    for env, resolver, _ in self._resolve_every_task(
        recorded_steps.task_envs(step), resolver_class):
      self.assertEqual(('worker', _node_major_index(env)),
                       resolver.get_task_info())
      self.assertEqual(
          'grpc://%s:%d' % (env['SLURMD_NODENAME'],
                            8888 + int(env['SLURM_LOCALID'])),
          resolver.master())

  @parameterized.named_parameters(_steps_of_both_resolvers())
  def testAllAddressesDiffer(self, step, resolver_class):
    _, resolver, _ = self._resolve_every_task(
        recorded_steps.task_envs(step), resolver_class)[0]
    addresses = resolver.cluster_spec().as_dict()['worker']
    self.assertLen(set(addresses), len(addresses))

  @parameterized.named_parameters(_steps_of_both_resolvers())
  def testEveryTaskGetsItsGpusBySlurmsBindingAndTheDealingRule(
      self, step, resolver_class):
    envs = recorded_steps.task_envs(step)
    expected = expected_gpus(
        envs, by_component=resolver_class is companion.SlurmClusterResolver)
    got = []
    for _, resolver, visible in self._resolve_every_task(envs,
                                                         resolver_class):
      got.append(visible)
      self.assertEqual({'GPU': len(_gpu_list(visible))},
                       resolver.num_accelerators())
    self.assertEqual(expected, got)

  @parameterized.named_parameters(_RESOLVERS)
  def testArbitraryLayoutIsNumberedNodeByNodeWithoutTheHostfile(
      self, resolver_class):
    # srun -m arbitrary put rank 0 on n2; no task reads SLURM_HOSTFILE.
    envs = [dict(env, SLURM_HOSTFILE='/nonexistent/hostfile')
            for env in recorded_steps.task_envs('n5-arbitrary-hostfile')]
    results = self._resolve_every_task(envs, resolver_class)
    self.assertEqual(['n1:8888', 'n1:8889', 'n1:8890', 'n2:8888', 'n2:8889'],
                     results[0][1].cluster_spec().as_dict()['worker'])

  @parameterized.named_parameters(_RESOLVERS)
  def testJobsSplitEveryStepNodeByNode(self, resolver_class):
    results = self._resolve_every_task(
        recorded_steps.task_envs('N3-n7'), resolver_class,
        jobs={'chief': 1, 'ps': 2, 'worker': 4})
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

  @parameterized.named_parameters(_RESOLVERS)
  def testBatchScriptOfAJobOfFourTasksIsToldToUseSrun(self, resolver_class):
    env = recorded_steps.read_env(os.path.join(
        recorded_steps.FIXTURES, 'sbatch-N2-ntpn2-gres2', 'batch.env'))
    with mock.patch.dict(os.environ, env, clear=True):
      with self.assertRaisesRegex(RuntimeError, 'outside an srun step.*4 '
                                  r'tasks \(SLURM_NTASKS=4\): start the '
                                  'program with srun'):
        resolver_class()
      self.assertEqual(env, dict(os.environ))

  @parameterized.named_parameters(_RESOLVERS)
  def testSallocShellIsToldToUseSrun(self, resolver_class):
    env = recorded_steps.read_env(os.path.join(
        recorded_steps.FIXTURES, 'salloc-N3-n5', 'salloc.env'))
    with mock.patch.dict(os.environ, env, clear=True):
      with self.assertRaisesRegex(RuntimeError, 'start the program with srun'):
        resolver_class()
      self.assertEqual(env, dict(os.environ))


if __name__ == '__main__':
  absltest.main()
