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
"""Fuzzes SlurmClusterResolver from the recorded environments of real steps.

Every case takes one recorded step (fixtures/slurm-env), breaks the
environment of one task or of all of them (deleted variables, garbage values,
values from another task or step, hostile hostlists and hostfiles: a FIFO,
/dev/zero, random bytes, a sparse 10 GiB file...), picks constructor
arguments (good and bad), and resolves in each task. Each task must end
either

- in a resolution that passes the checks of fixture_layouts_test.py: its
  address is on its own node (SLURMD_NODENAME), the tasks agree on one
  cluster spec, addresses are distinct, GPUs stay within what Slurm gave; or
- in ValueError, RuntimeError or TypeError whose message names a variable or
  argument the case changed (or a variable read in place of a changed one):
  of the changed variables if they alone make the resolver fail, of the
  arguments given other values than their defaults if they alone do, of
  either if only both together do;

with os.environ unchanged on error, within `_CASE_SECONDS` and
`_CASE_BYTES` of Python memory (a guard that fails the case, not a
benchmark). Steps of many nodes that are valid are the benchmark's domain
(tools/benchmark.py): here hostlists are either small or far beyond the
limits, so that refusing them must be cheap.

The default run is deterministic (derandomized, a fixed number of cases).
To fuzz longer, with fresh random cases:

  SLURM_FUZZ_PROFILE=long SLURM_FUZZ_EXAMPLES=200000 \
      .venv/bin/python -m pytest -q tests/slurm_fuzz_test.py

The library reads neither variable; they only choose this test's Hypothesis
settings.
"""

import inspect
import io
import logging
import os
import random
import re
import signal
import sys
import tempfile
import tracemalloc
from unittest import mock

from absl.testing import absltest
import hypothesis
import hypothesis.configuration
from hypothesis import strategies as st

from tf_slurm import resolution
from tf_slurm import resolver as slurm_cluster_resolver
from tf_slurm import slurm_launcher
from tf_slurm import slurm_step
from tf_slurm import slurm_test_util
from tf_slurm import util
from tests.fixtures import recorded_steps
from tf_slurm import explain

if 'TEST_TMPDIR' in os.environ:
  # Under Bazel the runfiles tree is read-only: Hypothesis caches go here.
  hypothesis.configuration.set_hypothesis_home_dir(
      os.path.join(os.environ['TEST_TMPDIR'], '.hypothesis'))

with open(recorded_steps.hostfile(
    os.path.join(recorded_steps.FIXTURES, 'n5-arbitrary-hostfile'))) as _f:
  _ARBITRARY_HOSTFILE = _f.read()

# The guard of every resolution (one task of a case).
_CASE_SECONDS = 1.0
_CASE_BYTES = 16 * 1024 * 1024

hypothesis.settings.register_profile(
    'ci',
    derandomize=True,
    max_examples=int(os.environ.get('SLURM_FUZZ_EXAMPLES', '3000')),
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=list(hypothesis.HealthCheck))
hypothesis.settings.register_profile(
    'long',
    derandomize=False,
    max_examples=int(os.environ.get('SLURM_FUZZ_EXAMPLES', '100000')),
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=list(hypothesis.HealthCheck))
_SETTINGS = hypothesis.settings.get_profile(
    os.environ.get('SLURM_FUZZ_PROFILE', 'ci'))

# Every variable an srun task's resolver reads (not the MPI launchers'),
# with heterogeneous components 0 and 1.
_READ_VARIABLES = tuple(
    name.replace('<n>', str(component))
    for name in slurm_step.VARIABLES if name not in slurm_launcher.VARIABLES
    for component in ((0, 1) if '<n>' in name else (0,)))
_GPU_VARIABLES = ('CUDA_VISIBLE_DEVICES', 'GPU_DEVICE_ORDINAL',
                  'SLURM_STEP_GPUS', 'SLURM_JOB_GPUS')
