"""Replays recorded Slurm steps with this resolver and with stock TensorFlow's.

Usage (tools/demo.sh runs it with the repository's .venv):
  .venv/bin/python tools/demo_replay.py [FOLDER ... | --all]

A folder holds the environment of every task of one real Slurm step,
`<SLURM_PROCID>.env` (tests/fixtures/slurm-env, tests/fixtures/launchers), or,
for a batch job or an allocation, the batch script's `batch.env` or the
`salloc` shell's `salloc.env` and a subfolder per step. Each environment is
put in place in turn, as the whole of `os.environ`, with `PATH` naming an
empty folder (no `nvidia-smi`, as on the recorded nodes). Then:

- this repository's resolver: `tf.distribute.cluster_resolver.
  SlurmClusterResolver()`, what `srun python train.py` gets with the
  package installed;
- stock TensorFlow's resolver: the module of the installed pip TensorFlow,
  loaded from its file under another module name (the package serves the
  repository's resolver under TensorFlow's name), created with default
  arguments, then `cluster_spec()`, as a strategy calls it.

One line per task: the node Slurm ran it on, then each resolver's task,
address and GPUs (`CUDA_VISIBLE_DEVICES` after it; `-`: unset). Where stock
TensorFlow raises with its default arguments only because it counts GPUs
(no GPU on a CPU-only step: TensorFlow issue #56894), its column shows what
it builds when given the GPU counts (`gpus_per_node` = the busiest node's
tasks, `gpus_per_task=1`, `auto_set_gpu=False`), marked `*`, so that its
task placement can be seen; the error is printed below the table.
`<- not its node` marks an address on another node than the one the task
runs on; `<- not Slurm's` GPUs that Slurm did not give the task.
Without arguments, a few steps are shown; `--all` shows every folder of
tests/fixtures/slurm-env.
"""

import collections
import contextlib
import importlib.util
import logging
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)  # tests.fixtures, after the installed packages

# pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf
from tests.fixtures import recorded_steps
# pylint: enable=g-import-not-at-top,wrong-import-position

FIXTURES = recorded_steps.FIXTURES
LAUNCHERS = os.path.join(ROOT, 'tests', 'fixtures', 'launchers')
DEFAULT_STEPS = (
    os.path.join(LAUNCHERS, 'srun-N3-n5-pmi2'),
    os.path.join(FIXTURES, 'n5-N2-cyclic'),
    os.path.join(FIXTURES, 'N1-ntpn2-gpus-per-task2'),
    os.path.join(FIXTURES, 'N2-ntpn2-gpus-per-task1'),
    os.path.join(FIXTURES, 'het-N1n1-N2n3-gpu'),
)
STOCK_LABEL = 'stock TensorFlow %s' % tf.__version__
_ROW = '  %-4s %-7s | %-10s %-13s %-7s | %-11s %-13s %-7s %s'
_HEAD = '  %-4s %-7s | %-32s | %s'
_NO_PROGRAMS = tempfile.mkdtemp(prefix='demo-replay-path.')

Result = collections.namedtuple('Result',
                                'task address gpus spec error notes')


