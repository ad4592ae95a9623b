"""Times SlurmClusterResolver against TensorFlow 2.21's shipped resolver.

Usage (repository root on PYTHONPATH, so that the repository's resolver
replaces pip TensorFlow's):
  PYTHONPATH=. .venv/bin/python tools/benchmark.py [--repeats N]

Not a test: it prints figures and checks them against the performance
targets (PASS/MISS), and always exits 0 unless something breaks. On synthetic
block-distributed steps of 4,096, 32,768 and 65,536 tasks (nodes
`n[00001-NNNNN]`, 8 tasks each, SLURM_PROCID a middle rank, and the per-task
variables srun sets: SLURMD_NODENAME, SLURM_NODEID, SLURM_LOCALID,
SLURM_GTIDS), it times, for this repository's resolver and TensorFlow 2.21's
(loaded from pip TensorFlow's file under another module name):

- construction + the first `cluster_spec()` (TensorFlow 2.21 builds the
  cluster lazily, in `cluster_spec()`, so only the sum compares fairly);
- a repeated `cluster_spec()` call;
- the floor: `ClusterSpec(d)` from the finished dict alone, which any
  resolver pays;

and further `expand_hostlist` on 65,536 names, the rejection of hostile
hostlists (time, and the tracemalloc peak during it), and one
`scontrol show hostnames` where Slurm is installed (always with SLURM_CONF
pointing at a two-line file, so that scontrol contacts nothing).

Both resolvers get the same arguments: gpus_per_node=8, gpus_per_task=1,
auto_set_gpu=False (so that neither runs nvidia-smi or writes
CUDA_VISIBLE_DEVICES; TensorFlow 2.21 fails with gpus_per_task=0), and must
produce the same ClusterSpec and task. Every time is the median (and min) of
`--repeats` runs, each after gc.collect(). The runs of the two resolvers and
the floor are interleaved, and a ratio is the median of the ratios of runs
made one after the other, so that a change in the machine's load hits both
sides alike.
"""

import argparse
import gc
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from unittest import mock

import tensorflow as tf
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as ours
from tensorflow.python.training.server_lib import ClusterSpec

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TASKS_PER_NODE = 8
_STEP_SIZES = (4096, 32768, 65536)
_RESOLVER_ARGS = dict(gpus_per_node=8, gpus_per_task=1, auto_set_gpu=False)
# 65,536 names each: one bracket range, and a list of several items.
_HOSTLISTS = (
    'n[00000-65535]',
    'n[00000-16383],gpu[1-16384],rack1-node[100000-116383],m[00001-16384]',
)
# Each is refused before anything large is built: a range of 10**9 hosts,
# and two groups whose product is 2**32 names.
_HOSTILE_HOSTLISTS = ('n[0-999999999]', 'a[0-65535]b[0-65535]')
_SCONTROL_HOSTLIST = 'n[00000-65535]'
_SCONTROL_TIMEOUT_SECS = 60

# Targets (from the issue).
_MAX_FIRST_OVER_FLOOR = 1.15  # At 65,536 tasks.
_MAX_REPEATED_OVER_FIRST = 0.05
_MAX_EXPAND_OVER_TF = 0.6
_MAX_HOSTILE_SECS = 1e-3
_MAX_HOSTILE_PEAK_BYTES = 64 * 1024
_MAX_TOTAL_SECS = 120


