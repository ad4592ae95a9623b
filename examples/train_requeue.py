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
r"""Training that survives the end of a Slurm job: save, requeue, resume.

Run by examples/sbatch_requeue.sh, one task per worker:

  sbatch examples/sbatch_requeue.sh --checkpoint-dir /shared/run1

A custom MultiWorkerMirroredStrategy loop under
`tf.distribute.experimental.PreemptionCheckpointHandler` with
`tf.distribute.experimental.SlurmTerminationConfig` (which the pip package
publishes: the companion's `tf_slurm.termination`): when Slurm warns of the
end of the job (`sbatch --signal=USR1@120`) or stops it (SIGTERM: time limit,
preemption, scancel), every worker saves a checkpoint at the same step; task
0 requeues the job after a warning or a time limit, and the requeued job
restores the checkpoint and goes on from that step. The data of a step
depend only on the step number, so a run that was stopped and resumed ends
with the weights of one that was not.

Task 0 prints `START ...` when it begins (restart count, restored step) and
`STEP n` every --log-every steps; every task prints `RESULT {json}` at the
end (its final weights and their SHA-256).
"""

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np
import tensorflow as tf

MARK = 'RESULT '


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      description=__doc__.split('\n', 1)[0],
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument('--checkpoint-dir', required=True,
                      help='a folder on a file system all nodes share')
  parser.add_argument('--steps', type=int, default=200)
  parser.add_argument('--batch-size', type=int, default=16,
                      help='examples per replica and step')
  parser.add_argument('--log-every', type=int, default=10)
  parser.add_argument('--first-run-step-seconds', type=float, default=0.0,
                      help='pause after each step until the job is first '
                      'requeued (SLURM_RESTART_COUNT unset), so that a demo '
                      'or a test can stop the first run midway')
  return parser.parse_args(argv[1:])


def _weights_digest(weights):
  digest = hashlib.sha256()
  for weight in weights:
    digest.update(np.ascontiguousarray(weight, dtype=np.float32).tobytes())
  return digest.hexdigest()


def main(argv):
  args = _parse_args(argv)
  # First: from here on, the early warning and SIGTERM are recorded, not fatal.
  termination_config = tf.distribute.experimental.SlurmTerminationConfig()
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver()
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  procid = int(os.environ.get('SLURM_PROCID', '0'))
  restarts = int(os.environ.get('SLURM_RESTART_COUNT', '0'))
  with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input(shape=(8,)),
                                 tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
    optimizer.build(model.trainable_variables)
  # The number of steps done: saved and restored with the model.
  step = tf.Variable(0, dtype=tf.int64, trainable=False)
  checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer,
                                   step=step)
  # Restores the latest checkpoint in the folder, if any.
  handler = tf.distribute.experimental.PreemptionCheckpointHandler(
      resolver, checkpoint, args.checkpoint_dir, termination_config)
  if procid == 0:
    print('START job %s restart %d at step %d of %d' % (
        os.environ.get('SLURM_JOB_ID'), restarts, int(step), args.steps),
          flush=True)
  true_w = tf.constant(np.linspace(-1.0, 1.0, 8).reshape(8, 1), tf.float32)
  global_batch_size = args.batch_size * strategy.num_replicas_in_sync

  @tf.function
  def train_step(number):

    def step_fn(number):
      # This replica's examples of step `number`: the same in every run.
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      seed = tf.stack([number, tf.cast(replica, tf.int64)])
      x = tf.random.stateless_normal([args.batch_size, 8], seed=seed)
      y = tf.matmul(x, true_w)
      with tf.GradientTape() as tape:
        per_example = tf.reduce_mean(tf.square(model(x, training=True) - y),
                                     axis=-1)
        loss = tf.nn.compute_average_loss(per_example,
                                          global_batch_size=global_batch_size)
      grads = tape.gradient(loss, model.trainable_variables)
      optimizer.apply_gradients(zip(grads, model.trainable_variables))
      return loss

    losses = strategy.run(step_fn, args=(number,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

  pause = args.first_run_step_seconds if not restarts else 0.0
  while int(step) < args.steps:
    # Saves (and exits) here when a worker has been told to stop.
    loss = handler.run(train_step, step.read_value())
    step.assign_add(1)
    if procid == 0 and int(step) % args.log_every == 0:
      print('STEP %d loss %.6f' % (int(step), float(loss)), flush=True)
    if pause:
      time.sleep(pause)
  weights = model.get_weights()
  print(MARK + json.dumps({
      'procid': procid,
      'restarts': restarts,
      'steps': int(step),
      'weights': [w.astype(float).ravel().tolist() for w in weights],
      'weights_sha256': _weights_digest(weights),
  }, sort_keys=True), flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
