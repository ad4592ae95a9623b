"""Resolves recorded Slurm steps task by task and prints what each task gets.

Usage (repo root on PYTHONPATH, so that the repo's resolver replaces pip
TensorFlow's):
  PYTHONPATH=. .venv/bin/python tools/show_layout.py [STEP_FOLDER ...]

A step folder holds `<SLURM_PROCID>.env`, the environment of each task of one
real Slurm step (tests/fixtures/slurm-env). Every task's environment is put in
place in turn, a `SlurmClusterResolver()` is created with default arguments,
as `srun python train.py` would, and its role, address and GPUs are printed.
"""

import os
import sys

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FIXTURES = os.path.join(_ROOT, 'tests', 'fixtures', 'slurm-env')
_DEFAULT_STEPS = ('n5-N2-cyclic', 'n6-N2-plane2', 'N2-ntpn4-gpus-per-node4',
                  'het-N1n1-N2n3-gpu')


def _read_env(path):
  with open(path) as f:
    return dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)


def _resolve_in(env):
  """Resolves with `env` as the whole environment; restores it afterwards."""
  saved = dict(os.environ)
  os.environ.clear()
  os.environ.update(env)
  try:
    resolver = slurm_cluster_resolver.SlurmClusterResolver()
    return resolver, os.environ.get('CUDA_VISIBLE_DEVICES')
  finally:
    os.environ.clear()
    os.environ.update(saved)


def show(folder):
  """Prints one line per task of the step recorded in `folder`."""
  names = sorted((n for n in os.listdir(folder) if n[0].isdigit()),
                 key=lambda n: int(n.split('.')[0]))
  envs = [_read_env(os.path.join(folder, name)) for name in names]
  first = envs[0]
  print('== %s: SLURM_STEP_NODELIST=%s SLURM_STEP_TASKS_PER_NODE=%s '
        'SLURM_DISTRIBUTION=%s' %
        (os.path.basename(folder.rstrip('/')), first['SLURM_STEP_NODELIST'],
         first['SLURM_STEP_TASKS_PER_NODE'],
         first.get('SLURM_DISTRIBUTION', '(default block)')))
  print('  %-5s %-8s %-10s %-14s %-16s %s' %
        ('rank', 'node', 'task', 'address', 'GPUs from Slurm', 'GPUs used'))
  for env in envs:
    resolver, gpus = _resolve_in(env)
    print('  %-5s %-8s %-10s %-14s %-16s %s' %
          (env['SLURM_PROCID'], env['SLURMD_NODENAME'],
           '%s:%d' % resolver.get_task_info(),
           resolver.master(rpc_layer=None).split('://')[-1],
           env.get('CUDA_VISIBLE_DEVICES', '-'), '-' if gpus is None else
           gpus or "''"))
  print('  ClusterSpec: %s' % resolver.cluster_spec().as_dict())


def main(argv):
  folders = argv[1:] or [os.path.join(_FIXTURES, s) for s in _DEFAULT_STEPS]
  for folder in folders:
    show(folder)


if __name__ == '__main__':
  main(sys.argv)
