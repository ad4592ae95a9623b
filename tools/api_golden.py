"""API goldens of SlurmClusterResolver, in TensorFlow's own format.

TensorFlow guards its public API with golden files: one text-format
`TFAPIObject` proto per public symbol under
`tensorflow/tools/api/golden/{v1,v2}/`, named after the symbol's path with
every capital letter turned into `-` and the lower-case letter. The goldens
of `tf.distribute.cluster_resolver.SlurmClusterResolver` (exported in both
APIs) are kept here at the same paths, so that any change to the class's
public surface (members, argument names, defaults) shows up in review, and
so that they can replace TensorFlow's own in a TensorFlow tree
(tools/make_tf_patch.py).

    PYTHONPATH=. .venv/bin/python tools/api_golden.py           # check
    PYTHONPATH=. .venv/bin/python tools/api_golden.py --update  # regenerate

A golden lists what TensorFlow's generator lists (facts of its format, not
its code): the class's method resolution order up to and including the first
class from outside TensorFlow (`is_instance`), then, in name order, every
public attribute (`member`, with the type of the attribute) and every public
routine and `__init__` (`member_method`, with an argspec string in the form
of the old `inspect.getargspec`: args, varargs, keywords, and the defaults
as `str()` of each value).

Builtin types appear in one of two spellings, `STYLES`: 'type' writes them
as Python 2 did (`<type 'property'>`), as TensorFlow's goldens did for years;
'class' writes Python 3's own (`<class 'property'>`), as TensorFlow's newest
goldens do. `STYLE` is the one of the release this repository targets.
"""

import argparse
import difflib
import inspect
import json
import os
import sys

# The repository root: the parent of this file's folder.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The public symbols of the module, by API version, as TensorFlow exports
# them (`tf_export('distribute.cluster_resolver.SlurmClusterResolver')` puts
# the class under tf.distribute.cluster_resolver in v2 and in v1).
SYMBOLS = (
    ('v1', 'distribute.cluster_resolver.SlurmClusterResolver'),
    ('v2', 'distribute.cluster_resolver.SlurmClusterResolver'),
)
# Symbols that the repository adds, which pip TensorFlow does not have
# (`tf_export(..., v1=[])`: v2 only). Checked and written like SYMBOLS, but
# not in `--print-json`, which also runs on pip TensorFlow alone.
ADDED_SYMBOLS = (
    ('v2', 'distribute.experimental.SlurmTerminationConfig'),
)

GOLDEN_DIR = os.path.join('tensorflow', 'tools', 'api', 'golden')

REGENERATE_COMMAND = 'PYTHONPATH=. .venv/bin/python tools/api_golden.py --update'

STYLES = ('type', 'class')
# TensorFlow 2.21's goldens (see README, "Vendoring into a TensorFlow fork").
STYLE = 'type'

# Builtin types that the 'type' style spells `<type 'NAME'>`.
_PY2_TYPE_NAMES = ('property', 'object', 'getset_descriptor', 'int', 'str',
                   'type', 'tuple', 'module', 'collections.defaultdict', 'set',
                   'dict', 'NoneType', 'frozenset', 'member_descriptor')
_PY2_EXCEPTION_NAMES = ('Exception', 'RuntimeError')


def golden_relpath(api, symbol):
  """Returns the golden's path in a TensorFlow tree, e.g. for ('v2', 'a.Bc').

  Args:
    api: 'v1' or 'v2'.
    symbol: the symbol's path below `tensorflow.`, e.g.
      'distribute.cluster_resolver.SlurmClusterResolver'.

  Returns:
    'tensorflow/tools/api/golden/v2/tensorflow.a.-bc.pbtxt' for ('v2', 'a.Bc').
  """
  name = ''.join('-' + c.lower() if c.isupper() else c
                 for c in 'tensorflow.' + symbol)
  return os.path.join(GOLDEN_DIR, api, name + '.pbtxt')


def normalize_type(text, style):
  """Spells the `str()` of a type as goldens of `style` do."""
  if style == 'class':
    return text
  if text == "<class 'abc.ABCMeta'>":
    return "<type 'type'>"
  if text == "<class '_collections._tuplegetter'>":  # namedtuple fields.
    return "<type 'property'>"
  for name in _PY2_TYPE_NAMES:
    if text == "<class '%s'>" % name:
      return "<type '%s'>" % name
  for name in _PY2_EXCEPTION_NAMES:
    if text == "<class '%s'>" % name:
      return "<type 'exceptions.%s'>" % name
  return text


