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
"""Records the tasks of real Slurm steps, then resolves them all at once.

  srun ... python topology_task.py record DIR/STEP
  srun -n1 python topology_task.py resolve DIR

`record` (no TensorFlow: a few ms per task) writes DIR/STEP/<SLURM_PROCID>.json:
the task's Slurm variables (SLURM_*, SLURMD_*) and its host name. `resolve`
(one task, which imports TensorFlow once) creates `SlurmClusterResolver()`
in every recorded task's environment in turn, as that task would have, and
writes DIR/STEP/resolved.json: {SLURM_PROCID: its task type, task id,
ClusterSpec and master(), or the error}. A step of many tasks costs one
TensorFlow import instead of one per task.
"""

import glob
import json
import os
import socket
import sys
import traceback


def record(folder):
  env = {name: value for name, value in os.environ.items()
         if name.startswith(('SLURM_', 'SLURMD_'))}
  os.makedirs(folder, exist_ok=True)
  path = os.path.join(folder, '%s.json' % env['SLURM_PROCID'])
  with open(path + '.tmp', 'w') as f:
    json.dump({'env': env, 'hostname': socket.gethostname()}, f)
  os.replace(path + '.tmp', path)


def _resolve(env):
  """What SlurmClusterResolver() makes of the environment `env`."""
  # pylint: disable=g-import-not-at-top
  from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
  os.environ.clear()
  os.environ.update(env)
  try:
    resolver = slurm_cluster_resolver.SlurmClusterResolver(auto_set_gpu=False)
    return {'task_type': resolver.task_type, 'task_id': resolver.task_id,
            'cluster': resolver.cluster_spec().as_dict(),
            'master': resolver.master()}
  except Exception:  # pylint: disable=broad-except
    return {'error': traceback.format_exc()}


def resolve(folder):
  for step in sorted(glob.glob(os.path.join(folder, '*', ''))):
    resolved = {}
    for path in glob.glob(os.path.join(step, '[0-9]*.json')):
      with open(path) as f:
        task = json.load(f)
      resolved[task['env']['SLURM_PROCID']] = _resolve(task['env'])
    with open(os.path.join(step, 'resolved.json'), 'w') as f:
      json.dump(resolved, f)


if __name__ == '__main__':
  {'record': record, 'resolve': resolve}[sys.argv[1]](sys.argv[2])
