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
"""Keras `Model.fit` trains across a real Slurm step, and resumes.

`srun -N2 --ntasks-per-node=2` runs examples/train_keras_fit.py on the lab's
nodes n9 and n10: four MultiWorkerMirroredStrategy workers that find each
other with `SlurmClusterResolver()` alone train with `Model.fit` (Keras 2:
tf-keras with `TF_USE_LEGACY_KERAS=1`, or TensorFlow 2.15's own `tf.keras`)
and must all end with identical weights, fed by a `tf.data` pipeline or by
numpy arrays. With a `tf.data` pipeline, a first step trains epochs 1-2 with
a `ModelCheckpoint` callback; only the chief's checkpoints stay in the model
folder (the other workers' temporary folders are deleted); a second step over
the same folder resumes from the chief's last checkpoint and trains epochs
3-4.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  .venv/bin/python -m pytest tests/integration/keras_fit_training_test.py -v
"""

import math
import os
import sys

from absl.testing import absltest
import pytest

import step_checks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRAIN_KERAS_FIT = os.path.join(ROOT, 'examples', 'train_keras_fit.py')
SRUN_ARGS = ['-w', 'n[9-10]', '-N2', '--ntasks-per-node=2']
NODES = ['n9', 'n9', 'n10', 'n10']
STEPS_PER_EPOCH = 5


def _table(results):
  return '\n'.join(
      '%(procid)s %(node)s %(task)s %(address)s %(keras_version)s '
      'epochs=%(epochs)s from=%(restored_from)s loss=%(loss)s '
      'start=%(start_weights_sha256).12s end=%(weights_sha256).12s' % r
      for _, r in sorted(results.items()))


@pytest.fixture(scope='module')
def checkpointed_steps(slurm_lab, tmp_path_factory):
  """Runs the two steps; (model folder, [(Result, reports, listing)]).

  The first trains epochs 1-2, the second resumes up to epoch 4; `listing` is
  the model folder's content after the step.
  """
  tmp = str(tmp_path_factory.mktemp('keras_fit'))
  model_dir = os.path.join(tmp, 'model')
  steps = []
  for i, epochs in enumerate((2, 4)):
    out = os.path.join(tmp, 'results%d' % i)
    result = slurm_lab.srun(
        'keras-fit', SRUN_ARGS, TRAIN_KERAS_FIT,
        ['--model-dir', model_dir, '--out', out, '--epochs', str(epochs),
         '--steps-per-epoch', str(STEPS_PER_EPOCH)],
        timeout=240, cwd=tmp)
    listing = sorted(os.listdir(model_dir)) if os.path.isdir(model_dir) else []
    steps.append((result, step_checks.read_reports(out), listing))
  return model_dir, steps


class _LockstepTestCase(absltest.TestCase):
  """Checks of a step of examples/train_keras_fit.py on n9 and n10."""

  def assertStepTrainedInLockstep(self, result, results):
    """All four workers ran, on their nodes, and hold the same weights."""
    self.assertEqual(result.returncode, 0, result.describe())
    table = _table(results)
    self.assertEqual(sorted(results), [0, 1, 2, 3], result.describe())
    for procid, r in sorted(results.items()):
      self.assertEqual(r['node'], NODES[procid], table)
      self.assertEqual(r['hostname'], r['node'], table)
      self.assertEqual(r['task'], 'worker:%d' % procid, table)
      self.assertEqual(r['address'], '%s:%d' % (NODES[procid],
                                                8888 + procid % 2), table)
      # Keras 2: tf-keras, or TensorFlow 2.15's own tf.keras.
      self.assertEqual(r['keras_version'].split('.')[0], '2', table)
      self.assertEqual((r['workers'], r['replicas']), (4, 4), table)
      self.assertTrue(all(math.isfinite(v) for v in r['loss']), table)
      self.assertLess(r['loss'][-1], r['loss'][0], table)
    self.assertLen({r['weights_sha256'] for r in results.values()}, 1, table)
    self.assertLen({tuple(r['loss']) for r in results.values()}, 1, table)
    return table


