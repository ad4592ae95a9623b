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

  srun -N2 -n4 python -m tf_slurm.explain --all

It prints the variables the resolver reads, the step's nodes, and every
rank's node, TensorFlow task, address and GPUs (`--all`), or only this task's
`TF_CONFIG` (`--tf-config`). It starts no TensorFlow server and touches no
GPU; whenever it cannot answer it prints the error on stderr and exits with
status 1.
"""

import argparse
import functools
import json
import os
import queue
import re
import socket
import sys
import threading
import time

from tf_slurm import launchers
from tf_slurm import resolution as resolution_lib
from tf_slurm import scontrol
from tf_slurm import slurm_launcher
from tf_slurm import slurm_step
from tf_slurm import util

# --check-hosts: at most this long for all lookups, in this many threads.
_LOOKUP_SECONDS = 10
_LOOKUP_THREADS = 8
# Read only for the ranks of mpirun or mpiexec.hydra: the core names the
# job's node count in its refusal, the companion places ranks by slots.
_MPI_ONLY = ('SLURM_JOB_NUM_NODES',) + launchers.VARIABLES
# The variables the core reads (`<n>`: a heterogeneous component's number).
_READ_RE = re.compile('|'.join(
    re.escape(name).replace('<n>', '[0-9]+')
    for name in slurm_step.VARIABLES))


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
  parser.add_argument('--node-host',
                      help="the resolver's node_host: a format of {node}, "
                      "e.g. '{node}-ib' (default: the node names)")
  parser.add_argument('--check-hosts', action='store_true',
                      help='look up every host of the cluster on this node '
                      '(name lookups only, at most %d s); exit status 1 if '
                      'one does not resolve' % _LOOKUP_SECONDS)
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
  node, local = step.place_of(task)
  gpus = resolution.gpus
  if node != step.place[0] or gpus.node_gpus is None:
    return None
  return slurm_step.deal_gpus(gpus.node_gpus, gpus.per_task, local)


def _format_gpus(gpus):
  return '-' if gpus is None else ','.join(gpus) or 'none'


def _write_summary(environ, step, resolution, out):
  """Writes the variables read, the nodes, the jobs and the GPUs."""
  out.write('Variables read:\n')
  mpi = step.launcher in slurm_launcher.MPI_LAUNCHERS
  for name in sorted(environ):
    read = _READ_RE.fullmatch(name) or name in launchers.VARIABLES
    if read and (mpi or name not in _MPI_ONLY):
      out.write('  %s=%s\n' % (name, environ[name]))
  out.write('Launcher: %s\n' % (step.launcher or 'srun'))
  out.write('Nodes, as Slurm numbers them: %s\n' % ' '.join(step.nodes))
  out.write('Tasks per node: %s (%s)\n' % (
      ','.join(map(str, step.tasks_per_node)), step.counts_source))
  out.write('Jobs: %s\n' % ', '.join(
      '%s=%d' % (name, len(a)) for name, a in resolution.cluster))
  gpus = resolution.gpus.slurm_gpus
  if gpus.withheld:
    gpus_note = ('%s: Slurm manages the GPUs and gave this step none on '
                 'this node' % gpus.source)
  elif gpus.visible is None:
    gpus_note = 'none named or counted on this node'
  else:
    gpus_note = '%s=%s, %s' % (
        gpus.source, _format_gpus(gpus.visible),
        'bound to this task by Slurm' if gpus.bound_per_task else
        "the node's, split among its tasks")
  out.write('GPUs: %s; %d per task\n' % (gpus_note,
                                          resolution.gpus.per_task))


def _write_table(step, resolution, tasks, out):
  """Writes a row for each of `tasks`: node, TF task, address, GPUs.

  `tasks` are task indices (`slurm_step.SlurmStep.task_index`), shown as
  'rank': Slurm's ranks, except in block and heterogeneous steps, whose
  tasks are numbered node by node.
  """
  tf_tasks = {}
  for name, addresses in resolution.cluster:
    for index, address in enumerate(addresses):
      tf_tasks[address] = '%s:%d' % (name, index)
  out.write('%-6s %-14s %-6s %-14s %-22s %s\n' %
            ('rank', 'node', 'local', 'task', 'address', 'GPUs'))
  for task in tasks:
    node, local = step.place_of(task)
    address = resolution.addresses[task]
    out.write('%-6d %-14s %-6d %-14s %-22s %s%s\n' % (
        task, step.nodes[node], local, tf_tasks[address], address,
        _format_gpus(_task_gpus(step, resolution, task)),
        '   <- this task' if task == step.task_index and len(tasks) > 1
        else ''))


def _look_up(hosts, seconds):
  """Looks the hosts up (name lookups only), within `seconds` in all.

  Returns:
    (host -> error for those that do not resolve, hosts not answered in
    time).
  """
  pending = queue.Queue()
  for host in hosts:
    pending.put(host)
  results = {}

  def look_up_pending():
    while True:
      try:
        host = pending.get_nowait()
      except queue.Empty:
        return
      try:
        socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        results[host] = None
      except OSError as e:
        results[host] = e.strerror or str(e)

  threads = [threading.Thread(target=look_up_pending, daemon=True)
             for _ in range(min(_LOOKUP_THREADS, len(hosts)))]
  for thread in threads:
    thread.start()
  deadline = time.monotonic() + seconds
  for thread in threads:
    thread.join(max(0.0, deadline - time.monotonic()))
  results = dict(results)
  failed = {host: error for host, error in results.items() if error}
  return failed, [host for host in hosts if host not in results]


def _check_hosts(resolution, out):
  """Writes whether every host of the cluster resolves here; the status."""
  hosts = sorted({address.rsplit(':', 1)[0]
                  for address in resolution.addresses})
  failed, unanswered = _look_up(hosts, _LOOKUP_SECONDS)
  out.write('Host lookup: %d of %d hosts resolve on this node\n' %
            (len(hosts) - len(failed) - len(unanswered), len(hosts)))
  for host in sorted(failed):
    out.write('  %s: %s\n' % (host, failed[host]))
  if unanswered:
    out.write('  not answered within %d s: %s\n' %
              (_LOOKUP_SECONDS, util.abbreviate(unanswered)))
  return 1 if failed or unanswered else 0


def _explain(environ, args, out):
  """Writes what the resolver reads and decides for this task to `out`.

  Returns:
    The exit status: 0, or 1 if --check-hosts found hosts that do not
    resolve.
  """
  expand = scontrol.get_expander(args.hostlist_expansion)
  step = launchers.read_step(environ, args.tasks_per_node, expand)
  # The GPUs of the given environment's node (its SLURM_CONF).
  unnamed_gpus = functools.partial(
      resolution_lib.unnamed_gpus, environ)
  resolution = resolution_lib.resolve(
      step, args.jobs, args.port_base, args.gpus_per_node, args.gpus_per_task,
      unnamed_gpus, args.het_jobs, args.node_host)
  if args.tf_config:
    out.write(json.dumps({
        'cluster': {name: list(addresses)
                    for name, addresses in resolution.cluster},
        'task': {'type': resolution.task_type, 'index': resolution.task_id},
        'rpc_layer': args.rpc_layer,
    }) + '\n')
    return 0
  _write_summary(environ, step, resolution, out)
  _write_table(step, resolution,
               range(step.num_tasks) if args.all else [step.task_index], out)
  return _check_hosts(resolution, out) if args.check_hosts else 0


def _discard_stdout():
  """Sends what is left in sys.stdout's buffer, at exit too, to /dev/null."""
  try:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
  except (AttributeError, OSError, ValueError):  # No stdout to redirect.
    pass


def main(argv=None, environ=None, out=None):
  """Runs the explain command; returns the exit status.

  An output that cannot be written (standard output closed, a pipe whose
  reader stopped as `| head -1` does, a full disk) ends it with status 1,
  without a traceback; with one line on stderr unless the reader stopped.
  """
  args = _explain_parser().parse_args(argv)
  to_stdout = out is None
  out = sys.stdout if to_stdout else out
  try:
    if out is None:
      raise OSError('standard output is closed')
    status = _explain(os.environ if environ is None else environ, args, out)
    out.flush()
    return status
  except (RuntimeError, TypeError, ValueError) as e:
    sys.stderr.write('error: %s\n' % e)
    return 1
  except OSError as e:
    if to_stdout:
      _discard_stdout()
    if not isinstance(e, BrokenPipeError):
      sys.stderr.write('error: cannot write the output: %s\n' %
                       (e.strerror or e))
    return 1


if __name__ == '__main__':
  sys.exit(main())