def restyle(golden, style):
  """Rewrites golden text in `style`'s spelling of builtin types.

  Only the spellings that map one to one are rewritten (`abc.ABCMeta`, which
  the 'type' style writes as `<type 'type'>`, is left alone).

  Args:
    golden: the text of a golden file.
    style: one of STYLES.

  Returns:
    The text with builtin types spelled as `style` does.
  """
  pairs = [("<class \\'%s\\'>" % n, "<type \\'%s\\'>" % n)
           for n in _PY2_TYPE_NAMES]
  pairs += [("<class \\'%s\\'>" % n, "<type \\'exceptions.%s\\'>" % n)
            for n in _PY2_EXCEPTION_NAMES]
  for as_class, as_type in pairs:
    if style == 'type':
      golden = golden.replace(as_class, as_type)
    else:
      golden = golden.replace(as_type, as_class)
  return golden


def detect_style(golden):
  """Returns the style of a golden's text, or None if it shows neither."""
  if "<type \\'" in golden:
    return 'type'
  if "<class \\'object\\'>" in golden or "<class \\'property\\'>" in golden:
    return 'class'
  return None


def _quote(text):
  """Quotes a string as protobuf's text format does (C escapes, octal)."""
  out = []
  for byte in text.encode('utf-8'):
    char = chr(byte)
    if char == '\n':
      out.append('\\n')
    elif char == '\r':
      out.append('\\r')
    elif char == '\t':
      out.append('\\t')
    elif char in '"\'\\':
      out.append('\\' + char)
    elif 0x20 <= byte < 0x7f:
      out.append(char)
    else:
      out.append('\\%03o' % byte)
  return '"%s"' % ''.join(out)


def argspec(function):
  """Returns TensorFlow's argspec string for a Python function.

  Raises:
    ValueError: if the function has keyword-only arguments or annotations,
      which the argspec form cannot show (TensorFlow's generator fails too).
  """
  spec = inspect.getfullargspec(inspect.unwrap(function))
  if spec.kwonlyargs or spec.annotations:
    raise ValueError(
        '%s has keyword-only arguments or annotations, which TensorFlow API '
        'goldens cannot represent' % function.__qualname__)
  text = 'args=%s, varargs=%s, keywords=%s, ' % (spec.args, spec.varargs,
                                                 spec.varkw)
  if not spec.defaults:
    return text + 'defaults=None'
  defaults = []
  for value in spec.defaults:
    value = str(value)
    if ' at 0x' in value:  # No addresses in goldens.
      value = value.split(' at ')[0] + ' instance>'
    defaults.append(value)
  return text + 'defaults=%s, ' % defaults


def _mro(cls, style):
  """The MRO up to and including the first class from outside TensorFlow."""
  names = []
  for base in inspect.getmro(cls):
    name = normalize_type(str(base), style)
    names.append(name)
    if 'tensorflow' not in name:
      break
  return names


def render(path, cls, style=STYLE):
  """Returns the golden text of class `cls`, published as `path`.

  Args:
    path: the public path, e.g.
      'tensorflow.distribute.cluster_resolver.SlurmClusterResolver'.
    cls: the class.
    style: one of STYLES.
  """
  if style not in STYLES:
    raise ValueError('style must be one of %s, not %r' % (STYLES, style))
  lines = ['path: %s' % _quote(path), 'tf_class {']
  lines += ['  is_instance: %s' % _quote(n) for n in _mro(cls, style)]
  members, methods = [], []
  for name, value in inspect.getmembers(cls):
    if name.startswith('_') and name != '__init__':
      continue
    value = inspect.unwrap(value) if callable(value) else value
    if inspect.isroutine(value):
      method = ['  member_method {', '    name: %s' % _quote(name)]
      if hasattr(value, '__code__'):
        method.append('    argspec: %s' % _quote(argspec(value)))
      methods += method + ['  }']
    else:
      if inspect.ismodule(value):
        mtype = normalize_type("<class 'module'>", style)
      else:
        mtype = normalize_type(str(type(value)), style)
      members += ['  member {', '    name: %s' % _quote(name),
                  '    mtype: %s' % _quote(mtype), '  }']
  return '\n'.join(lines + members + methods + ['}', ''])


