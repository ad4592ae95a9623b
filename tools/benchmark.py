"""Times SlurmClusterResolver against its performance goals.

Usage (repository root on PYTHONPATH, so that the repository's resolver
replaces pip TensorFlow's):
  PYTHONPATH=. .venv/bin/python tools/benchmark.py [--repeats N]
      [--only hostlist]

Not a test: it prints figures and checks them against the goals (PASS/MISS),
and exits 0 unless something breaks. For each step shape of 65,536 tasks
(nodes `n[00001-NNNNN]`, a middle rank, and the per-task variables srun
sets), with default arguments (auto_set_gpu=False, so that nothing is
written), once with GPUs (`CUDA_VISIBLE_DEVICES` of 4 or 8 per node) and once
CPU-only, it times construction + the first `cluster_spec()` against the
floor, `ClusterSpec(d)` from the same cluster as a finished dict, in rounds
whose order rotates, each run once after `gc.collect()` and once with the
collector left as it is; a ratio is the median of the ratios within a round,
with its min-max. It also times `import tensorflow` in a new Python (once
before each shape), a repeated `cluster_spec()`, the growth with the step's size, TensorFlow
2.21's `expand_hostlist` (pip TensorFlow's own module) against ours, and the
refusal of hostile hostlists.
"""

import argparse
import collections
import gc
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from unittest import mock

import tensorflow as tf
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as ours
from tensorflow.python.training.server_lib import ClusterSpec

_TASKS = 65536
# (name, nodes, tasks per node, distribution, GPUs per node when with GPUs,
# heterogeneous components as node counts, or None).
Shape = collections.namedtuple(
    'Shape', ['name', 'nodes', 'per_node', 'distribution', 'gpus', 'het'])
_SHAPES = (
    Shape('65,536 nodes x 1', 65536, 1, None, 4, None),
    Shape('16,384 x 4 block', 16384, 4, None, 4, None),
    Shape('8,192 x 8 block', 8192, 8, None, 8, None),
    Shape('16,384 x 4 cyclic', 16384, 4, 'cyclic', 4, None),
    Shape('het 4,096 + 12,288 x 4', 16384, 4, None, 4, (4096, 12288)),
)
_GROWTH_TASKS = (4096, 32768, 65536, 262144)
_HOSTLISTS = (
    ('one range', 'n[00000-65535]'),
    ('four groups', 'n[00000-16383],gpu[1-16384],rack1-node[100000-116383],'
     'm[00001-16384]'),
    ('65,536 single numbers', 'n[%s]' % ','.join(
        str(2 * i) for i in range(65536))),
    ('32,768 items r<i>[1-2]', ','.join(
        'r%d[1-2]' % i for i in range(32768))),
)
# Each is refused before anything large is built: a range of 10**9 hosts,
# and two groups whose product is 2**32 names.
_HOSTILE_HOSTLISTS = ('n[0-999999999]', 'a[0-65535]b[0-65535]')

# The goals (issue 31).
_MAX_OVER_FLOOR = 2.0
_MAX_OVER_IMPORT = 0.05
_MAX_REPEATED_OVER_FIRST = 0.05
_MAX_EXPAND_OVER_TF = 1.25
_MAX_GROWTH = 1.5
_MAX_HOSTILE_SECS = 1e-3


