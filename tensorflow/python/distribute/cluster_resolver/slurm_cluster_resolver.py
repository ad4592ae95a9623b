# Copyright 2018-2020 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Implementation of Cluster Resolvers for Slurm workload manager."""

import operator
import os
import subprocess

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_step
from tensorflow.python.distribute.cluster_resolver.cluster_resolver import ClusterResolver
from tensorflow.python.distribute.cluster_resolver.cluster_resolver import format_master_url
from tensorflow.python.platform import tf_logging as logging
from tensorflow.python.training.server_lib import ClusterSpec
from tensorflow.python.util.tf_export import tf_export

expand_hostlist = slurm_hostlist.expand_hostlist
expand_tasks_per_node = slurm_hostlist.expand_tasks_per_node

_NVIDIA_SMI = ('nvidia-smi', '--list-gpus')
_NVIDIA_SMI_TIMEOUT_SECS = 10
_NVIDIA_SMI_FOUND_NO_GPU = 6  # Its exit status for "No devices were found".
_MAX_PORT = 65535


def _count_nvidia_gpus():
  """Counts this node's GPUs with `nvidia-smi --list-gpus`; 0 without it."""
  try:
    result = subprocess.run(
        _NVIDIA_SMI, capture_output=True, text=True, errors='replace',
        timeout=_NVIDIA_SMI_TIMEOUT_SECS, check=False)
  except FileNotFoundError:
    return 0
  except (OSError, subprocess.TimeoutExpired) as e:
    raise RuntimeError('Could not count the GPUs with `%s`: %s. Pass '
                       'gpus_per_node.' % (' '.join(_NVIDIA_SMI), e)) from None
  if result.returncode == _NVIDIA_SMI_FOUND_NO_GPU:
    return 0
  if result.returncode:
    raise RuntimeError('`%s` exited with status %d: %s. Pass gpus_per_node.' %
                       (' '.join(_NVIDIA_SMI), result.returncode,
                        result.stderr.strip()[-500:]))
  return sum(line.startswith('GPU ') for line in result.stdout.splitlines())


def get_num_gpus():
  """Returns the number of GPUs this task may use: Slurm's, or nvidia-smi's."""
  gpus, _ = slurm_step.read_gpus(os.environ)
  return _count_nvidia_gpus() if gpus is None else len(gpus)


def _node_gpus(visible, gpus_per_node):
  """The GPU ids of this node to deal among its tasks, or None if unknown."""
  if gpus_per_node is None:
    if visible is None:
      count = _count_nvidia_gpus()
      return [str(gpu) for gpu in range(count)] if count else None
    return visible
  if not visible:
    # As TensorFlow: the count given, numbered from 0.
    return [str(gpu) for gpu in range(gpus_per_node)]
  if gpus_per_node > len(visible):
    raise RuntimeError(
        'Requested more GPUs per node than available: gpus_per_node=%d but '
        'CUDA_VISIBLE_DEVICES=%r' % (gpus_per_node, ','.join(visible)))
  return visible[:gpus_per_node]


def _task_gpus(gpus_per_node, gpus_per_task, busiest, local):
  """Returns (GPUs each task uses, this task's GPU ids or None to keep them).

  GPUs Slurm bound to the task stay with it; the node's other GPUs are
  dealt by id, `gpus_per_task` (by default as many as the node of `busiest`
  tasks allows every task) to each task in the order of its `local` index.
  A RuntimeError says where more GPUs are requested than Slurm gave.
  """
  if gpus_per_node == 0 and not gpus_per_task:
    return 0, []
  visible, bound = slurm_step.read_gpus(os.environ)
  if bound:
    per_task = len(visible) if gpus_per_task is None else gpus_per_task
    if per_task > len(visible):
      raise RuntimeError(
          'Requested %d GPUs per task but this task may use %d '
          '(CUDA_VISIBLE_DEVICES=%r)' % (per_task, len(visible),
                                         ','.join(visible)))
    return per_task, visible[:per_task]
  node_gpus = _node_gpus(visible, gpus_per_node)
  if node_gpus is None and gpus_per_task is None:
    return 0, None
  node_gpus = node_gpus or []
  per_task = len(node_gpus) // busiest if gpus_per_task is None else (
      gpus_per_task)
  if per_task * busiest > len(node_gpus):
    raise RuntimeError(
        'Requested more GPUs per node than available: %d tasks on the busiest '
        'node x %d GPUs per task > %d GPUs %s' %
        (busiest, per_task, len(node_gpus), node_gpus))
  return per_task, node_gpus[local * per_task:(local + 1) * per_task]


