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
r"""Multi-worker `Model.fit` on Slurm, with checkpoints and resumption.

Start one task per worker with srun; each task learns its role and every
worker's address from `SlurmClusterResolver()`:

  srun -N2 --ntasks-per-node=2 python examples/train_keras_fit.py \
      --model-dir /shared/run1 --epochs 2
  # Later (or after a failure): continues from the last checkpoint.
  srun -N2 --ntasks-per-node=2 python examples/train_keras_fit.py \
      --model-dir /shared/run1 --epochs 4

`Model.fit` under `MultiWorkerMirroredStrategy` needs Keras 2: with Keras 3
the first training step of a multi-worker `fit` fails. TensorFlow 2.15's
`tf.keras` is Keras 2; from 2.16 on, `tf.keras` is Keras 3 unless the tf-keras
release of the same TensorFlow release is installed (`pip install --no-deps
tf-keras==2.21.0` for TensorFlow 2.21) and `TF_USE_LEGACY_KERAS=1` selects it,
which this script sets where tf-keras is installed (unless the environment
already sets it). Over Keras 3 it stops before training and says so.
`examples/train_mwms.py` is a custom training loop that works with Keras 3.

Checkpoints follow TensorFlow's multi-worker guide: every worker saves (a save
may need all workers), but only the chief's copy (worker 0) lands in
`--model-dir`; the others write to `--model-dir/workertemp_<i>`, which Keras's
`ModelCheckpoint` deletes right after each save. On start, the latest
checkpoint in `--model-dir` (weights and optimizer state) is restored in every
worker and training goes on from the epoch after it.

The data is synthetic (`y = x.w + noise`, the same in every task), fed as a
`tf.data` pipeline (default) or as numpy arrays (`--input numpy`). Every task
prints one line `RESULT {json}`: its Slurm rank, node, TensorFlow role and
address, the checkpoint it resumed from and the epoch it started at, the loss
of each epoch, and a SHA-256 of its weights at the start and at the end
(identical in all workers: training is synchronous).
"""

import argparse
import hashlib
import importlib.util
import json
import os
import re
import socket
import sys

# Model.fit under MultiWorkerMirroredStrategy needs Keras 2: tf-keras where it
# is installed (selected before TensorFlow is imported), else tf.keras, which
# is Keras 2 in TensorFlow 2.15.
if importlib.util.find_spec('tf_keras') is not None:
  os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')

import numpy as np  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

MARK = 'RESULT '
# ModelCheckpoint's file name; the epoch number (1-based) is the one that ended.
CHECKPOINT_NAME = 'ckpt-{epoch:04d}'
_CHECKPOINT_EPOCH = re.compile(r'ckpt-(\d+)$')


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      description=__doc__.split('\n', 1)[0],
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument('--model-dir', required=True,
                      help='checkpoint folder, on a filesystem all nodes see')
  parser.add_argument('--epochs', type=int, default=2,
                      help='train until this epoch (counting resumed ones)')
  parser.add_argument('--steps-per-epoch', type=int, default=5)
  parser.add_argument('--batch-size', type=int, default=16,
                      help='examples per worker and step')
  parser.add_argument('--input', choices=('dataset', 'numpy'),
                      default='dataset', help='feed fit a tf.data.Dataset or '
                      'numpy arrays')
  parser.add_argument('--port-base', type=int, default=8888,
                      help='first port of the TensorFlow servers on a node')
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--out', default=None,
                      help='also write the result to OUT/<SLURM_PROCID>.json')
  return parser.parse_args(argv[1:])


def _data(seed):
  """Synthetic regression data y = x.w + 0.1 noise, identical everywhere."""
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(1024, 8)).astype(np.float32)
  w = rng.normal(size=(8, 1)).astype(np.float32)
  y = x @ w + 0.1 * rng.normal(size=(1024, 1)).astype(np.float32)
  return x, y


def _dataset(x, y, global_batch_size):
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


