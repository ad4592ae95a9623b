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
"""One task of a real Slurm step: the GPUs the resolver gives it.

  srun ... python gpus_task.py OUT_DIR

Writes OUT_DIR/<SLURM_PROCID>.json: Slurm's GPU variables as the task got
them, `CUDA_VISIBLE_DEVICES` after `SlurmClusterResolver()` (the pip
package's, the companion's: GPU sharing and its log are the companion's) and
its `num_accelerators()`, and `TF_FORCE_GPU_ALLOW_GROWTH` after it. The
resolver's log lines go to stderr.
"""

import json
import os
import sys

from tf_slurm import resolver as slurm_cluster_resolver

_GPU_VARIABLES = ('CUDA_VISIBLE_DEVICES', 'GPU_DEVICE_ORDINAL',
                  'SLURM_STEP_GPUS', 'SLURM_JOB_GPUS', 'SLURM_GPUS_ON_NODE',
                  'SLURM_GPUS')


def main(out_dir):
  before = {name: os.environ[name] for name in _GPU_VARIABLES
            if name in os.environ}
  resolver = slurm_cluster_resolver.SlurmClusterResolver()
  report = dict(
      procid=int(os.environ['SLURM_PROCID']),
      node=os.environ['SLURMD_NODENAME'],
      slurm_gpus=before,
      cvd_after=os.environ.get('CUDA_VISIBLE_DEVICES'),
      num_gpus=resolver.num_accelerators().get('GPU', 0),
      allow_growth=os.environ.get('TF_FORCE_GPU_ALLOW_GROWTH'))
  with open(os.path.join(out_dir, '%d.json' % report['procid']), 'w') as f:
    json.dump(report, f)


if __name__ == '__main__':
  main(sys.argv[1])