def public_class(api, symbol):
  """Returns the class TensorFlow publishes as `symbol` in API `api`."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  obj = {'v1': tf.compat.v1, 'v2': tf.compat.v2}[api]
  for part in symbol.split('.'):
    obj = getattr(obj, part)
  return obj


def generate(style=STYLE, symbols=SYMBOLS):
  """Returns {golden path relative to a tree's root: text} for `symbols`."""
  return {
      golden_relpath(api, symbol): render('tensorflow.' + symbol,
                                          public_class(api, symbol), style)
      for api, symbol in symbols
  }


def _check_served_from(root):
  """Raises if a class is not this repository's (overlay not active)."""
  for api, symbol in SYMBOLS + ADDED_SYMBOLS:
    cls = public_class(api, symbol)
    source = os.path.realpath(inspect.getsourcefile(cls))
    expected = os.path.join(root, *cls.__module__.split('.')) + '.py'
    if source != os.path.realpath(expected):
      raise RuntimeError(
          'tf.%s comes from %s, not from %s: run with PYTHONPATH=<repo> so '
          'that the overlay serves the repository\'s module.' %
          (symbol, source, root))


def compare(root=ROOT, style=STYLE):
  """Compares the goldens under `root` with the class's API.

  Returns:
    A list of (relative path, stored text or None, generated text), one for
    each golden that is missing or differs; empty if all match.
  """
  _check_served_from(root)
  stale = []
  for relpath, text in sorted(
      generate(style, SYMBOLS + ADDED_SYMBOLS).items()):
    try:
      with open(os.path.join(root, relpath), encoding='utf-8') as f:
        stored = f.read()
    except FileNotFoundError:
      stored = None
    if stored != text:
      stale.append((relpath, stored, text))
  return stale


def describe(stale):
  """Returns a report of `compare()`'s result: unified diffs and the fix."""
  if not stale:
    return 'API goldens match the class.\n'
  out = []
  for relpath, stored, text in stale:
    if stored is None:
      out.append('%s: missing\n' % relpath)
      continue
    out.extend(difflib.unified_diff(
        stored.splitlines(True), text.splitlines(True),
        'a/' + relpath + ' (stored)', 'b/' + relpath + ' (from the class)'))
  out.append(
      '\nThe public API of the classes differs from their goldens. If '
      'the change is intended, regenerate them from the repository root with\n'
      '    %s\nand commit them with the change.\n' % REGENERATE_COMMAND)
  return ''.join(out)


def update(root=ROOT, style=STYLE):
  """Writes the goldens under `root`; returns the paths that changed."""
  changed = []
  for relpath, _, text in compare(root, style):
    path = os.path.join(root, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
      f.write(text)
    changed.append(relpath)
  return changed


def main(argv=None):
  parser = argparse.ArgumentParser(
      description='Check (default) or regenerate the API goldens of '
      'SlurmClusterResolver. Run from the repository root with PYTHONPATH=.')
  parser.add_argument('--update', action='store_true',
                      help='write the goldens from the class')
  parser.add_argument('--print', dest='print_api', choices=('v1', 'v2'),
                      help='print the golden of this API version for the class '
                      'that TensorFlow publishes (whichever module serves it) '
                      'and write nothing')
  parser.add_argument('--print-json', action='store_true',
                      help='print {golden path: text} of both API versions, '
                      'as JSON, for the class TensorFlow publishes')
  parser.add_argument('--style', choices=STYLES, default=STYLE,
                      help='spelling of builtin types (default: %(default)s)')
  parser.add_argument('--root', default=ROOT,
                      help='the tree holding tensorflow/tools/api/golden '
                      '(default: this repository)')
  args = parser.parse_args(argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
  if args.print_api:
    for api, symbol in SYMBOLS:
      if api == args.print_api:
        sys.stdout.write(render('tensorflow.' + symbol,
                                public_class(api, symbol), args.style))
    return 0
  if args.print_json:
    json.dump(generate(args.style), sys.stdout, indent=1, sort_keys=True)
    return 0
  if args.update:
    for relpath in update(args.root, args.style):
      print('wrote', relpath)
    return 0
  stale = compare(args.root, args.style)
  sys.stdout.write(describe(stale))
  return 1 if stale else 0


if __name__ == '__main__':
  sys.exit(main())
