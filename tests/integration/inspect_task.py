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
"""One task of a real Slurm step: the explain command, hostlist modes, ports.

  srun ... python inspect_task.py --out DIR [--hostlist-expansion MODE]

Every task writes DIR/<SLURM_PROCID>.json with, in this order:

- `explain`: the explain command run as a user would, in a child Python
  (`python -m tf_slurm.explain`),
  with `--tf-config` and with `--all` (and MODE): exit status, output and
  wall time of each call;
- `explain_in_process`: the same command through its `main()` in this
  process, with `CUDA_VISIBLE_DEVICES` and `GPU_DEVICE_ORDINAL` before and
  after (the command must not change them);
- `resolved`: the companion's `SlurmClusterResolver(hostlist_expansion=MODE)`
  (`tf_slurm.resolver`, which the overlay publishes): cluster, role,
  master, GPUs, and `CUDA_VISIBLE_DEVICES` after;
- `expansions`: the cluster with hostlist_expansion 'builtin', 'scontrol' and
  'check' (auto_set_gpu=False), and what 'check' and 'builtin' do without
  scontrol on PATH ('check' must fail: proof that it really asks scontrol);
- `reserved`: what port_base='reserved' does (an error if Slurm reserved no
  ports: `srun --resv-ports=0`, or no `MpiParams=ports` in slurm.conf);
- `explain_after`: `--tf-config` again, in a child started after the
  resolver changed this process's `CUDA_VISIBLE_DEVICES`.

Only the standard library and the resolver module are imported (the module
loads TensorFlow's core: a few s of CPU per task). The exit status is 0 unless
the task could not run at all; the test judges the report.
"""

import argparse
import io
import json
import os
import socket
import sys
import time
import traceback

import task_common



def _gpu_env():
  return {name: os.environ.get(name)
          for name in ('CUDA_VISIBLE_DEVICES', 'GPU_DEVICE_ORDINAL')}


def _error(exception):
  return {'type': type(exception).__name__, 'message': str(exception)}


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  parser.add_argument('--hostlist-expansion', default='builtin')
  args = parser.parse_args(argv[1:])
  mode_args = ['--hostlist-expansion', args.hostlist_expansion]
  env = os.environ
  report = {
      'procid': env.get('SLURM_PROCID'),
      'nodename': env.get('SLURMD_NODENAME'),
      'localid': env.get('SLURM_LOCALID'),
      'hostname': socket.gethostname(),
      'step_nodelist': env.get('SLURM_STEP_NODELIST'),
      'resv_ports': env.get('SLURM_STEP_RESV_PORTS'),
      'cvd_before': env.get('CUDA_VISIBLE_DEVICES'),
      'explain': {
          'tf_config': task_common.run_explain(['--tf-config'] + mode_args),
          'all': task_common.run_explain(['--all'] + mode_args),
      },
  }
  try:
    # pylint: disable=g-import-not-at-top
    from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as scr
    from tf_slurm import explain as slurm_explain
    # The companion's resolver: the core's, with hostlist_expansion.
    from tf_slurm.resolver import SlurmClusterResolver
    report['module_file'] = scr.__file__

    # The explain command in this process: prints, changes no variable.
    before = _gpu_env()
    out = io.StringIO()
    started = time.monotonic()
    status = slurm_explain.main(['--all'] + mode_args, out=out)
    report['explain_in_process'] = {
        'status': status, 'stdout': out.getvalue(),
        'seconds': time.monotonic() - started,
        'env_before': before, 'env_after': _gpu_env()}

    started = time.monotonic()
    resolver = SlurmClusterResolver(
        hostlist_expansion=args.hostlist_expansion)
    report['resolved'] = {
        'seconds': time.monotonic() - started,
        'task_type': resolver.task_type,
        'task_id': resolver.task_id,
        'cluster': resolver.cluster_spec().as_dict(),
        'master': resolver.master(),
        'rpc_layer': resolver.rpc_layer,
        'num_accelerators': resolver.num_accelerators(),
        'env_after': _gpu_env(),
    }

    expansions = {}
    for mode in ('builtin', 'scontrol', 'check'):
      started = time.monotonic()
      try:
        expansions[mode] = {'cluster': SlurmClusterResolver(
            auto_set_gpu=False,
            hostlist_expansion=mode).cluster_spec().as_dict()}
      except Exception as e:  # pylint: disable=broad-except
        expansions[mode] = {'error': _error(e)}
      expansions[mode]['seconds'] = time.monotonic() - started
    # Without scontrol on PATH: 'check' must fail (it really runs scontrol);
    # 'builtin' needs none.
    path = env.get('PATH', '')
    env['PATH'] = '/nonexistent'
    try:
      for name, mode in (('check_without_scontrol', 'check'),
                         ('builtin_without_scontrol', 'builtin')):
        try:
          SlurmClusterResolver(auto_set_gpu=False, hostlist_expansion=mode)
          expansions[name] = {'error': None}
        except Exception as e:  # pylint: disable=broad-except
          expansions[name] = {'error': _error(e)}
    finally:
      env['PATH'] = path
    report['expansions'] = expansions

    try:
      reserved = SlurmClusterResolver(auto_set_gpu=False,
                                          port_base='reserved')
      report['reserved'] = {'cluster': reserved.cluster_spec().as_dict()}
    except Exception as e:  # pylint: disable=broad-except
      report['reserved'] = {'error': _error(e)}
  except Exception:  # pylint: disable=broad-except
    report['error'] = traceback.format_exc()
  report['explain_after'] = task_common.run_explain(['--tf-config'] +
                                                   mode_args)
  text = json.dumps(report, sort_keys=True)
  os.makedirs(args.out, exist_ok=True)
  name = os.path.join(args.out, '%s.json' % report['procid'])
  with open(name + '.tmp', 'w') as f:
    f.write(text + '\n')
  os.replace(name + '.tmp', name)
  return 1 if 'error' in report else 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
