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
"""One task of a ParameterServerStrategy cluster started by one `srun` step.

  srun -n<2+W> --kill-on-bad-exit=1 --wait=S python ps_task.py \
      --out DIR --workers W [--steps N] [--max-seconds T]

Every task creates `SlurmClusterResolver(jobs={'chief': 1, 'ps': 2,
'worker': W})`. Rank 0 is the chief: it builds a ParameterServerStrategy and
a ClusterCoordinator, schedules N training steps of a linear model on the
workers (variables on the two ps tasks), waits for them and exits. The ps and
worker tasks run `tf.distribute.Server(...)` at their resolved address and
serve until Slurm ends them: `srun --wait=S` terminates the rest of the step S
seconds after the chief exits (`--kill-on-bad-exit=1`: at once if a task
fails), or `scancel --signal=TERM` ends them (exit status 0) once the chief is
done. A server still running after --max-seconds exits with status 3.

Each task writes DIR/<SLURM_PROCID>.json when it is ready (servers) or done
(chief); a server also writes DIR/<SLURM_PROCID>.term when Slurm's SIGTERM
ends it.
"""

import argparse
import json
import os
import signal
import socket
import sys
import time
import traceback

import task_common


def _write(out, name, report):
  os.makedirs(out, exist_ok=True)
  path = os.path.join(out, name)
  with open(path + '.tmp', 'w') as f:
    f.write(json.dumps(report, sort_keys=True) + '\n')
  os.replace(path + '.tmp', path)


def _serve(tf, resolver, args, report):
  """Runs this task's server until Slurm's SIGTERM or --max-seconds."""
  procid = report['procid']

  def on_term(signum, frame):
    del frame  # Unused.
    _write(args.out, '%s.term' % procid, {'signal': signum,
                                          'time': time.time()})
    os._exit(0)  # pylint: disable=protected-access

  signal.signal(signal.SIGTERM, on_term)
  server = tf.distribute.Server(
      resolver.cluster_spec(),
      job_name=resolver.task_type,
      task_index=resolver.task_id,
      protocol=resolver.rpc_layer,
      start=True)
  report['target'] = server.target
  _write(args.out, '%s.json' % procid, report)
  print('%s:%d serving at %s' % (resolver.task_type, resolver.task_id,
                                 report['address']), flush=True)
  # Sleep in Python (not server.join()) so that the SIGTERM handler runs.
  deadline = time.monotonic() + args.max_seconds
  while time.monotonic() < deadline:
    time.sleep(0.2)
  print('%s:%d: no end after %s s' % (resolver.task_type, resolver.task_id,
                                      args.max_seconds), file=sys.stderr)
  return 3


def _train(tf, resolver, args, report):
  """The chief: a few steps through the ClusterCoordinator."""
  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
  coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
      strategy)
  with strategy.scope():
    weights = tf.Variable(tf.zeros([4, 1]), name='w')
    bias = tf.Variable(tf.zeros([1]), name='b')

  def dataset_fn():
    x = tf.random.stateless_normal([256, 4], seed=[1, 2])
    y = tf.matmul(x, tf.constant([[1.0], [-2.0], [3.0], [0.5]])) + 0.25
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)

  @tf.function
  def step_fn(iterator):
    x, y = next(iterator)
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y))
    grad_w, grad_b = tape.gradient(loss, [weights, bias])
    weights.assign_sub(0.1 * grad_w)
    bias.assign_sub(0.1 * grad_b)
    return loss

  iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))
  results = [coordinator.schedule(step_fn, args=(iterator,))
             for _ in range(args.steps)]
  coordinator.join()
  extended = strategy.extended
  report.update(
      losses=[float(r.fetch()) for r in results],
      num_workers=extended._num_workers,  # pylint: disable=protected-access
      num_ps=extended._num_ps,  # pylint: disable=protected-access
      variable_devices={'w': weights.device, 'b': bias.device},
      final_w=[float(v) for v in weights.numpy().ravel()],
      final_b=float(bias.numpy()[0]),
      done=True)
  # Done: the step's end (SIGTERM to all its tasks) must not kill the chief
  # while it exits.
  signal.signal(signal.SIGTERM, signal.SIG_IGN)
  _write(args.out, '%s.json' % report['procid'], report)
  print('chief: %d steps done, loss %.4f -> %.4f' %
        (args.steps, report['losses'][0], report['losses'][-1]), flush=True)
  return 0


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--max-seconds', type=float, default=240)
  args = parser.parse_args(argv[1:])
  report = {
      'procid': os.environ.get('SLURM_PROCID'),
      'nodename': os.environ.get('SLURMD_NODENAME'),
      'hostname': socket.gethostname(),
  }
  try:
    # pylint: disable=g-import-not-at-top
    import tensorflow as tf
    resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(
        jobs={'chief': 1, 'ps': 2, 'worker': args.workers})
    report.update(task_common.describe(resolver))
    if resolver.task_type == 'chief':
      return _train(tf, resolver, args, report)
    return _serve(tf, resolver, args, report)
  except Exception:  # pylint: disable=broad-except
    report['error'] = traceback.format_exc()
    _write(args.out, '%s.json' % report['procid'], report)
    print(report['error'], file=sys.stderr, flush=True)
    return 1


if __name__ == '__main__':
  sys.exit(main(sys.argv))