class KerasFitCheckpointTest(_LockstepTestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, checkpointed_steps, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)
    self.model_dir, self.steps = checkpointed_steps

  def test_fit_on_a_dataset_leaves_identical_weights_in_four_workers(self):
    result, results, _ = self.steps[0]
    table = self.assertStepTrainedInLockstep(result, results)
    print(table)
    for r in results.values():
      self.assertEqual((r['restored_from'], r['initial_epoch']), (None, 0),
                       table)
      self.assertEqual(r['epochs'], [1, 2], table)
      self.assertEqual(r['iterations'], 2 * STEPS_PER_EPOCH, table)
    self.assertEqual(self.lab.wait_until_idle(), [])

  def test_only_the_chiefs_checkpoints_are_kept(self):
    result, results, listing = self.steps[0]
    self.assertEqual(result.returncode, 0, result.describe())
    # Worker 0 is the chief: its copy is written to the model folder.
    self.assertEqual(
        [r['should_checkpoint'] for _, r in sorted(results.items())],
        [True, False, False, False], _table(results))
    # One checkpoint per epoch and TensorFlow's index of them; the other
    # workers' temporary folders (workertemp_1..3) are gone.
    self.assertEqual(listing, [
        'checkpoint',
        'ckpt-0001.data-00000-of-00001', 'ckpt-0001.index',
        'ckpt-0002.data-00000-of-00001', 'ckpt-0002.index',
    ])

  def test_second_step_resumes_from_the_chiefs_last_checkpoint(self):
    first, first_results, _ = self.steps[0]
    self.assertEqual(first.returncode, 0, first.describe())
    result, results, listing = self.steps[1]
    table = self.assertStepTrainedInLockstep(result, results)
    print(table)
    trained = first_results[0]['weights_sha256']
    for r in results.values():
      self.assertEqual(r['restored_from'],
                       os.path.join(self.model_dir, 'ckpt-0002'), table)
      # Weights and optimizer state are those the first step ended with.
      self.assertEqual(r['start_weights_sha256'], trained, table)
      self.assertEqual(r['start_iterations'], 2 * STEPS_PER_EPOCH, table)
      self.assertEqual((r['initial_epoch'], r['epochs']), (2, [3, 4]), table)
      self.assertEqual(r['iterations'], 4 * STEPS_PER_EPOCH, table)
    # Training went on from there: the loss is below the first step's.
    self.assertLess(results[0]['loss'][0], first_results[0]['loss'][-1],
                    table)
    self.assertIn('ckpt-0004.index', listing)
    self.assertFalse([n for n in listing if n.startswith('workertemp')],
                     listing)
    self.assertEqual(self.lab.wait_until_idle(), [])


class KerasFitNumpyInputTest(_LockstepTestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, slurm_lab, tmp_path):
    self.lab = slurm_lab
    self.tmp = str(tmp_path)

  def test_fit_on_numpy_arrays_leaves_identical_weights_in_four_workers(self):
    out = os.path.join(self.tmp, 'results')
    result = self.lab.srun(
        'keras-fit-numpy', SRUN_ARGS, TRAIN_KERAS_FIT,
        ['--model-dir', os.path.join(self.tmp, 'model'), '--out', out,
         '--input', 'numpy', '--epochs', '2', '--steps-per-epoch',
         str(STEPS_PER_EPOCH)],
        timeout=240, cwd=self.tmp)
    results = step_checks.read_reports(out)
    table = self.assertStepTrainedInLockstep(result, results)
    print(table)
    self.assertEqual({r['input'] for r in results.values()}, {'numpy'})
    self.assertEqual(self.lab.wait_until_idle(), [])


if __name__ == '__main__':
  # The lab is a pytest session fixture (conftest.py): run under pytest.
  sys.exit(pytest.main([__file__, '-v', '-rs']))
