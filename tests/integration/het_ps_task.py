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
"""One task of a ParameterServerStrategy cluster in a heterogeneous step.

  srun --kill-on-bad-exit=1 --wait=S A : B : C python het_ps_task.py \
      --out DIR --het-jobs chief,ps,worker [--steps N] [--max-seconds T]

Every task creates `SlurmClusterResolver(het_jobs=[...])`: the tasks of
heterogeneous component c belong to job het_jobs[c]. The chief trains and
the servers serve exactly as in ps_task.py (whose code this reuses), and
report to DIR/<SLURM_PROCID>.json (servers also DIR/<SLURM_PROCID>.term when
Slurm's SIGTERM ends them).

Before that, every task also records, for the test to compare with its own
resolution: the explain command's `--tf-config --het-jobs ...` output, run
as a user would (`python -m tf_slurm.explain`), and the cluster a
second resolver gives with `hostlist_expansion='check'` (the step's and every
component's node list expanded by both the module and Slurm's scontrol).
"""

import argparse
import os
import socket
import sys
import traceback

import ps_task
import task_common

_SLURM_VARS = ('SLURM_HET_SIZE', 'SLURM_STEP_NODELIST',
               'SLURM_STEP_TASKS_PER_NODE', 'SLURM_JOB_NODELIST', 'SLURM_GTIDS',
               'SLURM_NODEID', 'SLURM_LOCALID', 'SLURM_JOB_ID', 'SLURM_STEP_ID')


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  parser.add_argument('--het-jobs', required=True,
                      type=lambda text: text.split(','))
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--max-seconds', type=float, default=240)
  args = parser.parse_args(argv[1:])
  env = os.environ
  report = {
      'procid': env.get('SLURM_PROCID'),
      'nodename': env.get('SLURMD_NODENAME'),
      'hostname': socket.gethostname(),
      'slurm': {name: env[name] for name in _SLURM_VARS if name in env},
      'explain': task_common.run_explain(['--tf-config', '--het-jobs',
                              ','.join(args.het_jobs)]),
  }
  try:
    # pylint: disable=g-import-not-at-top
    import tensorflow as tf
    resolver_class = tf.distribute.cluster_resolver.SlurmClusterResolver
    resolver = resolver_class(het_jobs=args.het_jobs)
    report.update(task_common.describe(resolver))
    checked = resolver_class(het_jobs=args.het_jobs, auto_set_gpu=False,
                             hostlist_expansion='check')
    report['cluster_check'] = checked.cluster_spec().as_dict()
    if resolver.task_type == 'chief':
      return ps_task._train(tf, resolver, args, report)  # pylint: disable=protected-access
    return ps_task._serve(tf, resolver, args, report)  # pylint: disable=protected-access
  except Exception:  # pylint: disable=broad-except
    report['error'] = traceback.format_exc()
    ps_task._write(args.out, '%s.json' % report['procid'], report)  # pylint: disable=protected-access
    print(report['error'], file=sys.stderr, flush=True)
    return 1


if __name__ == '__main__':
  sys.exit(main(sys.argv))