# Those of them that say on their own which GPUs a task has.
_GPU_LISTS = ('CUDA_VISIBLE_DEVICES', 'SLURM_STEP_GPUS', 'SLURM_JOB_GPUS')
# A changed variable may make the resolver read another in its place: an
# error may then name that one.
_FALLBACKS = {
    'SLURM_STEP_NODELIST': ('SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE',
                            'SLURM_NTASKS', 'SLURM_GTIDS'),
    'SLURM_STEP_TASKS_PER_NODE': ('SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE',
                                  'SLURM_NTASKS', 'SLURM_GTIDS'),
    'SLURM_HET_SIZE': ('SLURM_PACK_SIZE',),
    'SLURM_PACK_SIZE': ('SLURM_HET_SIZE',),
    'CUDA_VISIBLE_DEVICES': _GPU_VARIABLES,
    'GPU_DEVICE_ORDINAL': _GPU_VARIABLES,
    'SLURM_STEP_GPUS': _GPU_VARIABLES,
}


_STEPS = {step: recorded_steps.task_envs(step)
          for step in recorded_steps.steps()}
_ALL_ENVS = [env for envs in _STEPS.values() for env in envs]


def _make_files(folder):
  """Creates the hostile (and one good) hostfiles; returns name -> path."""
  def path(name):
    return os.path.join(folder, name)
  def write(name, content):
    with open(path(name), 'wb') as f:
      f.write(content)
    return path(name)
  files = {
      'good': write('good', _ARBITRARY_HOSTFILE.encode()),
      'random_bytes': write('random_bytes',
                            random.Random(0).randbytes(4096)),
      'good_then_bytes': write('good_then_bytes',
                               _ARBITRARY_HOSTFILE.encode() + b'\xff\xfe'),
      'huge_hostlist': write('huge_hostlist', b'n[1-99999999999]\n' * 5),
      'many_lines': write('many_lines', b'n1\n' * (2 * 1024 * 1024)),
      'empty': write('empty', b''),
      'comments_only': write('comments_only', b'# n1\n' * 5),
      'dev_zero': '/dev/zero',
      'dev_null': '/dev/null',
      'missing': path('missing'),
      'directory': folder,
  }
  os.mkfifo(path('fifo'))
  files['fifo'] = path('fifo')
  with open(path('sparse'), 'wb') as f:
    f.truncate(10 * 1024**3)  # Sparse: costs no disk.
  files['sparse'] = path('sparse')
  for name, target in (('link_good', files['good']),
                       ('link_zero', '/dev/zero'), ('link_fifo', files['fifo']),
                       ('link_dangling', path('missing')),
                       ('link_loop', path('link_loop'))):
    os.symlink(target, path(name))
    files[name] = path(name)
  return files


_FILES_DIR = tempfile.TemporaryDirectory(prefix='slurm_fuzz_')
_FILES = _make_files(_FILES_DIR.name)

_HOSTILE_VALUES = (
    '', ' ', '-1', '+1', '0', '00', '1e3', '0x10', '1.5', '\u00b2', '\u0663',
    '9' * 5000, str(2**64), str(2**32), str(2**20), '65534', 'NoDevFiles',
    'n[1-2', 'n1]', 'n[2-1]', 'n[[1]]', 'n[]', 'n[1-99999999999999]',
    'n[0-65535]x[0-65535]', 'n[1-70000]', 'n[1-2],n1', ',,,', 'n[1-3]-ib',
    'n[' + ','.join(map(str, range(3000))) + ']', '[' * 1000, '1(x0)',
    '1(x99999999999)', '2(x2', '4(x2),', '70000', '0(x2)', '1-65535,1-65535',
    '12000,12000,12000,12000', '99999', 'plane', 'plane=0', 'plane=-1',
    'plane=99999999999999999999', 'cyclic:cyclic', 'arbitrary', 'block,Pack',
    'gpu:per_task:1', 'gpu:closest', 'gpu:', 'a100:4', 'a100:', '\u0000x',
    'gpu:none', 'gres/gpu:single:2', 'gpu:map_gpu:1,0x1*3', 'gpu:mask_gpu:f',
    'gpu:single:0', 'gpu:map_gpu:0x', 'gpu:mask_gpu:0,*2',
    '0,0', '0,,1', 'GPU-5c0b9c4e,MIG-1/0', '0 1', '\n', 'n1\nn2',
)