def _load_tf_resolver():
  """Imports TensorFlow 2.21's own slurm_cluster_resolver.py by path."""
  path = os.path.join(os.path.dirname(tf.__file__), 'python', 'distribute',
                      'cluster_resolver', 'slurm_cluster_resolver.py')
  if os.path.realpath(path) == os.path.realpath(ours.__file__):
    sys.exit('error: %s is the repository\'s resolver; run with PYTHONPATH '
             'set to the repository root' % path)
  spec = importlib.util.spec_from_file_location('tf_shipped_slurm_resolver',
                                                path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _step_env(num_tasks):
  """The environment srun gives a middle task of a block-distributed step."""
  num_nodes = num_tasks // _TASKS_PER_NODE
  rank = num_tasks // 2 + 3
  node = rank // _TASKS_PER_NODE
  first = node * _TASKS_PER_NODE
  return {
      'SLURM_JOB_ID': '4242',
      'SLURM_STEP_ID': '0',
      'SLURM_PROCID': str(rank),
      'SLURM_STEP_NODELIST': 'n[00001-%05d]' % num_nodes,
      'SLURM_STEP_TASKS_PER_NODE': '%d(x%d)' % (_TASKS_PER_NODE, num_nodes),
      'SLURM_STEP_NUM_TASKS': str(num_tasks),
      'SLURMD_NODENAME': 'n%05d' % (node + 1),
      'SLURM_NODEID': str(node),
      'SLURM_LOCALID': str(rank - first),
      'SLURM_GTIDS': ','.join(
          str(task) for task in range(first, first + _TASKS_PER_NODE)),
  }


def _timed(function):
  """Returns (seconds, result) of one call, after a garbage collection."""
  gc.collect()
  start = time.perf_counter()
  result = function()
  return time.perf_counter() - start, result


def _summary(times):
  return statistics.median(times), min(times)


def _paired_ratio(numerators, denominators):
  """The median of the ratios of runs made one after the other."""
  return statistics.median(n / d for n, d in zip(numerators, denominators))


def _first_spec(resolver_class):
  resolver = resolver_class(**_RESOLVER_ARGS)
  resolver.cluster_spec()
  return resolver


def _repeated_call_secs(resolver, calls):
  """The mean time of one `cluster_spec()` call over `calls` calls."""
  gc.collect()
  start = time.perf_counter()
  for _ in range(calls):
    resolver.cluster_spec()
  return (time.perf_counter() - start) / calls


def _time_step(num_tasks, tf_module, repeats):
  """Times both resolvers and the floor on one step.

  Returns:
    A dict: for each measure, (median, min) seconds; for each ratio, the
    median of the paired ratios.
  """
  times = {key: [] for key in ('ours', 'tf', 'floor', 'ours_again',
                               'tf_again')}
  with mock.patch.dict(os.environ, _step_env(num_tasks), clear=True):
    ours_resolver = _first_spec(ours.SlurmClusterResolver)
    tf_resolver = _first_spec(tf_module.SlurmClusterResolver)
    cluster = ours_resolver.cluster_spec().as_dict()
    if (tf_resolver.cluster_spec().as_dict() != cluster or
        tf_resolver.get_task_info() != ours_resolver.get_task_info()):
      sys.exit('error: the resolvers disagree on the %d-task step' % num_tasks)
    for _ in range(repeats):
      seconds, ours_resolver = _timed(
          lambda: _first_spec(ours.SlurmClusterResolver))
      times['ours'].append(seconds)
      seconds, tf_resolver = _timed(
          lambda: _first_spec(tf_module.SlurmClusterResolver))
      times['tf'].append(seconds)
      times['floor'].append(_timed(lambda: ClusterSpec(cluster))[0])
      times['ours_again'].append(_repeated_call_secs(ours_resolver, 1000))
      times['tf_again'].append(_repeated_call_secs(tf_resolver, 1))
  result = {key: _summary(values) for key, values in times.items()}
  result['ours/floor'] = _paired_ratio(times['ours'], times['floor'])
  result['ours/tf'] = _paired_ratio(times['ours'], times['tf'])
  result['again/first'] = _paired_ratio(times['ours_again'], times['ours'])
  return result


def _time_expand(hostlist, tf_module, repeats):
  """Times both `expand_hostlist`s on `hostlist`; checks they agree.

  Returns:
    ((median, min) seconds of ours, the same of TF 2.21's, the ratio).
  """
  if ours.expand_hostlist(hostlist) != tf_module.expand_hostlist(hostlist):
    sys.exit('error: the expansions of %r differ' % hostlist)
  ours_times, tf_times = [], []
  for _ in range(repeats):
    ours_times.append(_timed(lambda: ours.expand_hostlist(hostlist))[0])
    tf_times.append(_timed(lambda: tf_module.expand_hostlist(hostlist))[0])
  return (_summary(ours_times), _summary(tf_times),
          _paired_ratio(ours_times, tf_times))


def _rejection_secs(expand, hostlist, calls=200):
  """The median time of `expand(hostlist)` raising ValueError."""
  times = []
  for _ in range(calls):
    start = time.perf_counter()
    try:
      expand(hostlist)
    except ValueError:
      pass
    else:
      sys.exit('error: %r was accepted' % hostlist)
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def _rejection_peak_bytes(hostlist):
  """The tracemalloc peak while `expand_hostlist` rejects `hostlist`."""
  gc.collect()
  tracemalloc.start()
  try:
    ours.expand_hostlist(hostlist)
  except ValueError:
    pass
  peak = tracemalloc.get_traced_memory()[1]
  tracemalloc.stop()
  return peak


def _time_scontrol(hostlist):
  """Times one `scontrol show hostnames`; None without scontrol.

  SLURM_CONF names a file of two lines, so that scontrol reads no site
  configuration and looks nothing up: expanding a hostlist needs neither.

  Returns:
    (seconds, whether its output equals `expand_hostlist`'s), or None.
  """
  scontrol = shutil.which('scontrol')
  if scontrol is None:
    return None
  with tempfile.TemporaryDirectory() as folder:
    conf = os.path.join(folder, 'slurm.conf')
    with open(conf, 'w') as f:
      f.write('ClusterName=x\nSlurmctldHost=localhost\n')
    env = dict(os.environ, SLURM_CONF=conf)
    start = time.perf_counter()
    result = subprocess.run([scontrol, 'show', 'hostnames', hostlist],
                            env=env, capture_output=True, text=True,
                            timeout=_SCONTROL_TIMEOUT_SECS, check=False)
    seconds = time.perf_counter() - start
  same = (result.returncode == 0 and
          result.stdout.split() == ours.expand_hostlist(hostlist))
  return seconds, same


def _ms(seconds):
  return '%.2f' % (seconds * 1e3)


def _median_min(pair):
  return '%s (%s)' % (_ms(pair[0]), _ms(pair[1]))


def _verdict(ok):
  return 'PASS' if ok else 'MISS'


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--repeats', type=int, default=11,
                      help='runs per figure (default 11)')
  args = parser.parse_args()
  started = time.perf_counter()
  tf_module = _load_tf_resolver()
  print('SlurmClusterResolver benchmark: Python %s, TensorFlow %s, %d CPUs, '
        'load average %.2f at start' %
        (platform.python_version(), tf.__version__, os.cpu_count(),
         os.getloadavg()[0]))
  print('Times in ms, median (min) of %d runs; ratios: medians of paired '
        'runs.' % args.repeats)
  print()
  print('Steps: n[00001-NNNNN], %d tasks per node, block distribution, a '
        'middle rank;' % _TASKS_PER_NODE)
  print('both resolvers with %s.' %
        ', '.join('%s=%s' % item for item in _RESOLVER_ARGS.items()))
  header = '%6s | %-31s | %-18s | %-15s | %-10s | %s'
  row = '%6s | %-15s %-15s | %-9s %-8s | %-15s | %-10s | %s'
  print((header % ('', 'construction + first', 'repeated', 'floor:', '',
                   '')).rstrip())
  print((header % ('', 'cluster_spec()', 'cluster_spec()', 'ClusterSpec(d)',
                   '', '')).rstrip())
  print(row % ('tasks', 'ours', 'TF 2.21', 'ours (us)', 'TF 2.21', '',
               'ours/floor', 'ours/TF'))
  steps = {}
  for num_tasks in _STEP_SIZES:
    result = _time_step(num_tasks, tf_module, args.repeats)
    steps[num_tasks] = result
    print(row % (num_tasks, _median_min(result['ours']),
                 _median_min(result['tf']),
                 '%.2f' % (result['ours_again'][0] * 1e6),
                 _ms(result['tf_again'][0]), _median_min(result['floor']),
                 '%.3f' % result['ours/floor'], '%.2f' % result['ours/tf']))
  print()
  print('expand_hostlist, 65,536 names:')
  expand_ratios = []
  for hostlist in _HOSTLISTS:
    ours_time, tf_time, ratio = _time_expand(hostlist, tf_module,
                                             args.repeats)
    expand_ratios.append(ratio)
    print('  %s\n    ours %s, TF 2.21 %s: ours/TF %.2f' %
          (hostlist, _median_min(ours_time), _median_min(tf_time), ratio))
  print()
  print('Hostile hostlists, rejected with ValueError (median of 200 calls):')
  hostile = []
  for hostlist in _HOSTILE_HOSTLISTS:
    seconds = _rejection_secs(ours.expand_hostlist, hostlist)
    peak = _rejection_peak_bytes(hostlist)
    hostile.append((seconds, peak))
    print('  %-22s ours %.1f us, tracemalloc peak %d bytes' %
          (hostlist, seconds * 1e6, peak))
  print('  TF 2.21 rejects %s in %.1f us; it would expand %s into 10**9 '
        'names, so that one is not run.' %
        (_HOSTILE_HOSTLISTS[1],
         _rejection_secs(tf_module.expand_hostlist, _HOSTILE_HOSTLISTS[1]) *
         1e6, _HOSTILE_HOSTLISTS[0]))
  print()
  scontrol = _time_scontrol(_SCONTROL_HOSTLIST)
  if scontrol is None:
    print('scontrol: not installed, not timed.')
  else:
    ours_expand = _time_expand(_SCONTROL_HOSTLIST, tf_module,
                               args.repeats)[0][0]
    print('scontrol show hostnames %s, one call (SLURM_CONF of two lines): '
          '%s ms, %.1fx ours; same names: %s' %
          (_SCONTROL_HOSTLIST, _ms(scontrol[0]), scontrol[0] / ours_expand,
           'yes' if scontrol[1] else 'NO'))
  print()
  largest = steps[_STEP_SIZES[-1]]
  first_over_floor = largest['ours/floor']
  repeated = max(result['again/first'] for result in steps.values())
  worst_seconds = max(seconds for seconds, _ in hostile)
  worst_peak = max(peak for _, peak in hostile)
  total = time.perf_counter() - started
  targets = [
      ('first cluster_spec() <= %.2fx the floor at %d tasks' %
       (_MAX_FIRST_OVER_FLOOR, _STEP_SIZES[-1]),
       '%.3fx' % first_over_floor, first_over_floor <= _MAX_FIRST_OVER_FLOOR),
      ('repeated cluster_spec() <= %d%% of the first (worst step)' %
       (_MAX_REPEATED_OVER_FIRST * 100), '%.4f%%' % (repeated * 100),
       repeated <= _MAX_REPEATED_OVER_FIRST),
      ('expand_hostlist <= %.1fx TF 2.21 (worst list)' % _MAX_EXPAND_OVER_TF,
       '%.2fx' % max(expand_ratios),
       max(expand_ratios) <= _MAX_EXPAND_OVER_TF),
      ('hostile hostlists rejected in < 1 ms (worst)',
       '%.1f us' % (worst_seconds * 1e6), worst_seconds < _MAX_HOSTILE_SECS),
      ('... with a tracemalloc peak < %d KiB (worst)' %
       (_MAX_HOSTILE_PEAK_BYTES // 1024), '%d bytes' % worst_peak,
       worst_peak < _MAX_HOSTILE_PEAK_BYTES),
      ('the benchmark runs in < %d s' % _MAX_TOTAL_SECS, '%.0f s' % total,
       total < _MAX_TOTAL_SECS),
  ]
  print('Targets:')
  for name, value, ok in targets:
    print('  %-58s %12s  %s' % (name, value, _verdict(ok)))
  return 0


if __name__ == '__main__':
  sys.exit(main())
