"""API goldens of SlurmClusterResolver, in TensorFlow 2.21's own format.

TensorFlow guards its public API with one text-format `TFAPIObject` proto per
public symbol under `tensorflow/tools/api/golden/{v1,v2}/`. The class's are
kept here at the same paths, so that a change of its public surface shows in
review, and the patch (tools/make_tf_patch.py) replaces TensorFlow's. The
patch adds no other public name; the one other golden it changes, for the
new argument of TensorFlow's `TerminationConfig`, is in its diff of
TensorFlow's files (TF_GOLDENS).

    .venv/bin/python tools/api_golden.py [--update]   # check [regenerate]

A golden lists (facts of the format, not TensorFlow's code) a class's MRO up
to the first class from outside TensorFlow, then by name every public
attribute (`member`, with its type) and routine (`member_method`, with the
argspec string of the old `inspect.getargspec`), builtin types spelled the
Python 2 way (`<type 'property'>`) as TensorFlow 2.21's goldens do.
"""

import argparse
import difflib
import inspect
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOL = 'distribute.cluster_resolver.SlurmClusterResolver'
# The golden of each API version (v1 and v2 both export the class).
GOLDENS = {
    api: 'tensorflow/tools/api/golden/%s/tensorflow.distribute.'
         'cluster_resolver.-slurm-cluster-resolver.pbtxt' % api
    for api in ('v1', 'v2')
}
REGENERATE_COMMAND = '.venv/bin/python tools/api_golden.py --update'
# TensorFlow's own class whose golden the patch changes
# (tools/tf_termination_signals.diff): not kept here; --print-json renders it
# too, for the tree tools/make_tf_patch.py rebuilds from pip TensorFlow.
TF_GOLDENS = {
    'tensorflow/tools/api/golden/v2/tensorflow.distribute.experimental.'
    '-termination-config.pbtxt':
        ('v2', 'distribute.experimental.TerminationConfig'),
}

# Builtin types spelled `<type 'NAME'>`, and exceptions `exceptions.NAME`.
_TYPES = ('property', 'object', 'getset_descriptor', 'int', 'str', 'type',
          'tuple', 'collections.defaultdict', 'set', 'dict',
          'NoneType', 'frozenset', 'member_descriptor')
_EXCEPTIONS = ('Exception', 'RuntimeError')


def type_name(text):
  """Spells the `str()` of a type as TensorFlow 2.21's goldens do."""
  name = text[len("<class '"):-2] if text.startswith("<class '") else None
  if name == 'abc.ABCMeta':
    return "<type 'type'>"
  if name == '_collections._tuplegetter':  # namedtuple fields.
    return "<type 'property'>"
  if name in _TYPES:
    return "<type '%s'>" % name
  if name in _EXCEPTIONS:
    return "<type 'exceptions.%s'>" % name
  return text


def _quote(text):
  """Quotes a string as protobuf's text format does (C escapes, octal)."""
  escapes = {'\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"',
             "'": "\\'", '\\': '\\\\'}
  return '"%s"' % ''.join(
      escapes.get(chr(b)) or (chr(b) if 0x20 <= b < 0x7f else '\\%03o' % b)
      for b in text.encode('utf-8'))


def argspec(function):
  """TensorFlow's argspec string for a Python function."""
  spec = inspect.getfullargspec(inspect.unwrap(function))
  if spec.kwonlyargs or spec.annotations:
    raise ValueError('%s has keyword-only arguments or annotations, which '
                     'API goldens cannot show' % function.__qualname__)
  text = 'args=%s, varargs=%s, keywords=%s, ' % (spec.args, spec.varargs,
                                                 spec.varkw)
  if not spec.defaults:
    return text + 'defaults=None'
  # No addresses in goldens: '<object at 0x..>' is '<object instance>'.
  defaults = [re.sub(r' at 0x[0-9a-f]+>$', ' instance>', str(v))
              for v in spec.defaults]
  return text + 'defaults=%s, ' % defaults