def _no_nul(text):
  return text.replace('\x00', '')


_GARBAGE = st.one_of(
    st.sampled_from(_HOSTILE_VALUES).map(_no_nul),
    st.text(max_size=24).map(_no_nul),
    st.integers(-3, 10**20).map(str),
    st.lists(st.integers(0, 70000), max_size=6).map(
        lambda ids: ','.join(map(str, ids))),
    st.builds('{}[{}-{}]'.format, st.sampled_from(['n', 'c', 'gpu']),
              st.integers(0, 12), st.integers(0, 12)),
)


@st.composite
def _mutation(draw, env):
  """One change to an environment: (kind, variable, new value or None)."""
  kind = draw(st.sampled_from(['delete', 'garbage', 'other', 'hostfile']))
  if kind == 'hostfile':
    return kind, 'SLURM_HOSTFILE', _FILES[draw(st.sampled_from(sorted(_FILES)))]
  # Half of the time one the resolver reads, else any of the task's.
  name = draw(st.one_of(st.sampled_from(_READ_VARIABLES),
                        st.sampled_from(sorted(env))))
  if kind == 'delete':
    return kind, name, None
  if kind == 'garbage':
    return kind, name, draw(_GARBAGE)
  # The value another task of any recorded step has: inconsistent pairs.
  other = draw(st.sampled_from(_ALL_ENVS))
  return kind, name, other.get(name, draw(_GARBAGE))


_JOB_NAME = st.one_of(st.sampled_from(['worker', 'ps', 'chief']),
                      st.text(max_size=6))
_COUNT = st.one_of(st.integers(-2, 12), st.integers(-2, 10**13),
                   st.sampled_from([True, 2.0, '2', None]))
_ARGUMENTS = {
    'jobs': st.one_of(st.none(), st.dictionaries(_JOB_NAME, _COUNT,
                                                 max_size=3),
                      st.sampled_from([['worker'], 'worker'])),
    'port_base': st.one_of(st.integers(-2, 70000),
                           st.sampled_from(['reserved', 'derived', 'auto', '',
                                            None, 8888.0, True, 10**30])),
    'gpus_per_node': _COUNT,
    'gpus_per_task': _COUNT,
    'tasks_per_node': st.one_of(
        _COUNT, st.dictionaries(st.sampled_from(['n1', 'n2', 'n3', 'c09', 1]),
                                _COUNT, max_size=3)),
    'auto_set_gpu': st.sampled_from([True, False, 'no', 0, None]),
    'rpc_layer': st.sampled_from(['grpc', None, '', 5, b'grpc']),
    'het_jobs': st.one_of(st.none(), st.lists(_JOB_NAME, max_size=3),
                          st.sampled_from(['ps', 2])),
}


@st.composite
def _cases(draw):
  """A recorded step, changes to its environments, constructor arguments."""
  step = draw(st.sampled_from(sorted(_STEPS)))
  envs = _STEPS[step]
  first = draw(st.integers(0, len(envs) - 1))
  changed = (range(len(envs)) if draw(st.booleans()) else [first])
  # The tasks to resolve: the first changed one, and up to two more.
  ranks = sorted({first} | set(draw(st.lists(
      st.integers(0, len(envs) - 1), max_size=2))))
  mutations = draw(st.lists(_mutation(envs[first]), max_size=3))
  names = draw(st.lists(st.sampled_from(sorted(_ARGUMENTS)), max_size=2,
                        unique=True))
  kwargs = {name: draw(_ARGUMENTS[name]) for name in names}
  return step, list(changed), ranks, mutations, kwargs


class _Hang(BaseException):
  """Raised by the guard's timer: not an Exception, so nothing catches it."""


def _on_timer(signum, frame):
  del signum, frame
  raise _Hang()


