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
"""One MultiWorkerMirroredStrategy worker of several concurrent steps.

  srun ... python ports_task.py --out DIR --port-base reserved|derived|INT \
      [--rendezvous RDIR --peers N] [--steps S]

Every task resolves with `SlurmClusterResolver(port_base=...)` and builds a
MultiWorkerMirroredStrategy on it, which starts this task's TensorFlow server
on its resolved port. With --rendezvous, the task then announces itself in
RDIR and waits (bounded) until N tasks did, so that the servers of all
concurrent steps given the same RDIR and N are up at the same time on the
same nodes before any of them trains. Then it trains a linear model for a
few synchronous steps (each worker on its own data; mirrored variables with
MEAN aggregation keep the weights identical) and writes DIR/<SLURM_PROCID>.json:
its role, address, the ports Slurm reserved for the step, the losses and the
final weights. On any error the report holds it and the exit status is 1.
"""

import argparse
import glob
import json
import os
import socket
import sys
import time
import traceback


def _port_base(text):
  return text if text in ('reserved', 'derived') else int(text)


def _write(out, report):
  os.makedirs(out, exist_ok=True)
  path = os.path.join(out, '%s.json' % report['procid'])
  with open(path + '.tmp', 'w') as f:
    f.write(json.dumps(report, sort_keys=True) + '\n')
  os.replace(path + '.tmp', path)


def _rendezvous(folder, name, peers, seconds):
  """Announces this task in `folder`; waits until `peers` tasks did."""
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, name + '.ready'), 'w') as f:
    f.write('%f\n' % time.time())
  deadline = time.monotonic() + seconds
  while True:
    ready = len(glob.glob(os.path.join(folder, '*.ready')))
    if ready >= peers:
      return ready
    if time.monotonic() > deadline:
      raise RuntimeError('rendezvous: only %d of %d tasks ready after %s s' %
                         (ready, peers, seconds))
    time.sleep(0.05)


def _train(tf, strategy, task_id, steps):
  with strategy.scope():
    weights = tf.Variable(tf.zeros([4, 1]),
                          aggregation=tf.VariableAggregation.MEAN)
    bias = tf.Variable(tf.zeros([1]), aggregation=tf.VariableAggregation.MEAN)
  # Each worker its own data of the same model.
  x = tf.random.stateless_normal([64, 4], seed=[task_id, 7])
  y = tf.matmul(x, tf.constant([[1.0], [-2.0], [3.0], [0.5]])) + 0.25

  @tf.function
  def train_step():

    def step_fn():
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y))
      grad_w, grad_b = tape.gradient(loss, [weights, bias])
      # MEAN aggregation: the update is averaged over all workers.
      weights.assign_sub(0.1 * grad_w)
      bias.assign_sub(0.1 * grad_b)
      return loss

    losses = strategy.run(step_fn)
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)

  losses = [float(train_step()) for _ in range(steps)]
  return losses, [float(v) for v in weights.numpy().ravel()] + [
      float(bias.numpy()[0])]


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  parser.add_argument('--port-base', type=_port_base, default=8888)
  parser.add_argument('--rendezvous', default=None)
  parser.add_argument('--peers', type=int, default=0)
  parser.add_argument('--rendezvous-seconds', type=float, default=90)
  parser.add_argument('--steps', type=int, default=8)
  args = parser.parse_args(argv[1:])
  env = os.environ
  report = {
      'procid': env.get('SLURM_PROCID'),
      'nodename': env.get('SLURMD_NODENAME'),
      'hostname': socket.gethostname(),
      'job_id': env.get('SLURM_JOB_ID'),
      'step_id': env.get('SLURM_STEP_ID'),
      'resv_ports': env.get('SLURM_STEP_RESV_PORTS'),
      'port_base': args.port_base,
  }
  status = 0
  try:
    # pylint: disable=g-import-not-at-top
    import tensorflow as tf
    resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(
        port_base=args.port_base)
    address = resolver.cluster_spec().task_address(resolver.task_type,
                                                   resolver.task_id)
    report.update(task_type=resolver.task_type, task_id=resolver.task_id,
                  cluster=resolver.cluster_spec().as_dict(), address=address)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=resolver)
    report['server_up'] = time.time()
    report['workers'] = strategy.extended._num_workers  # pylint: disable=protected-access
    if args.rendezvous:
      name = '%s.%s-%s' % (report['job_id'], report['step_id'],
                           report['procid'])
      report['ready_seen'] = _rendezvous(args.rendezvous, name, args.peers,
                                         args.rendezvous_seconds)
    report['train_start'] = time.time()
    report['losses'], report['weights'] = _train(tf, strategy,
                                                 resolver.task_id, args.steps)
    report['done'] = time.time()
  except Exception:  # pylint: disable=broad-except
    report['error'] = traceback.format_exc()
    print(report['error'], file=sys.stderr, flush=True)
    status = 1
  _write(args.out, report)
  return status


if __name__ == '__main__':
  sys.exit(main(sys.argv))