def _load_tf_module():
  """Imports TensorFlow 2.21's own slurm_cluster_resolver.py by path."""
  path = os.path.join(os.path.dirname(tf.__file__), 'python', 'distribute',
                      'cluster_resolver', 'slurm_cluster_resolver.py')
  spec = importlib.util.spec_from_file_location('tf_shipped_slurm_resolver',
                                                path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _step_env(shape, with_gpus, nodes=None):
  """The environment srun gives a middle task of a step of `shape`."""
  nodes = nodes or shape.nodes
  per_node = shape.per_node
  tasks = nodes * per_node
  rank = tasks // 2 + 3
  if shape.distribution == 'cyclic':
    node, local = rank % nodes, rank // nodes
    gtids = [node + k * nodes for k in range(per_node)]
  else:
    node, local = divmod(rank, per_node)
    gtids = list(range(node * per_node, (node + 1) * per_node))
  env = {
      'SLURM_JOB_ID': '4242',
      'SLURM_STEP_ID': '0',
      'SLURM_PROCID': str(rank),
      'SLURM_STEP_NODELIST': 'n[00001-%05d]' % nodes,
      'SLURM_STEP_TASKS_PER_NODE': '%d(x%d)' % (per_node, nodes),
      'SLURM_STEP_NUM_TASKS': str(tasks),
      'SLURMD_NODENAME': 'n%05d' % (node + 1),
      'SLURM_NODEID': str(node),
      'SLURM_LOCALID': str(local),
      'SLURM_GTIDS': ','.join(map(str, gtids)),
  }
  if shape.distribution:
    env['SLURM_DISTRIBUTION'] = shape.distribution
  if shape.het:
    first = shape.het[0]
    env.update(SLURM_HET_SIZE='2', SLURM_DISTRIBUTION='block',
               SLURM_JOB_NODELIST_HET_GROUP_0='n[00001-%05d]' % first,
               SLURM_JOB_NODELIST_HET_GROUP_1='n[%05d-%05d]' % (first + 1,
                                                               nodes))
  if with_gpus:
    gpus = ','.join(map(str, range(shape.gpus)))
    env.update(CUDA_VISIBLE_DEVICES=gpus, GPU_DEVICE_ORDINAL=gpus,
               SLURM_STEP_GPUS=gpus, SLURM_GPUS_ON_NODE=str(shape.gpus))
  return env


def _args(shape):
  args = {'auto_set_gpu': False}
  if shape.het:
    args['het_jobs'] = ['ps', 'worker']
  return args


def _timed(function, collect):
  """Returns (seconds, result) of one call, after a collection if asked."""
  if collect:
    gc.collect()
  start = time.perf_counter()
  result = function()
  return time.perf_counter() - start, result


def _resolve(resolver_class, args):
  resolver = resolver_class(**args)
  resolver.cluster_spec()
  return resolver


def _ratio(numerators, denominators):
  """(median, min, max) of the ratios of runs of the same round."""
  ratios = [n / d for n, d in zip(numerators, denominators)]
  return statistics.median(ratios), min(ratios), max(ratios)


def _time_shape(shape, with_gpus, repeats, nodes=None):
  """Times ours and the floor on one step; returns the figures."""
  args = _args(shape)
  with mock.patch.dict(os.environ, _step_env(shape, with_gpus, nodes),
                       clear=True), mock.patch.object(ours, 'logging'):
    resolver = _resolve(ours.SlurmClusterResolver, args)
    spec = resolver.cluster_spec()
    cluster = spec.as_dict()
    floor_spec = ClusterSpec(cluster)
    if (spec != floor_spec or
        spec.as_cluster_def() != floor_spec.as_cluster_def()):
      sys.exit('error: %s: the ClusterSpec differs from ClusterSpec(dict)' %
               shape.name)
    candidates = [
        ('ours', lambda: _resolve(ours.SlurmClusterResolver, args)),
        ('floor', lambda: ClusterSpec(cluster)),
    ]
    result = {}
    for collect in (True, False):
      times = collections.defaultdict(list)
      for repeat in range(repeats):
        # The order alternates from round to round: what runs just before a
        # timed call (and what memory it has just given back) changes its
        # time.
        turn = repeat % len(candidates)
        for name, function in candidates[turn:] + candidates[:turn]:
          times[name].append(_timed(function, collect)[0])
      result['gc' if collect else 'nogc'] = {
          'ours': statistics.median(times['ours']),
          'floor': statistics.median(times['floor']),
          'over_floor': _ratio(times['ours'], times['floor']),
      }
    gc.collect()
    start = time.perf_counter()
    for _ in range(1000):
      resolver.cluster_spec()
    result['repeated'] = (time.perf_counter() - start) / 1000
  return result


def _time_import():
  """Seconds of `import tensorflow` in a new Python."""
  start = time.perf_counter()
  subprocess.run([sys.executable, '-c', 'import tensorflow'], check=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  return time.perf_counter() - start


def _time_expand(hostlist, tf_module, repeats):
  """Times both `expand_hostlist`s on `hostlist`; checks they agree."""
  if ours.expand_hostlist(hostlist) != tf_module.expand_hostlist(hostlist):
    sys.exit('error: the expansions of %r... differ' % hostlist[:40])
  ours_times, tf_times = [], []
  for _ in range(repeats):
    ours_times.append(_timed(lambda: ours.expand_hostlist(hostlist), True)[0])
    tf_times.append(_timed(lambda: tf_module.expand_hostlist(hostlist),
                           True)[0])
  return (statistics.median(ours_times), statistics.median(tf_times),
          _ratio(ours_times, tf_times))


def _rejection(hostlist, calls=200):
  """Median seconds of refusing `hostlist`."""
  times = []
  for _ in range(calls):
    start = time.perf_counter()
    try:
      ours.expand_hostlist(hostlist)
    except ValueError:
      pass
    else:
      sys.exit('error: %r was accepted' % hostlist)
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def _ms(seconds):
  return '%.1f' % (seconds * 1e3)


def _spread(ratio):
  return '%.2f (%.2f-%.2f)' % ratio


def _resolver_section(repeats):
  """Times construction and growth; returns their goals (name, value, ok)."""
  print()
  print('Construction + first cluster_spec() at %d tasks, default arguments:'
        % _TASKS)
  row = '%-24s %-4s %-5s | %7s %7s %s'
  print(row % ('step', 'GPUs', 'gc', 'ours', 'floor', 'ours/floor'))
  worst_over_floor = worst_ours = worst_repeated = 0
  import_times = []
  for shape in _SHAPES:
    # One import per shape, so that the load the shapes meet meets it too.
    import_times.append(_time_import())
    for with_gpus in (True, False):
      result = _time_shape(shape, with_gpus, repeats)
      worst_repeated = max(worst_repeated,
                           result['repeated'] / result['gc']['ours'])
      for key in ('gc', 'nogc'):
        figures = result[key]
        worst_over_floor = max(worst_over_floor, figures['over_floor'][0])
        worst_ours = max(worst_ours, figures['ours'])
        print(row % (shape.name, shape.gpus if with_gpus else '-',
                     'yes' if key == 'gc' else 'no', _ms(figures['ours']),
                     _ms(figures['floor']), _spread(figures['over_floor'])))
  import_secs = statistics.median(import_times)
  print('import tensorflow in a new Python: %.2f s (median of %d, one before '
        'each step)' % (import_secs, len(import_times)))
  print()
  print('Growth (8,192-node shape scaled: 8 tasks per node, block, 8 GPUs, '
        'gc before each run):')
  growth = []
  for tasks in _GROWTH_TASKS:
    result = _time_shape(_SHAPES[2], True, max(3, repeats // 3),
                         nodes=tasks // 8)
    growth.append(result['gc']['ours'] / tasks)
    print('  %7d tasks: ours %7s ms, %.2f us per task, floor %7s ms' %
          (tasks, _ms(result['gc']['ours']), result['gc']['ours'] / tasks *
           1e6, _ms(result['gc']['floor'])))
  return [
      ('construction + first cluster_spec() <= %.1fx the floor (worst)' %
       _MAX_OVER_FLOOR, '%.2fx' % worst_over_floor,
       worst_over_floor <= _MAX_OVER_FLOOR),
      ('... <= %d%% of import tensorflow (worst)' % (_MAX_OVER_IMPORT * 100),
       '%.1f%%' % (worst_ours / import_secs * 100),
       worst_ours <= _MAX_OVER_IMPORT * import_secs),
      ('repeated cluster_spec() <= %d%% of the first (worst)' %
       (_MAX_REPEATED_OVER_FIRST * 100), '%.4f%%' % (worst_repeated * 100),
       worst_repeated <= _MAX_REPEATED_OVER_FIRST),
      ('time per task at 262,144 <= %.1fx at 4,096 (linear)' % _MAX_GROWTH,
       '%.2fx' % (growth[-1] / growth[0]),
       growth[-1] / growth[0] <= _MAX_GROWTH),
  ]


def _hostlist_section(tf_module, repeats):
  """Times expand_hostlist and hostile hostlists; returns their goals."""
  print()
  print('expand_hostlist, ours against TF 2.21 (gc before each run):')
  worst_expand = 0
  for name, hostlist in _HOSTLISTS:
    ours_secs, tf_secs, ratio = _time_expand(hostlist, tf_module, repeats)
    worst_expand = max(worst_expand, ratio[0])
    print('  %-24s ours %6s ms, TF 2.21 %6s ms: ours/TF %s' %
          (name, _ms(ours_secs), _ms(tf_secs), _spread(ratio)))
  print()
  print('Hostile hostlists, refused with ValueError (median of 200 calls):')
  hostile = [_rejection(hostlist) for hostlist in _HOSTILE_HOSTLISTS]
  for hostlist, seconds in zip(_HOSTILE_HOSTLISTS, hostile):
    print('  %-22s %.1f us' % (hostlist, seconds * 1e6))
  return [
      ('expand_hostlist <= %.2fx TF 2.21 on every shape (worst)' %
       _MAX_EXPAND_OVER_TF, '%.2fx' % worst_expand,
       worst_expand <= _MAX_EXPAND_OVER_TF),
      ('hostile hostlists refused in < 1 ms (worst)',
       '%.1f us' % (max(hostile) * 1e6), max(hostile) < _MAX_HOSTILE_SECS),
  ]


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--repeats', type=int, default=11,
                      help='runs per figure (default 11)')
  parser.add_argument('--only', choices=['hostlist'],
                      help='run only this section and its goals')
  args = parser.parse_args()
  started = time.perf_counter()
  print('SlurmClusterResolver benchmark: Python %s, TensorFlow %s, %d CPUs, '
        'load average %.2f at start' %
        (platform.python_version(), tf.__version__, os.cpu_count(),
         os.getloadavg()[0]))
  print('Times in ms, medians of %d rounds (order rotating); ratios: median '
        '(min-max) over the rounds.' % args.repeats)
  targets = []
  if args.only != 'hostlist':
    targets += _resolver_section(args.repeats)
  targets += _hostlist_section(_load_tf_module(), args.repeats)
  print()
  print('Goals:')
  for name, value, ok in targets:
    print('  %-64s %10s  %s' % (name, value, 'PASS' if ok else 'MISS'))
  print('Ran in %.0f s; load average %.2f at the end.' %
        (time.perf_counter() - started, os.getloadavg()[0]))
  return 0


if __name__ == '__main__':
  sys.exit(main())
