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
"""What Slurm tells a task of its step: nodes, tasks per node, rank, GPUs.

Tasks are numbered node by node: a task's index is the number of the step's
tasks on the nodes listed before its own in `SLURM_STEP_NODELIST`, plus its
`SLURM_LOCALID`. Every task computes it from facts all tasks share, so all
build the same cluster whatever order Slurm dealt the ranks in (block,
cyclic, plane, arbitrary, topology order, heterogeneous steps).
"""

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist

_NO_GPUS = ('', 'NoDevFiles')
# SLURMD_TRES_BIND GPU modes under which Slurm gives each task its own GPUs.
_PER_TASK_BINDINGS = ('per_task', 'single', 'map_gpu', 'mask_gpu', 'map',
                      'mask')


def get_variable(environ, name):
  """Returns `environ[name]`, or raises a RuntimeError that says what to do."""
  if name in environ:
    return environ[name]
  raise RuntimeError('%s is not set: not running inside a Slurm step? Start '
                     'every task with srun.' % name)


def read_int(environ, name, minimum=0):
  """Reads variable `name` as a decimal integer of at least `minimum`."""
  text = get_variable(environ, name).strip()
  if not (text.isascii() and text.isdigit() and len(text) <= 18 and
          int(text) >= minimum):
    raise ValueError('%s=%r: expected an integer of at least %d' %
                     (name, environ[name], minimum))
  return int(text)


def _parse(environ, name, parse):
  """Returns `parse` of variable `name`; a ValueError names the variable."""
  try:
    return parse(get_variable(environ, name))
  except ValueError as e:
    raise ValueError('%s: %s' % (name, e)) from None


def check_not_batch_script(environ):
  """Refuses a batch script (or salloc shell) whose job runs several tasks.

  There no `srun` started the tasks, and a cluster of one task would wait
  for the others until the job's time limit.
  """
  if 'SLURM_STEP_NODELIST' in environ or 'SLURM_JOB_ID' not in environ:
    return
  if 'SLURM_NTASKS' in environ:
    tasks = read_int(environ, 'SLURM_NTASKS', 1)
    source = 'SLURM_NTASKS=%d' % tasks
  else:
    text = environ.get('SLURM_TASKS_PER_NODE', '1')
    tasks = sum(slurm_hostlist.expand_tasks_per_node(text))
    source = 'SLURM_TASKS_PER_NODE=%r' % text
  if tasks > 1:
    raise RuntimeError(
        'This process runs in Slurm job %s outside an srun step (in its '
        'batch script or salloc shell: SLURM_STEP_NODELIST is not set), and '
        'the job has %d tasks (%s): start the program with srun (srun python '
        'train.py) so that every task runs it.' %
        (environ['SLURM_JOB_ID'], tasks, source))


def read_nodes(environ):
  """The step's node names, in `SLURM_STEP_NODELIST` order.

  A batch script of a one-task job is a step of one task on its own node.
  """
  check_not_batch_script(environ)
  if 'SLURM_STEP_NODELIST' not in environ and 'SLURMD_NODENAME' in environ:
    return [environ['SLURMD_NODENAME']]
  nodes = _parse(environ, 'SLURM_STEP_NODELIST',
                 slurm_hostlist.expand_hostlist)
  if len(set(nodes)) != len(nodes):
    raise ValueError('SLURM_STEP_NODELIST=%r names a node twice' %
                     environ['SLURM_STEP_NODELIST'])
  return nodes


def read_tasks_per_node(environ, nodes):
  """The step's number of tasks on each of `nodes`, in list order."""
  if 'SLURM_STEP_NODELIST' not in environ and 'SLURMD_NODENAME' in environ:
    return [1]
  counts = _parse(environ, 'SLURM_STEP_TASKS_PER_NODE',
                  slurm_hostlist.expand_tasks_per_node)
  text = environ['SLURM_STEP_TASKS_PER_NODE']
  if len(counts) != len(nodes):
    raise ValueError('SLURM_STEP_TASKS_PER_NODE=%r has %d entries but '
                     'SLURM_STEP_NODELIST names %d nodes' %
                     (text, len(counts), len(nodes)))
  if 'SLURM_STEP_NUM_TASKS' in environ:
    total = read_int(environ, 'SLURM_STEP_NUM_TASKS', 1)
    if sum(counts) != total:
      raise ValueError('SLURM_STEP_TASKS_PER_NODE=%r counts %d tasks but '
                       'SLURM_STEP_NUM_TASKS=%d' % (text, sum(counts), total))
  return counts


def read_num_tasks(environ):
  """The number of tasks of the step."""
  if 'SLURM_STEP_NODELIST' not in environ and 'SLURMD_NODENAME' in environ:
    check_not_batch_script(environ)
    return 1
  return read_int(environ, 'SLURM_STEP_NUM_TASKS', 1)


def _check_gtids(environ, count, local, procid):
  """Checks that `SLURM_GTIDS` (if set) lists `count` ranks, `procid` local."""
  if 'SLURM_GTIDS' not in environ:
    return
  gtids = environ['SLURM_GTIDS'].split(',')
  if len(gtids) != count or gtids[local].strip() != str(procid):
    raise RuntimeError(
        'SLURM_GTIDS=%r does not list %d tasks with SLURM_PROCID=%d as '
        'SLURM_LOCALID=%d: the Slurm variables of this task disagree' %
        (environ['SLURM_GTIDS'], count, procid, local))


