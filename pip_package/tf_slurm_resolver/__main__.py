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
"""Says which SlurmClusterResolver TensorFlow serves in this Python, and why.

    python -m tf_slurm_resolver

Run it the way the tasks run, with the same Python and environment (e.g.
`srun -n1 python -m tf_slurm_resolver` in the batch script). It imports
TensorFlow and prints which class
`tf.distribute.cluster_resolver.SlurmClusterResolver` is: tf-slurm-resolver's
(its companion's, over its core), its core alone, or TensorFlow's own; the
class's file, TensorFlow's version and folder, and this package's folder;
and, when the companion's resolver is not served, why and what to do. Exits
with status 0 when the companion's resolver is served, 1 otherwise.
`--help` answers without importing TensorFlow.
"""

import argparse
import os
import sys

from tf_slurm_resolver import overlay

_PUBLIC = 'tf.distribute.cluster_resolver.SlurmClusterResolver'
_CORE = 'tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver'
_PTH = 'tf_slurm_resolver.pth'
_TO_SERVE = (
    'pip install tf-slurm-resolver into a site directory (without --target), '
    'or start each program with `from tf_slurm_resolver import overlay; '
    'overlay.install()` before it imports TensorFlow.')


def _parser():
  return argparse.ArgumentParser(
      prog='python -m tf_slurm_resolver',
      description=(
          'Says which class %s is in this Python: tf-slurm-resolver\'s (its '
          'companion\'s, over its core), its core alone, or TensorFlow\'s '
          'own; from which file; TensorFlow\'s version; and, when the '
          'companion\'s is not served, why and what to do. Run it as the '
          'tasks run (e.g. srun -n1 python -m tf_slurm_resolver). Exit '
          'status: 0 when the companion\'s resolver is served, 1 otherwise.'
          % _PUBLIC))


def _user_site():
  """The user's site directory of this Python, or None if it has none."""
  import site  # pylint: disable=g-import-not-at-top
  return site.getusersitepackages() if site.ENABLE_USER_SITE else None


def _site_dirs():
  """The site directories of this Python, whose .pth files Python runs."""
  import site  # pylint: disable=g-import-not-at-top
  folders = list(getattr(site, 'getsitepackages', list)())
  folders += [f for f in [_user_site()] if f]
  return {os.path.realpath(f) for f in folders}


def _hook_problem(package_dir):
  """(why, what to do) when the overlay was not installed at start-up."""
  startup = sys.modules.get('tf_slurm_resolver._startup')
  if startup is not None and startup.ERROR:
    return ('the overlay could not be installed when Python started (%s).' %
            startup.ERROR, 'fix that error or reinstall tf-slurm-resolver.')
  if sys.flags.no_site:
    return ('Python was started with -S: it ran no .pth file.',
            'run Python without -S, or ' + _TO_SERVE)
  folder = os.path.dirname(package_dir)
  pth = os.path.join(folder, _PTH)
  if not os.path.isfile(pth):
    return ('no %s beside %s: nothing installed the overlay when Python '
            'started.' % (_PTH, package_dir), _TO_SERVE)
  if os.path.realpath(folder) not in _site_dirs():
    todo = _TO_SERVE
    if _user_site():
      # Where PYTHONPATH is the way in (environment modules, shared
      # installs): the user's site directory makes the folder a site one.
      todo = todo[:-1] + (
          ', or make %s a site directory for your user: put the line `import '
          'site; site.addsitedir(%r)` into a file ending in .pth in %s '
          '(python -m site --user-site).' % (folder, folder, _user_site()))
    return ('%s holds %s but is not a site directory of this Python (it is '
            'on sys.path through PYTHONPATH, or as pip install --target left '
            'it): Python runs .pth files only in site directories, which '
            'python -m site lists.' % (folder, _PTH), todo)
  return ('%s did not install the overlay when Python started (Python then '
          'printed why).' % pth, 'fix that error or reinstall '
          'tf-slurm-resolver.')


def _source(obj):
  """The source file of a class or module, or '(unknown)'."""
  import inspect  # pylint: disable=g-import-not-at-top
  try:
    return inspect.getsourcefile(obj) or '(unknown)'
  except TypeError:
    return '(unknown)'


def report(out=None):
  """Writes which resolver TensorFlow serves on `out`; imports TensorFlow.

  Args:
    out: a text stream (default: sys.stdout).

  Returns:
    True if it is the companion's (over the core), False otherwise.
  """
  out = out or sys.stdout
  finder = overlay.installed_finder()
  # TensorFlow's start-up log is not part of the answer.
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  fields = [('tf_slurm_resolver', overlay.PACKAGE_DIR)]
  try:
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
  except Exception as e:  # pylint: disable=broad-except
    out.write('TensorFlow cannot be imported in this Python (%s: %s).\n' %
              (type(e).__name__, e))
    out.write(''.join('  %s: %s\n' % f for f in
                      fields + [('python', sys.executable)]))
    return False
  try:
    version = overlay.tensorflow_version()
  except Exception as e:  # pylint: disable=broad-except
    version = '(unknown: %s)' % e
  fields.insert(0, ('TensorFlow', '%s, %s' % (
      version or getattr(tf, '__version__', '(version unknown)'),
      os.path.dirname(tf.__file__ or '(unknown)'))))
  cls = tf
  for part in _PUBLIC.split('.')[1:]:
    cls = getattr(cls, part, None)
  if cls is None:
    out.write('TensorFlow has no %s.\n' % _PUBLIC)
    out.write(''.join('  %s: %s\n' % f for f in fields))
    return False
  module = sys.modules.get(getattr(cls, '__module__', None))
  fields[:0] = [('class', '%s.%s' % (cls.__module__, cls.__qualname__)),
                ('file', _source(cls))]
  published = finder is not None and finder.publishes(cls)
  why = finder and finder.said
  todo = None
  if published:
    served = 'tf-slurm-resolver\'s: its companion\'s, over its core'
    fields.insert(2, ('core', _source(sys.modules.get(_CORE))))
  elif finder is not None and finder.serves(module):
    served = 'tf-slurm-resolver\'s core, without its companion'
    why = why or finder.companion_problem
  else:
    served = 'TensorFlow\'s own, not tf-slurm-resolver\'s'
    if finder is None:
      why, todo = _hook_problem(overlay.PACKAGE_DIR)
    else:
      why = why or (
          'the overlay is installed but served TensorFlow no module; report '
          'this.')
  out.write('%s is %s.\n' % (_PUBLIC, served))
  out.write(''.join('  %s: %s\n' % f for f in fields))
  if why:
    out.write('%s: %s\n' % ('Note' if published else 'Why', why))
  if todo:
    out.write('To serve it: %s\n' % todo)
  return published


def main(argv=None):
  _parser().parse_args(argv)
  return 0 if report() else 1


if __name__ == '__main__':
  sys.exit(main())