def _check_jobs(jobs):
  """Checks that `jobs` maps job names to counts of tasks."""
  try:
    counts = [operator.index(count) for count in jobs.values()]
  except (AttributeError, TypeError):
    counts = [-1]
  if not jobs or min(counts) < 0:
    raise ValueError('jobs=%r: expected a dict of job name -> number of '
                     'tasks' % (jobs,))


@tf_export('distribute.cluster_resolver.SlurmClusterResolver')
class SlurmClusterResolver(ClusterResolver):
  """ClusterResolver for systems with the Slurm workload manager.

  Create it in every task of an `srun` step:

  ```python
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver()
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  ```

  The step is fixed for its tasks' life: the cluster is resolved once, in the
  constructor. A task's port is `port_base` plus its index on its node.

  Tasks are numbered node by node, in the order of `SLURM_STEP_NODELIST`:
  a task's index is the number of tasks on the nodes listed before its own,
  plus its `SLURM_LOCALID` (`SLURM_PROCID` in block steps). So in any layout
  (cyclic, plane, arbitrary, topology order) every task finds itself at its
  own node's address; the chief is the first node's first task.

  GPUs are dealt by id among a node's tasks; GPUs Slurm bound to a task
  (`--gpus-per-task`, `--gpu-bind`) stay with it, and so does a
  `CUDA_VISIBLE_DEVICES` narrowed below what Slurm gave the node.
  """

  def __init__(self,
               jobs=None,
               port_base=8888,
               gpus_per_node=None,
               gpus_per_task=None,
               tasks_per_node=None,
               auto_set_gpu=True,
               rpc_layer='grpc'):
    """Creates a new SlurmClusterResolver object.

    It reads the step through `_resolve_own_rank`, `_resolve_num_tasks`,
    `_resolve_hostlist` and `_resolve_task_configuration`, which a subclass
    may override, and sets `CUDA_VISIBLE_DEVICES` (if `auto_set_gpu`) only
    after every check passed.

    Args:
      jobs: Dictionary with job names as key and number of tasks in the job as
        value. Defaults to as many 'worker's as there are (Slurm) tasks. A job
        of 0 tasks is left out of the cluster.
      port_base: The first port number to start with for processes on a node.
      gpus_per_node: Number of GPUs available on each node. Defaults to the
        GPUs Slurm gave the task (`CUDA_VISIBLE_DEVICES`), else to the number
        nvidia-smi reports (0 without it).
      gpus_per_task: Number of GPUs to be used for each task. Defaults to
        `gpus_per_node` divided by the number of tasks on the busiest node,
        or to the GPUs Slurm bound to the task.
      tasks_per_node: Number of tasks running on each node: an integer, or a
        dictionary mapping host names, in the step's node order, to numbers
        of tasks. Overrides what Slurm says.
      auto_set_gpu: Set `CUDA_VISIBLE_DEVICES` to this task's GPUs.
      rpc_layer: The protocol TensorFlow used to communicate between nodes.

    Raises:
      RuntimeError: If more GPUs per node or more or fewer tasks are requested
        than Slurm assigned, or the Slurm environment is missing or
        inconsistent.
      ValueError: If an argument or a Slurm variable is malformed.
    """
    self._rank = self._resolve_own_rank()
    if jobs is None:
      jobs = {'worker': self._resolve_num_tasks()}
    _check_jobs(jobs)
    self._jobs = jobs
    self._port_base = port_base
    if tasks_per_node is None:
      self._task_configuration = self._resolve_task_configuration()
    elif isinstance(tasks_per_node, dict):
      self._task_configuration = tasks_per_node
    else:
      self._task_configuration = {
          host: int(tasks_per_node) for host in self._resolve_hostlist()
      }
    self._auto_set_gpu = auto_set_gpu
    self.rpc_layer = rpc_layer
    self.task_type = None
    self.task_id = None
    places = [(host, local)
              for host, count in self._task_configuration.items()
              for local in range(count)]
    if sum(jobs.values()) != len(places):
      raise RuntimeError('Requested %d tasks (jobs=%r) but the step has %d' %
                         (sum(jobs.values()), jobs, len(places)))
    if not 0 <= self._rank < len(places):
      raise RuntimeError('This task is number %d of a step of %d tasks' %
                         (self._rank, len(places)))
    busiest = max(self._task_configuration.values())
    if port_base < 1 or port_base + busiest - 1 > _MAX_PORT:
      raise ValueError('port_base=%d: the busiest node\'s %d tasks need ports '
                       'up to %d' % (port_base, busiest,
                                     port_base + busiest - 1))
    self._gpus_per_task, gpus = _task_gpus(gpus_per_node, gpus_per_task,
                                           busiest, places[self._rank][1])
    self._cluster_spec = self._resolve_cluster(places)
    logging.vlog(1, 'SlurmClusterResolver: %s:%d, GPUs %s', self.task_type,
                 self.task_id, gpus)
    if auto_set_gpu and gpus is not None:
      os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(gpus)

  def _resolve_cluster(self, places):
    """Hands the tasks at `places` to the jobs; finds this task's job."""
    cluster = {}
    start = 0
    for task_type, num_tasks in sorted(self._jobs.items()):
      if not num_tasks:
        continue
      cluster[task_type] = [
          self._task_address(host, local)
          for host, local in places[start:start + num_tasks]
      ]
      if start <= self._rank < start + num_tasks:
        self.task_type = task_type
        self.task_id = self._rank - start
      start += num_tasks
    return ClusterSpec(cluster)

  def _task_address(self, host, local_index):
    """Returns the `host:port` of the task of `local_index` on `host`."""
    return '%s:%d' % (host, self._port_base + local_index)

  def _resolve_own_rank(self):
    """Returns the rank of the current task in range [0, num_tasks)."""
    return slurm_step.read_rank(os.environ)

  def _resolve_num_tasks(self):
    """Returns the number of tasks for the current job step."""
    return slurm_step.read_num_tasks(os.environ)

  def _resolve_hostlist(self):
    """Returns a list of hostnames for nodes running the current job step."""
    return slurm_step.read_nodes(os.environ)

  def _resolve_task_configuration(self):
    """Creates a mapping of hostnames to the number of tasks allocated on it.

    Returns:
      A dict host name -> number of tasks, in the step's node order.
    """
    hostlist = self._resolve_hostlist()
    counts = slurm_step.read_tasks_per_node(os.environ, hostlist)
    return dict(zip(hostlist, counts))

  def cluster_spec(self):
    """Returns the ClusterSpec of the step, resolved at construction."""
    return self._cluster_spec

  def get_task_info(self):
    """Returns the job name and task index of this process."""
    return self.task_type, self.task_id

  def master(self, task_type=None, task_id=None, rpc_layer=None):
    """Returns the master string for connecting to a TensorFlow master.

    Args:
      task_type: (Optional) Overrides the default auto-selected task type.
      task_id: (Optional) Overrides the default auto-selected task index.
      rpc_layer: (Optional) Overrides the default RPC protocol TensorFlow uses
        to communicate across nodes.

    Returns:
      A connection string for connecting to a TensorFlow master.
    """
    task_type = task_type if task_type is not None else self.task_type
    task_id = task_id if task_id is not None else self.task_id
    if task_type is not None and task_id is not None:
      return format_master_url(
          self.cluster_spec().task_address(task_type, task_id),
          rpc_layer or self.rpc_layer)
    return ''

  def num_accelerators(self,
                       task_type=None,
                       task_id=None,
                       config_proto=None):
    """Returns the number of GPUs each task uses, e.g. {'GPU': 2}."""
    del task_type, task_id, config_proto  # Every task uses as many.
    return {'GPU': self._gpus_per_task}