def _latest_checkpoint(model_dir):
  """(path, epoch) of the newest checkpoint in model_dir, or (None, 0)."""
  path = tf.train.latest_checkpoint(model_dir)
  if path is None:
    return None, 0
  match = _CHECKPOINT_EPOCH.search(path)
  if not match:
    raise ValueError('%s: not a checkpoint of this script (%s)' %
                     (path, CHECKPOINT_NAME))
  return path, int(match.group(1))


def _keras_version():
  """The version of the Keras package behind tf.keras: '2.15.0', '3.15.1'."""
  return sys.modules[tf.keras.Model.__module__.split('.')[0]].__version__


def main(argv):
  args = _parse_args(argv)
  if int(_keras_version().split('.')[0]) > 2:
    sys.exit('tf.keras is Keras %s, whose Model.fit fails under '
             'MultiWorkerMirroredStrategy: install the tf-keras release of '
             'TensorFlow %s (pip install --no-deps tf-keras==X.Y.Z), or train '
             'with a custom loop (examples/train_mwms.py).' %
             (_keras_version(), tf.__version__))
  # Before anything touches a GPU: the resolver sets CUDA_VISIBLE_DEVICES.
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(
      port_base=args.port_base)
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  global_batch_size = args.batch_size * strategy.num_replicas_in_sync
  tf.keras.utils.set_random_seed(args.seed)
  with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(8,)),
        tf.keras.layers.Dense(16, activation='relu'),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05),
                  loss='mse')

  # Every worker restores the chief's latest checkpoint (weights and
  # optimizer state) and starts at the epoch after it.
  restored_from, initial_epoch = _latest_checkpoint(args.model_dir)
  if restored_from:
    model.load_weights(restored_from).expect_partial()
  start_weights = _weights_digest(model.get_weights())
  start_iterations = int(model.optimizer.iterations.numpy())

  checkpoint = tf.keras.callbacks.ModelCheckpoint(
      os.path.join(args.model_dir, CHECKPOINT_NAME), save_weights_only=True)
  x, y = _data(args.seed)
  if args.input == 'dataset':
    history = model.fit(_dataset(x, y, global_batch_size),
                        epochs=args.epochs, initial_epoch=initial_epoch,
                        steps_per_epoch=args.steps_per_epoch,
                        callbacks=[checkpoint], verbose=0)
  else:
    history = model.fit(x, y, batch_size=global_batch_size,
                        epochs=args.epochs, initial_epoch=initial_epoch,
                        steps_per_epoch=args.steps_per_epoch, shuffle=False,
                        callbacks=[checkpoint], verbose=0)

  spec = strategy.cluster_resolver.cluster_spec()
  weights = model.get_weights()
  result = {
      'procid': int(os.environ.get('SLURM_PROCID', '0')),
      'node': os.environ.get('SLURMD_NODENAME'),
      'hostname': socket.gethostname(),
      'task': '%s:%d' % (resolver.task_type, resolver.task_id),
      'address': spec.task_address(resolver.task_type, resolver.task_id),
      'workers': sum(spec.num_tasks(job) for job in ('chief', 'worker')
                     if job in spec.jobs),
      'replicas': strategy.num_replicas_in_sync,
      # 'tf_keras', or 'keras' (TensorFlow 2.15's Keras 2).
      'keras_package': type(model).__module__.split('.')[0],
      'keras_version': _keras_version(),
      'input': args.input,
      # Whether this worker's checkpoints are the ones kept (the chief).
      'should_checkpoint': strategy.extended.should_checkpoint,
      'restored_from': restored_from,
      'initial_epoch': initial_epoch,
      'start_iterations': start_iterations,
      'start_weights_sha256': start_weights,
      'epochs': [e + 1 for e in history.epoch],
      'loss': [round(float(v), 6) for v in history.history.get('loss', [])],
      'iterations': int(model.optimizer.iterations.numpy()),
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