def render(path, cls):
  """The golden text of class `cls`, published as `path`."""
  lines = ['path: %s' % _quote(path), 'tf_class {']
  for base in inspect.getmro(cls):
    lines.append('  is_instance: %s' % _quote(type_name(str(base))))
    if 'tensorflow' not in str(base):
      break
  members, methods = [], []
  for name, value in inspect.getmembers(cls):
    if name.startswith('_') and name != '__init__':
      continue
    value = inspect.unwrap(value) if callable(value) else value
    if inspect.isroutine(value):
      methods += ['  member_method {', '    name: %s' % _quote(name)]
      if hasattr(value, '__code__'):
        methods.append('    argspec: %s' % _quote(argspec(value)))
      methods.append('  }')
    else:
      members += ['  member {', '    name: %s' % _quote(name),
                  '    mtype: %s' % _quote(type_name(str(type(value)))), '  }']
  return '\n'.join(lines + members + methods + ['}', ''])


def public_class(api, symbol=SYMBOL):
  """The class TensorFlow publishes as `symbol` in API `api`.

  Over pip the overlay publishes the companion's subclass (`tf_slurm`) of
  the tree's class: then the tree's class, which the goldens describe.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  obj = {'v1': tf.compat.v1, 'v2': tf.compat.v2}[api]
  for part in symbol.split('.'):
    obj = getattr(obj, part)
  if obj.__module__.startswith('tf_slurm.'):
    obj = obj.__bases__[0]
  return obj


def generate():
  """{golden path relative to a tree's root: text} of the class's goldens."""
  return {path: render('tensorflow.' + SYMBOL, public_class(api))
          for api, path in GOLDENS.items()}


def generate_tf_goldens():
  """{golden path: text} of TF_GOLDENS, from the TensorFlow imported."""
  return {path: render('tensorflow.' + symbol, public_class(api, symbol))
          for path, (api, symbol) in TF_GOLDENS.items()}


def compare(root=ROOT):
  """[(path, stored text or None, generated text)] of goldens that differ."""
  cls = public_class('v2')
  source = os.path.realpath(inspect.getsourcefile(cls))
  expected = os.path.join(root, *cls.__module__.split('.')) + '.py'
  if source != os.path.realpath(expected):
    raise RuntimeError('tf.%s comes from %s, not from %s: is the overlay '
                       'installed (tools/setup.sh)?' % (SYMBOL, source, root))
  stale = []
  for path, text in sorted(generate().items()):
    stored = None
    if os.path.exists(os.path.join(root, path)):
      with open(os.path.join(root, path), encoding='utf-8') as f:
        stored = f.read()
    stale += [(path, stored, text)] if stored != text else []
  return stale


def describe(stale):
  """A report of compare()'s result: the diffs and the fix."""
  if not stale:
    return 'API goldens match the class.\n'
  out = []
  for path, stored, text in stale:
    out += difflib.unified_diff(
        (stored or '').splitlines(True), text.splitlines(True),
        'a/%s (stored)' % path, 'b/%s (from the class)' % path)
  out.append('\nThe public API of SlurmClusterResolver differs from its '
             'goldens. If that is intended, regenerate them with\n    %s\n'
             'and commit them with the change.\n' % REGENERATE_COMMAND)
  return ''.join(out)


def main(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--update', action='store_true',
                      help='write the goldens from the class')
  parser.add_argument('--print-json', action='store_true',
                      help='print {path: golden} of the class TensorFlow '
                      'publishes, whichever module serves it, and of '
                      'TF_GOLDENS; write nothing')
  args = parser.parse_args(argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
  if args.print_json:
    json.dump(dict(generate(), **generate_tf_goldens()), sys.stdout,
              indent=1, sort_keys=True)
    return 0
  stale = compare()
  if args.update:
    for path, _, text in stale:
      with open(os.path.join(ROOT, path), 'w', encoding='utf-8') as f:
        f.write(text)
      print('wrote', path)
    return 0
  sys.stdout.write(describe(stale))
  return 1 if stale else 0


if __name__ == '__main__':
  sys.exit(main())
