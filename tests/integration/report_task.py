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
"""One task of a real Slurm step: resolves with default arguments, reports.

Run by the integration tests as a task of an `srun` step (or as a batch
script's command), with the repository root on PYTHONPATH:

  srun ... python report_task.py --out DIR [--connect SECONDS]

It creates `SlurmClusterResolver()` with default arguments, as
`srun python train.py` would (the pip package's, the companion's; and the
core's, which sets no GPUs, to compare), and writes what it resolved, next to what Slurm
and the node say, as one JSON object to DIR/<SLURM_PROCID>.json (one file per
task, so that srun's output handling cannot mix tasks' lines) and as one line
`REPORT {...}` on stdout.

With --connect, every task then proves its address is real: it binds a TCP
socket at its own resolved `host:port` (the host name as the lab's /etc/hosts
resolves it on this node), connects to the resolved address of every other
task of the step and exchanges identities with it, all within SECONDS. The
outcome is in the report under "net"; the exit status is 1 if anything failed.

With --then CMD..., CMD (e.g. `srun ...`) runs afterwards in the environment
the resolver left behind (its CUDA_VISIBLE_DEVICES), as when a batch script's
Python resolves and then starts a step.

Only the standard library and the resolver module are imported (the module
still loads TensorFlow: about 2.5 s of CPU per task).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback

MARK = 'REPORT '
_SLURM_VARS = (
    'SLURM_STEP_NODELIST', 'SLURM_STEP_TASKS_PER_NODE', 'SLURM_STEP_NUM_TASKS',
    'SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE', 'SLURM_NTASKS',
    'SLURM_DISTRIBUTION', 'SLURM_DIST_PLANESIZE', 'SLURM_HOSTFILE',
    'SLURM_HET_SIZE', 'SLURM_NODEID', 'SLURM_GTIDS', 'SLURM_STEP_GPUS',
    'SLURM_JOB_GPUS', 'SLURM_GPUS_ON_NODE', 'SLURMD_TRES_BIND',
    'SLURM_STEP_ID', 'SLURM_JOB_ID', 'ENVIRONMENT')


def _flat_addresses(cluster):
  """Task addresses in TensorFlow task order (jobs in sorted name order)."""
  return [address for job in sorted(cluster) for address in cluster[job]]


def _recv_line(conn, deadline):
  data = b''
  while not data.endswith(b'\n'):
    conn.settimeout(max(0.1, deadline - time.monotonic()))
    chunk = conn.recv(4096)
    if not chunk:
      break
    data += chunk
    if len(data) > 65536:
      raise OSError('line too long')
  return data.decode('utf-8', 'replace').strip()


def check_network(addresses, own_index, me, seconds):
  """Binds at our own resolved address, then talks to every other task.

  Args:
    addresses: Every task's resolved `host:port`, in task order.
    own_index: This task's index into `addresses`.
    me: What to tell peers about us (a dict, sent as JSON).
    seconds: Bound on the whole exchange.

  Returns:
    A dict: the bound IP, which peers answered (with what they said about
    themselves), which peers connected to us, and the errors.
  """
  deadline = time.monotonic() + seconds
  host, port = addresses[own_index].rsplit(':', 1)
  result = {'bind_ip': None, 'reached': {}, 'accepted': {}, 'errors': []}
  try:
    ip = socket.gethostbyname(host)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((ip, int(port)))  # Fails unless `host` is this node.
    server.listen(len(addresses))
    result['bind_ip'] = ip
  except OSError as e:
    result['errors'].append('bind %s: %s' % (addresses[own_index], e))
    return result
  hello = (json.dumps(me, sort_keys=True) + '\n').encode()
  peers = len(addresses) - 1

  def serve():
    while len(result['accepted']) < peers:
      remaining = deadline - time.monotonic()
      if remaining <= 0:
        result['errors'].append('accepted only %d of %d peers' %
                                (len(result['accepted']), peers))
        return
      server.settimeout(remaining)
      try:
        conn, peer = server.accept()
      except OSError as e:
        result['errors'].append('accept: %s' % e)
        return
      with conn:
        try:
          said = json.loads(_recv_line(conn, deadline))
          conn.sendall(hello)
          result['accepted'][str(said['index'])] = peer[0]
        except (OSError, ValueError, KeyError) as e:
          result['errors'].append('serving %s: %s' % (peer[0], e))

  thread = threading.Thread(target=serve, daemon=True)
  thread.start()
  for index, address in enumerate(addresses):
    if index == own_index:
      continue
    peer_host, peer_port = address.rsplit(':', 1)
    while True:
      try:
        timeout = max(0.1, min(2.0, deadline - time.monotonic()))
        with socket.create_connection((peer_host, int(peer_port)),
                                      timeout=timeout) as conn:
          conn.sendall(hello)
          result['reached'][str(index)] = json.loads(
              _recv_line(conn, deadline))
        break
      except (OSError, ValueError) as e:
        if time.monotonic() >= deadline:
          result['errors'].append('connect %s (task %d): %s' %
                                  (address, index, e))
          break
        time.sleep(0.1)
  thread.join(max(0.0, deadline - time.monotonic()) + 1)
  server.close()
  return result


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True, help='folder for <rank>.json')
  parser.add_argument('--connect', type=float, default=0,
                      help='seconds for the TCP check (0: no check)')
  parser.add_argument('--then', nargs=argparse.REMAINDER, default=[],
                      help='a command to run afterwards in the environment '
                      'the resolver left (e.g. srun ...); its status is ours')
  parser.add_argument('--then-timeout', type=float, default=120)
  args = parser.parse_args(argv[1:])
  env = os.environ
  report = {
      'procid': env.get('SLURM_PROCID'),
      'nodename': env.get('SLURMD_NODENAME'),
      'localid': env.get('SLURM_LOCALID'),
      'hostname': socket.gethostname(),
      'cvd_before': env.get('CUDA_VISIBLE_DEVICES'),
      'allow_growth_before': env.get('TF_FORCE_GPU_ALLOW_GROWTH'),
      'slurm': {name: env[name] for name in _SLURM_VARS if name in env},
      # What an earlier resolver of this task or of a parent process noted.
      'tf_slurm': {k: v for k, v in env.items() if k.startswith('TF_SLURM_')},
  }
  status = 0
  try:
    # pylint: disable=g-import-not-at-top
    from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
    from tf_slurm import resolver as companion
    report['module_file'] = slurm_cluster_resolver.__file__
    # The core's resolution (the patch to TensorFlow), beside the pip
    # package's (the companion's), which also sets the GPUs.
    core = slurm_cluster_resolver.SlurmClusterResolver(auto_set_gpu=False)
    report['core'] = {'cluster': core.cluster_spec().as_dict(),
                      'task': [core.task_type, core.task_id]}
    resolver = companion.SlurmClusterResolver()
    report.update(
        task_type=resolver.task_type,
        task_id=resolver.task_id,
        cluster=resolver.cluster_spec().as_dict(),
        master=resolver.master(),
        num_accelerators=resolver.num_accelerators(),
        cvd_after=env.get('CUDA_VISIBLE_DEVICES'),
        allow_growth_after=env.get('TF_FORCE_GPU_ALLOW_GROWTH'))
    # The same step with the node lists expanded by Slurm's own scontrol
    # (the companion's hostlist_expansion).
    report['cluster_scontrol'] = companion.SlurmClusterResolver(
        auto_set_gpu=False,
        hostlist_expansion='scontrol').cluster_spec().as_dict()
  except Exception:  # pylint: disable=broad-except
    report['error'] = traceback.format_exc()
    status = 1
  if status == 0 and args.connect > 0:
    addresses = _flat_addresses(report['cluster'])
    jobs = sorted(report['cluster'])
    own_index = sum(len(report['cluster'][job])
                    for job in jobs[:jobs.index(report['task_type'])])
    own_index += report['task_id']
    me = {'index': own_index, 'procid': report['procid'],
          'hostname': report['hostname'],
          'address': addresses[own_index]}
    report['net'] = check_network(addresses, own_index, me, args.connect)
    if report['net']['errors']:
      status = 1
  text = json.dumps(report, sort_keys=True)
  os.makedirs(args.out, exist_ok=True)
  name = os.path.join(args.out, '%s.json' % report['procid'])
  with open(name + '.tmp', 'w') as f:
    f.write(text + '\n')
  os.replace(name + '.tmp', name)
  print(MARK + text, flush=True)
  if status == 0 and args.then:
    try:
      status = subprocess.run(args.then, timeout=args.then_timeout,
                              check=False).returncode
    except subprocess.TimeoutExpired:
      print('%s did not finish within %s s' % (args.then, args.then_timeout),
            file=sys.stderr, flush=True)
      status = 1
  return status


if __name__ == '__main__':
  sys.exit(main(sys.argv))