def load_stock_module():
  """Stock TensorFlow's slurm_cluster_resolver.py, from pip's own file."""
  path = os.path.join(os.path.dirname(tf.__file__), 'python', 'distribute',
                      'cluster_resolver', 'slurm_cluster_resolver.py')
  # pylint: disable=g-import-not-at-top
  from tensorflow.python.util import tf_export
  # Its @tf_export would register its class under TensorFlow's public name.
  names = getattr(tf_export, '_NAME_TO_SYMBOL_MAPPING', {})
  saved = dict(names)
  spec = importlib.util.spec_from_file_location(
      'stock_tensorflow_slurm_cluster_resolver', path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  names.clear()
  names.update(saved)
  return module


@contextlib.contextmanager
def task_environment(env):
  """`env` as the whole environment, without programs; restored after."""
  saved = dict(os.environ)
  os.environ.clear()
  os.environ.update(env)
  os.environ['PATH'] = _NO_PROGRAMS
  try:
    yield
  finally:
    os.environ.clear()
    os.environ.update(saved)


class _Collect(logging.Handler):

  def __init__(self):
    super().__init__(logging.WARNING)
    self.messages = []

  def emit(self, record):
    self.messages.append(record.getMessage())


@contextlib.contextmanager
def collected_warnings():
  """TensorFlow's log warnings, collected instead of printed."""
  logger = logging.getLogger('tensorflow')
  handlers, propagate = logger.handlers[:], logger.propagate
  collect = _Collect()
  logger.handlers[:] = [collect]
  logger.propagate = False
  try:
    yield collect.messages
  finally:
    logger.handlers[:] = handlers
    logger.propagate = propagate


def _print_row(*columns):
  print((_ROW % columns).rstrip())


def _error(e):
  return '%s: %s' % (type(e).__name__, e)


def resolve(make):
  """Result of `make()` (a resolver) in the environment set up around it."""
  with collected_warnings() as notes:
    try:
      resolver = make()
      spec = resolver.cluster_spec().as_dict()
      task_type, task_id = resolver.get_task_info()
      address = (spec[task_type][task_id] if task_type in spec and
                 task_id is not None and task_id < len(spec[task_type])
                 else None)
      task = None if task_type is None else '%s:%s' % (task_type, task_id)
      return Result(task, address, os.environ.get('CUDA_VISIBLE_DEVICES'),
                    spec, None, notes)
    except Exception as e:  # pylint: disable=broad-except
      return Result(None, None, None, None, _error(e), notes)


def _busiest_node_tasks(env):
  counts = env.get('SLURM_STEP_TASKS_PER_NODE') or env.get(
      'SLURM_TASKS_PER_NODE', '1')
  return max(int(re.match(r'\d+', c).group()) for c in counts.split(','))


def _gpu_count_error(error):
  return error and (
      "'nvidia-smi'" in error or 'range() arg 3 must not be zero' in error or
      'Requested more GPUs per node' in error)


def _gpus(value):
  return '-' if value is None else value or "''"


def _marks(env, result):
  """Why stock TensorFlow's result for this task is wrong, or ''."""
  marks = []
  node = env.get('SLURMD_NODENAME')
  if result.address and node and result.address.rsplit(':', 1)[0] != node:
    marks.append('<- not its node')
  slurm_gpus = env.get('CUDA_VISIBLE_DEVICES')
  if (result.gpus and slurm_gpus is not None and
      not set(result.gpus.split(',')) <= set(slurm_gpus.split(','))):
    marks.append("<- not Slurm's GPUs (%s)" % (slurm_gpus or "''"))
  return ' '.join(marks)


def show_envs(stock, title, envs):
  """One line per task, then what differs from stock TensorFlow."""
  print()
  print('== %s' % title)
  first = envs[0]
  print('   SLURM_STEP_NODELIST=%s SLURM_STEP_TASKS_PER_NODE=%s '
        'SLURM_DISTRIBUTION=%s' %
        (first.get('SLURM_STEP_NODELIST', '(not set)'),
         first.get('SLURM_STEP_TASKS_PER_NODE', '(not set)'),
         first.get('SLURM_DISTRIBUTION', '(not set: block)')))
  print(_HEAD % ('', '', 'this resolver', STOCK_LABEL))
  _print_row('rank', 'node', 'task', 'address', 'GPUs', 'task', 'address',
             'GPUs', '')
  ours_specs, stock_specs, errors, notes = [], [], [], []
  for env in envs:
    rank = env.get('SLURM_PROCID', '-')
    with task_environment(env):
      ours = resolve(tf.distribute.cluster_resolver.SlurmClusterResolver)
    with task_environment(env):
      theirs = resolve(stock.SlurmClusterResolver)
    star = ''
    if theirs.error:
      errors.append((rank, theirs.error))
      if _gpu_count_error(theirs.error):
        count = _busiest_node_tasks(env)
        with task_environment(env):
          theirs = resolve(lambda c=count: stock.SlurmClusterResolver(
              gpus_per_node=c, gpus_per_task=1, auto_set_gpu=False))
        star = '*'
    notes.extend('this resolver logs, rank %s: %s' % (rank, n)
                 for n in ours.notes)
    node = env.get('SLURMD_NODENAME', '-')
    if ours.error:
      left = ('raises', '', '')
    else:
      left = (ours.task, ours.address, _gpus(ours.gpus))
      ours_specs.append(ours.spec)
    if theirs.error:
      right = ('raises', '', '', '')
    else:
      right = ((theirs.task or '-') + star, theirs.address or '-',
               '*' if star else _gpus(theirs.gpus), _marks(env, theirs))
      stock_specs.append(theirs.spec)
    _print_row(*((rank, node) + left + right))
    if ours.error:
      notes.append('this resolver, rank %s: %s' % (rank, ours.error))
  _print_summary(ours_specs, stock_specs, errors, notes, envs)


def _one(specs):
  if not specs:
    return None
  return specs[0] if all(s == specs[0] for s in specs) else 'differs'


def _print_summary(ours_specs, stock_specs, errors, notes, envs):
  """The ClusterSpecs, stock TensorFlow's errors, the resolver's warnings."""
  ours, theirs = _one(ours_specs), _one(stock_specs)
  if ours is not None:
    print('   ClusterSpec, this resolver: %s' %
          ('DIFFERS between tasks' if ours == 'differs' else ours))
  if theirs is not None:
    print('   ClusterSpec, %s%s: %s' % (
        STOCK_LABEL, ' (*)' if errors else '',
        'the same' if theirs == ours else
        'DIFFERS between tasks' if theirs == 'differs' else theirs))
  by_error = collections.OrderedDict()
  for rank, error in errors:
    by_error.setdefault(error, []).append(rank)
  for error, ranks in by_error.items():
    who = ('every task' if len(ranks) == len(envs) else
           'rank%s %s' % ('s' if len(ranks) > 1 else '', ','.join(ranks)))
    print('   %s, %s: %s' % (STOCK_LABEL, who, error))
  if any(_gpu_count_error(e) for e, _ in by_error.items()):
    print('   (*) given gpus_per_node=<busiest node\'s tasks>, '
          'gpus_per_task=1, auto_set_gpu=False, which avoids that error')
  for note in collections.OrderedDict.fromkeys(notes):
    print('   %s' % note)


def _commands():
  """{folder relative to tests/fixtures: the command that recorded it}."""
  commands = {}
  for base, readme in ((FIXTURES, 'README.txt'), (LAUNCHERS, 'README.txt')):
    path = os.path.join(base, readme)
    if not os.path.isfile(path):
      continue
    with open(path) as f:
      lines = f.read().splitlines()
    for i, line in enumerate(lines):
      match = re.match(r'^  (\S+):\s*(.*)$', line)
      if not match:
        continue
      command = match.group(2).strip()
      if not command and i + 1 < len(lines):
        command = lines[i + 1].strip()
      if command.startswith(('srun', 'sbatch', 'salloc', 'SLURM_')):
        key = os.path.join(os.path.basename(base), match.group(1))
        commands[key] = ' '.join(command.split())
  return commands


_COMMANDS = _commands()


def _title(folder, what=None):
  """The folder, and the command that recorded it (or `what` it is)."""
  key = os.path.relpath(os.path.abspath(folder),
                        os.path.join(ROOT, 'tests', 'fixtures'))
  command = _COMMANDS.get(key)
  if command:
    return '%s: %s' % (key, command)
  return '%s (%s)' % (key, what) if what else key


def show(stock, folder):
  """Shows the step, batch script or allocation recorded in `folder`."""
  if not os.path.isdir(folder):
    raise SystemExit('error: %s is not a folder' % folder)
  if not _show_tree(stock, folder.rstrip('/')):
    raise SystemExit('error: %s holds no <SLURM_PROCID>.env, batch.env, '
                     'salloc.env or step folder' % folder)


def _show_tree(stock, folder):
  tasks = recorded_steps.task_files(folder)
  if tasks:
    show_envs(stock, _title(folder), [
        recorded_steps.with_hostfile(recorded_steps.read_env(path), folder)
        for path in tasks
    ])
  found = bool(tasks)
  for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if name.endswith('.env') and not name[0].isdigit():
      what = ('the salloc shell' if name.startswith('salloc') else
              'the batch script' if name.startswith('batch') else 'a process')
      show_envs(stock, _title(path, what + ', not a step'),
                [recorded_steps.with_hostfile(recorded_steps.read_env(path),
                                              folder)])
      found = True
  for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if os.path.isdir(path) and _show_tree(stock, path):
      found = True
  return found


def main(argv):
  if argv[1:] == ['--all']:
    folders = [os.path.join(FIXTURES, n) for n in sorted(os.listdir(FIXTURES))
               if os.path.isdir(os.path.join(FIXTURES, n))]
  else:
    folders = argv[1:] or list(DEFAULT_STEPS)
  stock = load_stock_module()
  ours = sys.modules[
      tf.distribute.cluster_resolver.SlurmClusterResolver.__module__]
  print('Every recorded task, resolved by')
  print('  this resolver:    %s' % os.path.relpath(ours.__file__, ROOT))
  print('  %-17s %s' % (STOCK_LABEL + ':', os.path.relpath(stock.__file__,
                                                           ROOT)))
  for folder in folders:
    show(stock, folder)
  os.rmdir(_NO_PROGRAMS)


if __name__ == '__main__':
  main(sys.argv)
