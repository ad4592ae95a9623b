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
r"""Multi-worker Keras training on Slurm with MultiWorkerMirroredStrategy.

Start one task per worker with srun; each task learns its role and every
worker's address from `SlurmClusterResolver()` (no TF_CONFIG, no host lists):

  srun -N3 --ntasks-per-node=2 python examples/train_mwms.py

with a `python` that has TensorFlow and this package installed (`pip install
/path/to/repo`; no PYTHONPATH: the package switches itself on).

It trains a small Keras model on synthetic data (the same in every task; each
worker reads its own shard) for a few steps, on CPU or on the GPUs Slurm gave
the task. Every task prints one line `RESULT {json}`: its Slurm rank and node,
its TensorFlow role and address, its GPUs, the loss after each epoch and a
SHA-256 of its final weights. Synchronous training leaves identical weights
in every worker, so all tasks print the same hash. See examples/sbatch_*.sh.
"""

import argparse
import hashlib
import json
import os
import socket
import sys

import numpy as np
import tensorflow as tf

MARK = 'RESULT '


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      description=__doc__.split('\n', 1)[0],
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument('--epochs', type=int, default=2)
  parser.add_argument('--steps-per-epoch', type=int, default=5)
  parser.add_argument('--batch-size', type=int, default=16,
                      help='examples per worker and step')
  parser.add_argument('--port-base', type=int, default=8888,
                      help='first port of the TensorFlow servers on a node')
  parser.add_argument('--node-host', default=None,
                      help="the host of each node's addresses, e.g. "
                      "'{node}-ib' (default: the node names)")
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--out', default=None,
                      help='also write the result to OUT/<SLURM_PROCID>.json')
  return parser.parse_args(argv[1:])


def _dataset(seed, global_batch_size):
  """Synthetic regression data y = x.w + 0.1 noise, identical everywhere."""
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(1024, 8)).astype(np.float32)
  w = rng.normal(size=(8, 1)).astype(np.float32)
  y = x @ w + 0.1 * rng.normal(size=(1024, 1)).astype(np.float32)
  dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat()
  dataset = dataset.batch(global_batch_size, drop_remainder=True)
  options = tf.data.Options()
  # Every worker builds the same dataset and keeps its share of each batch.
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.DATA)
  return dataset.with_options(options)


def _weights_digest(weights):
  digest = hashlib.sha256()
  for weight in weights:
    digest.update(np.ascontiguousarray(weight, dtype=np.float32).tobytes())
  return digest.hexdigest()


def main(argv):
  args = _parse_args(argv)
  gpus_from_slurm = os.environ.get('CUDA_VISIBLE_DEVICES')
  # Before anything touches a GPU: the resolver sets CUDA_VISIBLE_DEVICES.
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(
      port_base=args.port_base, node_host=args.node_host)
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  # How many workers are in the cluster the strategy runs on (MWMS counts
  # the chief, if any, as a worker).
  spec = strategy.cluster_resolver.cluster_spec()
  workers = sum(spec.num_tasks(job) for job in ('chief', 'worker')
                if job in spec.jobs)
  global_batch_size = args.batch_size * strategy.num_replicas_in_sync
  tf.keras.utils.set_random_seed(args.seed)
  with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(8,)),
        tf.keras.layers.Dense(16, activation='relu'),
        tf.keras.layers.Dense(1),
    ])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
    optimizer.build(model.trainable_variables)

  # A custom loop: Keras 3's Model.fit fails under this strategy in TF 2.21
  # (it reduces its first distributed batch with strategy.reduce to build the
  # model, which MultiWorkerMirroredStrategy cannot convert); Keras 3 layers
  # and optimizers work. With tf-keras, see examples/train_keras_fit.py.
  @tf.function
  def train_step(iterator):

    def step_fn(inputs):
      x, y = inputs
      with tf.GradientTape() as tape:
        per_example = tf.reduce_mean(tf.square(model(x, training=True) - y),
                                     axis=-1)
        loss = tf.nn.compute_average_loss(per_example,
                                          global_batch_size=global_batch_size)
      grads = tape.gradient(loss, model.trainable_variables)
      # The optimizer sums the gradients over all replicas of all workers.
      optimizer.apply_gradients(zip(grads, model.trainable_variables))
      return loss

    losses = strategy.run(step_fn, args=(next(iterator),))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

  iterator = iter(strategy.experimental_distribute_dataset(
      _dataset(args.seed, global_batch_size)))
  epoch_losses = []
  for _ in range(args.epochs):
    total = 0.0
    for _ in range(args.steps_per_epoch):
      total += float(train_step(iterator))
    epoch_losses.append(total / args.steps_per_epoch)
  weights = model.get_weights()
  result = {
      'procid': int(os.environ.get('SLURM_PROCID', '0')),
      'node': os.environ.get('SLURMD_NODENAME'),
      'hostname': socket.gethostname(),
      'task': '%s:%d' % (resolver.task_type, resolver.task_id),
      'address': spec.task_address(resolver.task_type, resolver.task_id),
      'workers': workers,
      'replicas': strategy.num_replicas_in_sync,
      'gpus_from_slurm': gpus_from_slurm,
      'gpus': os.environ.get('CUDA_VISIBLE_DEVICES'),
      'loss': [round(v, 6) for v in epoch_losses],
      'weights_sha256': _weights_digest(weights),
      'weights_sum': float(sum(np.sum(w, dtype=np.float64) for w in weights)),
  }
  text = json.dumps(result, sort_keys=True)
  if args.out:
    os.makedirs(args.out, exist_ok=True)
    name = os.path.join(args.out, '%d.json' % result['procid'])
    with open(name + '.tmp', 'w') as f:
      f.write(text + '\n')
    os.replace(name + '.tmp', name)
  print(MARK + text, flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