# The constructor's arguments that have defaults, and their defaults.
_DEFAULTS = {
    name: parameter.default for name, parameter in inspect.signature(
        slurm_cluster_resolver.SlurmClusterResolver).parameters.items()
    if parameter.default is not inspect.Parameter.empty
}


def _apply(env, mutations):
  """Returns `env` changed by `mutations`."""
  env = dict(env)
  for kind, name, value in mutations:
    if kind == 'hostfile':
      env['SLURM_DISTRIBUTION'] = 'arbitrary'
    if value is None:
      env.pop(name, None)
    else:
      env[name] = value
  return env


def _names(message):
  """Words of `message` that may be variable or argument names."""
  return set(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', message))


def _changed_variables(env, recorded):
  """The variables `env` changes from `recorded`, and those read instead."""
  names = set()
  for name in set(env) | set(recorded):
    if env.get(name) != recorded.get(name):
      names.add(name)
      names.update(_FALLBACKS.get(name, ()))
  return names


def _changed_arguments(kwargs):
  """The arguments `kwargs` gives another value than the default."""
  return {
      name for name, value in kwargs.items()
      if type(value) is not type(_DEFAULTS[name]) or value != _DEFAULTS[name]
  }


class SlurmFuzzTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    # The recorded steps had neither nvidia-smi nor scontrol, and no
    # slurm.conf of this machine is read.
    self.enter_context(mock.patch.object(
        util, 'run_command',
        side_effect=slurm_test_util.fake_run_command()))
    self.enter_context(mock.patch.object(
        resolution, '_gres_types', return_value=()))
    self.enter_context(mock.patch.dict(os.environ))
    self.addCleanup(signal.signal, signal.SIGALRM,
                    signal.signal(signal.SIGALRM, _on_timer))
    # Warnings of GPU sharing, a thousand times over, say nothing here.
    tf_logger = logging.getLogger('tensorflow')
    self.addCleanup(tf_logger.setLevel, tf_logger.level)
    tf_logger.setLevel(logging.ERROR)

  def resolve(self, env, kwargs):
    """Resolves in `env` under the guard; returns (resolver|error, env after).

    os.environ is a copy of `env` while the resolver runs (a dict: no
    putenv()), and is restored afterwards.
    """
    environ = dict(env)
    tracemalloc.start()
    signal.setitimer(signal.ITIMER_REAL, _CASE_SECONDS)
    try:
      try:
        with mock.patch.object(os, 'environ', environ):
          result = slurm_cluster_resolver.SlurmClusterResolver(**kwargs)
      except (ValueError, RuntimeError, TypeError) as e:
        result = e
      except _Hang:
        raise
      except BaseException as e:  # pylint: disable=broad-except
        self.fail('%s escaped: %r' % (type(e).__name__, e))
    except _Hang:
      self.fail('did not end within %s s' % _CASE_SECONDS)
    finally:
      signal.setitimer(signal.ITIMER_REAL, 0)
      peak = tracemalloc.get_traced_memory()[1]
      tracemalloc.stop()
    self.assertLess(peak, _CASE_BYTES, 'memory used: %d bytes' % peak)
    return result, environ

  def causes(self, env, recorded, kwargs):
    """The names an error of resolving `env` with `kwargs` may blame.

    Args:
      env: The task's environment in the case.
      recorded: The task's environment as recorded.
      kwargs: The case's arguments.

    Returns:
      The changed variables (with those read in their place) if they alone
      make the resolver fail, the changed arguments if they alone do; both
      if neither alone does. Empty if the case changed nothing.
    """
    variables = _changed_variables(env, recorded)
    arguments = _changed_arguments(kwargs)
    if not variables or not arguments:
      return variables | arguments
    blamed = set()
    if isinstance(self.resolve(env, {})[0], Exception):
      blamed |= variables
    if isinstance(self.resolve(recorded, kwargs)[0], Exception):
      blamed |= arguments
    return blamed or variables | arguments

  def check_error(self, error, env, after, blamed):
    self.assertEqual(env, after, 'os.environ changed on %r' % error)
    named = _names(str(error)) & blamed
    self.assertTrue(named, '%s names none of %s: %s' % (
        type(error).__name__, sorted(blamed), error))

  def check_resolution(self, resolver, env, after, kwargs):
    """The checks of fixture_layouts_test.py, for one task."""
    changed = {name for name in set(env) | set(after)
               if env.get(name) != after.get(name)}
    written = {'CUDA_VISIBLE_DEVICES', 'TF_FORCE_GPU_ALLOW_GROWTH'}
    self.assertContainsSubset(changed, written)
    spec = resolver.cluster_spec().as_dict()
    addresses = [a for job in spec.values() for a in job]
    self.assertLen(set(addresses), len(addresses))
    task_type, task_id = resolver.get_task_info()
    own = spec[task_type][task_id]
    self.assertEqual('%s://%s' % (kwargs.get('rpc_layer', 'grpc'), own)
                     if kwargs.get('rpc_layer', 'grpc') else own,
                     resolver.master())
    if 'SLURMD_NODENAME' in env:
      self.assertEqual(env['SLURMD_NODENAME'], own.rsplit(':', 1)[0])
    visible = after.get('CUDA_VISIBLE_DEVICES')
    if kwargs.get('auto_set_gpu', True):
      # TensorFlow uses as many GPUs as the resolver says the task has.
      # Blanks around a list are not part of it (CUDA: ' ' is no device).
      used = ([] if visible is None or visible.strip() in ('', 'NoDevFiles')
              else visible.split(','))
      self.assertEqual({'GPU': len(used)}, resolver.num_accelerators())
    if visible != env.get('CUDA_VISIBLE_DEVICES'):
      gpus = visible.split(',') if visible else []
      given = set()
      for name in _GPU_VARIABLES:
        given.update(env.get(name, '').split(','))
      if not any(name in env for name in _GPU_LISTS):
        # GPU_DEVICE_ORDINAL counts only beside CUDA_VISIBLE_DEVICES; without
        # a list, gpus_per_node's GPUs, or under --gpu-bind=none (22.05)
        # the step's count on the node.
        count = kwargs.get('gpus_per_node')
        if count is None:
          count = int(env['SLURM_GPUS_ON_NODE'])
        given = {str(i) for i in range(count)}
      self.assertContainsSubset(gpus, given)
      self.assertEqual({'GPU': len(gpus)}, resolver.num_accelerators())
    return spec

  @hypothesis.given(_cases())
  @_SETTINGS
  def testEveryCaseResolvesRightOrFailsNamingTheCause(self, case):
    step, changed, ranks, mutations, kwargs = case
    envs = _STEPS[step]
    specs = []
    for rank in ranks:
      env = _apply(envs[rank], mutations if rank in changed else [])
      result, after = self.resolve(env, kwargs)
      if isinstance(result, Exception):
        self.check_error(result, env, after,
                         self.causes(env, envs[rank], kwargs))
      else:
        specs.append(self.check_resolution(result, env, after, kwargs))
      if rank == ranks[0] and not kwargs:
        self.check_explain(env, result)
    if len(changed) > 1:
      for spec in specs[1:]:
        self.assertEqual(specs[0], spec)

  def check_explain(self, env, result):
    """The explain command agrees with the resolver, and raises nothing."""
    out = io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, _CASE_SECONDS)
    try:
      with mock.patch.object(sys, 'stderr', io.StringIO()) as err:
        status = explain.main(['--all'], environ=env, out=out)
    except _Hang:
      self.fail('explain did not end within %s s' % _CASE_SECONDS)
    finally:
      signal.setitimer(signal.ITIMER_REAL, 0)
    if isinstance(result, Exception):
      self.assertEqual((1, 'error: %s\n' % result), (status, err.getvalue()))
    else:
      self.assertEqual(0, status, err.getvalue())


def tearDownModule():
  _FILES_DIR.cleanup()


if __name__ == '__main__':
  absltest.main()
