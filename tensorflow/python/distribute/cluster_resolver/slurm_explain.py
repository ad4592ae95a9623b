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
"""Shows what SlurmClusterResolver reads and decides for this Slurm task.

Run it in the tasks of a step, e.g.

  srun -N2 -n4 python -m \
      tensorflow.python.distribute.cluster_resolver.slurm_explain --all

It prints the variables the resolver reads, the step's nodes, and every
rank's node, TensorFlow task, address and GPUs (`--all`), or only this task's
`TF_CONFIG` (`--tf-config`). It starts no TensorFlow server and touches no
GPU; whenever it cannot answer it prints the error on stderr and exits with
status 1.
"""

import argparse
import json
import os
import re
import sys

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_step

def _parse_jobs(text):
  jobs = {}
  for item in text.split(','):
    name, _, count = item.partition('=')
    if not re.fullmatch('[0-9]{1,9}', count):
      raise argparse.ArgumentTypeError(
          '%r: expected NAME=COUNT[,NAME=COUNT...]' % text)
    jobs[name] = int(count)
  return jobs


def _parse_port_base(text):
  if text in ('reserved', 'derived'):
    return text
  if not re.fullmatch('[0-9]{1,9}', text):
    raise argparse.ArgumentTypeError(
        "%r: expected a port number, 'reserved' or 'derived'" % text)
  return int(text)


def _explain_parser():
  """The command's arguments: the resolver's, and what to show."""
  parser = argparse.ArgumentParser(
      prog='python -m %s' % __spec__.name if __spec__ else None,
      description='Shows what SlurmClusterResolver reads and decides for this '
      'Slurm task (run it inside srun or a batch script). Starts no '
      'TensorFlow server and touches no GPU.')
  parser.add_argument('--all', action='store_true',
                      help='show every task of the step')
  parser.add_argument('--tf-config', action='store_true',
                      help='print only the TF_CONFIG JSON of this task')
  parser.add_argument('--jobs', type=_parse_jobs,
                      help='e.g. chief=1,ps=2,worker=4 (default: all workers)')
  parser.add_argument(
      '--het-jobs',
      type=lambda text: text.split(','),
      help='job of each heterogeneous component, e.g. ps,worker')
  parser.add_argument('--port-base', type=_parse_port_base, default=8888,
                      help="an int, 'reserved' or 'derived' (default 8888)")
  parser.add_argument('--gpus-per-node', type=int,
                      help='GPUs of each node (default: what Slurm gave)')
  parser.add_argument('--gpus-per-task', type=int,
                      help='GPUs of each task (default: what Slurm bound, '
                      "else the busiest node's even share)")
  parser.add_argument('--tasks-per-node', type=int,
                      help='tasks of each node; must agree with Slurm')
  parser.add_argument('--rpc-layer', default='grpc',
                      help="the rpc_layer of --tf-config (default 'grpc')")
  parser.add_argument('--hostlist-expansion', default='builtin',
                      choices=('builtin', 'scontrol', 'check'),
                      help="expand node lists in Python ('builtin', the "
                      "default), with 'scontrol', or 'check' both")
  return parser


def _task_gpus(step, resolution, task):
  """GPUs of a task of the step, as far as this task can tell, or None.

  Besides its own, a task knows the GPUs of the tasks on its node when Slurm
  gave the node GPUs to deal among them.

  Args:
    step: The `slurm_step.SlurmStep`.
    resolution: The resolver's `Resolution`.
    task: The rank of the task.
  """
  if task == step.task_index:
    return resolution.gpus.task_gpus
  node, local = step.places[task]
  if node != step.place[0]:
    return None
  return resolution.gpus.of_local_task(local)


def _format_gpus(gpus):
  return '-' if gpus is None else ','.join(gpus) or 'none'


def _explain(environ, args, out):
  """Writes what the resolver reads and decides for this task to `out`."""
  expand = slurm_hostlist.get_expander(args.hostlist_expansion)
  step = slurm_step.read_step(environ, args.tasks_per_node, expand)
  resolution = slurm_cluster_resolver.resolve(
      step, args.jobs, args.port_base, args.gpus_per_node, args.gpus_per_task,
      lambda: 0, args.het_jobs)
  cluster = {name: list(addresses) for name, addresses in resolution.cluster}
  if args.tf_config:
    out.write(json.dumps({
        'cluster': cluster,
        'task': {'type': resolution.task_type, 'index': resolution.task_id},
        'rpc_layer': args.rpc_layer,
    }) + '\n')
    return
  task_jobs = []
  for name, addresses in resolution.cluster:
    task_jobs.extend((name, i, address) for i, address in enumerate(addresses))
  by_address = {address: (name, i) for name, i, address in task_jobs}
  addresses = resolution.addresses
  out.write('Variables read:\n')
  for name in sorted(n for n in environ if slurm_step.is_read(n)):
    out.write('  %s=%s\n' % (name, environ[name]))
  out.write('Nodes, as Slurm numbers them: %s\n' % ' '.join(step.nodes))
  out.write('Tasks per node: %s (%s)\n' % (
      ','.join(map(str, step.tasks_per_node)), step.counts_source))
  out.write('Jobs: %s\n' % ', '.join(
      '%s=%d' % (name, len(a)) for name, a in resolution.cluster))
  if step.gpus.visible is None:
    gpus_note = ('no CUDA_VISIBLE_DEVICES: the resolver counts GPUs with '
                 'nvidia-smi (not run here)')
  else:
    gpus_note = '%s=%s, %s' % (
        step.gpus.source, _format_gpus(step.gpus.visible),
        'bound to this task by Slurm' if step.gpus.bound_per_task else
        "the node's, split among its tasks")
  out.write('GPUs: %s; %d per task\n' % (gpus_note,
                                          resolution.gpus.per_task))
  tasks = range(step.num_tasks) if args.all else [step.task_index]
  out.write('%-6s %-14s %-6s %-14s %-22s %s\n' %
            ('rank', 'node', 'local', 'task', 'address', 'GPUs'))
  for task in tasks:
    name, index = by_address[addresses[task]]
    node, local = step.places[task]
    out.write('%-6d %-14s %-6d %-14s %-22s %s%s\n' % (
        task, step.nodes[node], local, '%s:%d' % (name, index),
        addresses[task],
        _format_gpus(_task_gpus(step, resolution, task)),
        '   <- this task' if task == step.task_index and args.all else ''))


def main(argv=None, environ=None, out=None):
  """Runs the explain command; returns the exit status."""
  args = _explain_parser().parse_args(argv)
  try:
    _explain(os.environ if environ is None else environ, args,
             sys.stdout if out is None else out)
  except (RuntimeError, TypeError, ValueError) as e:
    sys.stderr.write('error: %s\n' % e)
    return 1
  return 0


if __name__ == '__main__':
  sys.exit(main())