def _check_not_mpi_rank(environ, procid):
  """Refuses a process that an MPI launcher, not srun, started.

  `mpirun` and `mpiexec` start their ranks from daemons of a step of their
  own, whose Slurm variables the ranks inherit: where a rank's MPI rank or
  size disagrees with the step's, those variables describe the daemons.
  """
  for rank_name, size_name in (('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE'),
                               ('PMI_RANK', 'PMI_SIZE'), ('PMIX_RANK', None)):
    if rank_name not in environ:
      continue
    size = environ.get(size_name, '')
    facts = [(rank_name, environ[rank_name], 'SLURM_PROCID', str(procid))]
    if size_name in environ:
      facts.append((size_name, size, 'SLURM_STEP_NUM_TASKS',
                    environ.get('SLURM_STEP_NUM_TASKS')))
    wrong = ['%s=%s but %s=%s' % fact for fact in facts
             if fact[1].strip() != fact[3]]
    if wrong:
      raise RuntimeError(
          '%s: an MPI launcher (mpirun, mpiexec), not srun, started this '
          'process, and its Slurm variables are those of the launcher\'s '
          'daemons. Start the program with srun%s.' %
          ('; '.join(wrong), ' -n %s' % size.strip() if size else ''))


def check_place_known(environ):
  """Refuses a task that has one of SLURMD_NODENAME and SLURM_LOCALID only."""
  for missing, given in (('SLURMD_NODENAME', 'SLURM_LOCALID'),
                        ('SLURM_LOCALID', 'SLURMD_NODENAME')):
    if missing not in environ and given in environ:
      raise RuntimeError('%s is not set, but %s is: this task cannot tell '
                         'its place in the step' % (missing, given))


def read_rank(environ):
  """This task's index in the step, node by node (see the module docstring).

  Without `SLURMD_NODENAME` or `SLURM_LOCALID` it is `SLURM_PROCID`, which
  is the same in block steps in list order.
  """
  check_not_batch_script(environ)
  procid = read_int(environ, 'SLURM_PROCID')
  _check_not_mpi_rank(environ, procid)
  check_place_known(environ)
  if 'SLURM_STEP_NODELIST' not in environ or not {
      'SLURMD_NODENAME', 'SLURM_LOCALID', 'SLURM_STEP_TASKS_PER_NODE'
  } <= set(environ):
    return procid
  nodes = read_nodes(environ)
  counts = read_tasks_per_node(environ, nodes)
  node_name = environ['SLURMD_NODENAME']
  if node_name not in nodes:
    raise RuntimeError('SLURMD_NODENAME=%r is not in SLURM_STEP_NODELIST=%r' %
                       (node_name, environ['SLURM_STEP_NODELIST']))
  node = nodes.index(node_name)
  local = read_int(environ, 'SLURM_LOCALID')
  if local >= counts[node]:
    raise RuntimeError('SLURM_LOCALID=%d but SLURM_STEP_TASKS_PER_NODE gives '
                       'node %s only %d tasks' % (local, node_name,
                                                  counts[node]))
  _check_gtids(environ, counts[node], local, procid)
  return sum(counts[:node]) + local


def _gpu_ids(environ, name):
  """The GPU ids variable `name` lists (`''`, `NoDevFiles`: none), or None."""
  if name not in environ:
    return None
  text = environ[name].strip()
  ids = [] if text in _NO_GPUS else [gpu.strip() for gpu in text.split(',')]
  if not all(ids) or len(set(ids)) != len(ids):
    raise ValueError('%s=%r: expected distinct comma-separated GPU ids' %
                     (name, environ[name]))
  return ids


def _gpu_binding(environ):
  """The GPU mode of `SLURMD_TRES_BIND`, in lower case (e.g. 'single')."""
  for binding in environ.get('SLURMD_TRES_BIND', '').replace('+', ';').split(
      ';'):
    kind, _, options = binding.lower().partition(':')
    if kind in ('gpu', 'gres/gpu'):
      options = options[len('verbose,'):] if options.startswith(
          'verbose,') else options
      return options.split(':')[0].strip()
  return ''


def read_gpus(environ):
  """Returns (GPU ids this task may use or None if unknown, whether bound).

  `CUDA_VISIBLE_DEVICES` is what the task may use; the GPUs are its own
  (bound: they are not dealt among the node's tasks) when Slurm bound them
  to the task (`SLURMD_TRES_BIND`), or when it lists fewer GPUs than Slurm
  gave the node (`SLURM_GPUS_ON_NODE`, `SLURM_STEP_GPUS`): Slurm, a wrapper,
  the user or an earlier resolver narrowed them. In an srun step,
  `SLURM_JOB_GPUS` alone names the job's GPUs, of which this step has none;
  under `--gpu-bind=none` Slurm gives the step the node's first
  `SLURM_GPUS_ON_NODE` GPUs without naming them.
  """
  on_node = read_int(environ, 'SLURM_GPUS_ON_NODE') if (
      'SLURM_GPUS_ON_NODE' in environ) else None
  visible = _gpu_ids(environ, 'CUDA_VISIBLE_DEVICES')
  step_gpus = _gpu_ids(environ, 'SLURM_STEP_GPUS')
  binding = _gpu_binding(environ)
  if visible is None and step_gpus is None:
    if binding == 'none' and on_node:
      return [str(gpu) for gpu in range(on_node)], False
    job_gpus = _gpu_ids(environ, 'SLURM_JOB_GPUS')
    if job_gpus is not None and 'SLURM_STEP_NODELIST' in environ:
      return [], True
    return job_gpus, False
  if visible is None:
    visible = step_gpus
  slurm_count = on_node if on_node is not None else len(step_gpus or ())
  return visible, binding in _PER_TASK_BINDINGS or len(visible) < slurm_count
