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
"""A base for the tests of SlurmClusterResolver."""

import os
from unittest import mock

from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_tasks_per_node
from tf_slurm import resolver
from tf_slurm import slurm_test_util
from tf_slurm import util


def node_major_index(env):
  """A task's index node by node: tasks on earlier listed nodes + local id."""
  nodes = expand_hostlist(env['SLURM_STEP_NODELIST'])
  counts = expand_tasks_per_node(env['SLURM_STEP_TASKS_PER_NODE'])
  node = nodes.index(env['SLURMD_NODENAME'])
  return sum(counts[:node]) + int(env['SLURM_LOCALID'])


class ResolverTestCase(parameterized.TestCase):
  """Resolver tests on a machine without scontrol or nvidia-smi.

  Each test sets the whole environment it resolves in (`use_env`), so the
  Slurm and GPU variables of the shell that runs the tests play no part.

  Attributes:
    resolver_class: The class the helpers construct: the companion's.
  """

  resolver_class = resolver.SlurmClusterResolver

  def setUp(self):
    super().setUp()
    self.run = self.enter_context(
        mock.patch.object(util, 'run_command',
                          side_effect=slurm_test_util.fake_run_command()))
    # Whatever a test does to os.environ is undone after it.
    self.enter_context(mock.patch.dict(os.environ))
    # Nor is this machine's slurm.conf read where SLURM_CONF is unset.
    self.enter_context(mock.patch.object(
        util, '_SLURM_CONF_PATHS',
        (os.path.join(self.create_tempdir().full_path, 'no-slurm.conf'),)))

  def use_slurm_conf(self, text):
    """Returns the path of a slurm.conf of `text`, for SLURM_CONF."""
    return self.create_tempfile('slurm.conf', content=text).full_path

  def use_env(self, env):
    """Makes `env` the whole environment for the rest of the test."""
    self.enter_context(mock.patch.dict(os.environ, env, clear=True))

  def use_gpu_env(self, cvd, rank=1, tasks='2', rank_hosts='n1 n1', **more):
    """One node `n1` whose tasks Slurm gave `cvd`."""
    self.use_env(
        slurm_test_util.step_env('n1', tasks, rank_hosts, rank,
                                 CUDA_VISIBLE_DEVICES=cvd, SLURM_STEP_GPUS=cvd,
                                 GPU_DEVICE_ORDINAL=cvd, **more))

  def set_run_result(self, result):
    """Makes every command run end as `result` does (`fake_run_command`)."""
    self.run.side_effect = slurm_test_util.fake_run_command(result)

  def assertResolverFails(self, error, regex, *args, **kwargs):
    """Asserts the resolver raises and leaves os.environ exactly as it was."""
    before = dict(os.environ)
    with self.assertRaisesRegex(error, regex):
      self.resolver_class(*args, **kwargs)
    self.assertEqual(before, dict(os.environ))

  def assertWorkers(self, addresses, resolver):
    self.assertEqual({'worker': addresses}, resolver.cluster_spec().as_dict())

  def assertEveryTask(self, envs, spec=None, tasks=None, gpus=None, **kwargs):
    """Resolves in the environment of every task of a step, one at a time.

    Args:
      envs: The environment of each task, in rank order.
      spec: If given, the cluster spec (as a dict) that every task resolves;
        then each task's job:index (`tasks`) and master() are checked too.
      tasks: The (job, index) of each rank; by default ('worker', i), where
        i is the rank's index node by node (`node_major_index`).
      gpus: If given, the CUDA_VISIBLE_DEVICES each rank ends with (None: not
        set), and so as many GPUs in num_accelerators().
      **kwargs: The arguments of SlurmClusterResolver.
    """
    if tasks is None:
      tasks = [('worker', node_major_index(env)) for env in envs]
    self.assertLen(tasks, len(envs))
    for rank, env in enumerate(envs):
      with self.subTest(rank=rank):
        self.use_env(env)
        resolver = self.resolver_class(**kwargs)
        if spec is not None:
          self.assertEqual(spec, resolver.cluster_spec().as_dict())
          job, index = tasks[rank]
          self.assertEqual((job, index), resolver.get_task_info())
          self.assertEqual('grpc://' + spec[job][index], resolver.master())
        if gpus is not None:
          self.assertEqual(gpus[rank], os.environ.get('CUDA_VISIBLE_DEVICES'))
          count = len(gpus[rank].split(',')) if gpus[rank] else 0
          self.assertEqual({'GPU': count}, resolver.num_accelerators())
