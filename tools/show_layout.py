"""Resolves recorded Slurm steps task by task and prints what each task gets.

Usage (repo root on PYTHONPATH, so that the repo's resolver replaces pip
TensorFlow's):
  PYTHONPATH=. .venv/bin/python tools/show_layout.py [FOLDER ...]

A folder of tests/fixtures/slurm-env holds the environment of each task of one
real Slurm step, `<SLURM_PROCID>.env`; or, for a batch job or an allocation,
the environment of the batch script (`batch.env`) or of the `salloc` shell
(`salloc.env`) and a subfolder per step. Every environment is put in place in
turn, a `SlurmClusterResolver()` is created with default arguments, as
`srun python train.py` would, and its role, address and GPUs are printed; when
the resolver refuses an environment (the `salloc` shell is not a task), its
error is printed instead. A step run with `-m arbitrary` reads the file named
by `SLURM_HOSTFILE`: the recorded path is replaced by the folder's `hostfile`
(tests/fixtures/recorded_steps.py reads the folders).
Without arguments, four steps are shown; `--all` shows every folder.
"""

import os
import sys
from unittest import mock

from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver import slurm_test_util
from tests.fixtures import recorded_steps

_FIXTURES = recorded_steps.FIXTURES
_DEFAULT_STEPS = ('n5-N2-cyclic', 'n6-N2-plane2', 'N2-ntpn4-gpus-per-node4',
                  'het-N1n1-N2n3-gpu')
_ROW = '  %-5s %-8s %-10s %-14s %-16s %s'


def _resolve_in(env):
  """Resolves with `env` as the whole environment; restores it afterwards.

  Returns (resolver, CUDA_VISIBLE_DEVICES after it), or (None, error message).
  The recorded steps had no nvidia-smi, whatever this machine has.
  """
  saved = dict(os.environ)
  os.environ.clear()
  os.environ.update(env)
  try:
    with mock.patch.object(slurm_hostlist, 'run_command',
                           side_effect=slurm_test_util.fake_run_command()):
      resolver = slurm_cluster_resolver.SlurmClusterResolver()
    return resolver, os.environ.get('CUDA_VISIBLE_DEVICES')
  except (RuntimeError, ValueError) as e:
    return None, '%s: %s' % (type(e).__name__, e)
  finally:
    os.environ.clear()
    os.environ.update(saved)


def _show_envs(title, envs):
  """Prints one line per environment, then the ClusterSpec they agree on."""
  first = envs[0]
  print('== %s: SLURM_STEP_NODELIST=%s SLURM_STEP_TASKS_PER_NODE=%s '
        'SLURM_DISTRIBUTION=%s' %
        (title, first.get('SLURM_STEP_NODELIST', '(not set)'),
         first.get('SLURM_STEP_TASKS_PER_NODE', '(not set)'),
         first.get('SLURM_DISTRIBUTION', '(default block)')))
  print(_ROW % ('rank', 'node', 'task', 'address', 'GPUs from Slurm',
                'GPUs used'))
  specs = []
  for env in envs:
    resolver, gpus = _resolve_in(env)
    if resolver is None:
      print('  %-5s %-8s cannot resolve: %s' %
            (env.get('SLURM_PROCID', '-'), env.get('SLURMD_NODENAME', '-'),
             gpus))
      continue
    print(_ROW % (env['SLURM_PROCID'], env['SLURMD_NODENAME'],
                  '%s:%d' % resolver.get_task_info(),
                  resolver.master(rpc_layer=None).split('://')[-1],
                  env.get('CUDA_VISIBLE_DEVICES', '-'),
                  '-' if gpus is None else gpus or "''"))
    specs.append(resolver.cluster_spec().as_dict())
  if specs:
    same = all(spec == specs[0] for spec in specs)
    print('  ClusterSpec%s: %s' %
          ('' if same else ' (DIFFERS between tasks; first)', specs[0]))


def show(folder):
  """Prints what every task of the step or job recorded in `folder` gets."""
  if not os.path.isdir(folder):
    raise SystemExit('error: %s is not a folder' % folder)
  if not _show_tree(folder.rstrip('/')):
    raise SystemExit('error: %s holds no <SLURM_PROCID>.env, batch.env, '
                     'salloc.env or step folder' % folder)


def _show_tree(folder):
  """Shows `folder` and its step subfolders; False if it holds none."""
  title = os.path.relpath(folder, _FIXTURES)
  if title.startswith('..'):
    title = folder
  tasks = recorded_steps.task_files(folder)
  if tasks:
    _show_envs(title, [
        recorded_steps.with_hostfile(recorded_steps.read_env(path), folder)
        for path in tasks
    ])
  found = bool(tasks)
  # A job: the batch script's or the salloc shell's environment, then steps.
  for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if name.endswith('.env') and not name[0].isdigit():
      _show_envs('%s/%s (the %s, not a step)' %
                 (title, name, 'salloc shell' if name.startswith('salloc')
                  else 'batch script' if name.startswith('batch')
                  else 'process'),
                 [recorded_steps.with_hostfile(recorded_steps.read_env(path),
                                               folder)])
      found = True
  for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if os.path.isdir(path) and _show_tree(path):
      found = True
  return found


def main(argv):
  if argv[1:] == ['--all']:
    folders = [os.path.join(_FIXTURES, n) for n in sorted(os.listdir(_FIXTURES))
               if os.path.isdir(os.path.join(_FIXTURES, n))]
  else:
    folders = argv[1:] or [os.path.join(_FIXTURES, s) for s in _DEFAULT_STEPS]
  for folder in folders:
    show(folder)


if __name__ == '__main__':
  main(sys.argv)
