"""Strict deps of the Slurm targets, as TensorFlow's build demands them.

TensorFlow's py_strict_library and tf_py_strict_test want every module that
a target's sources import to come from a direct dep. The offline workspace
here cannot tell (every target runs the .venv Python, which sees every
module), so this reads the BUILD files and the sources instead: for each
Slurm target (the slurm_* targets of the core's packages, every target of
the companion's), every module its sources import that a known target
provides (a target of these BUILD files, or one of KNOWN_TARGETS) comes from
one of its direct deps, and every dep on a known target is imported.

A source that a direct dep carries too (a py_binary over its py_library) is
that dep's to check. BUILD files are read with `ast`: a target's srcs and
deps must be lists of strings, joined by `+` or named by a variable.
"""

import ast
import collections
import os

# TensorFlow's and absl's targets that the Slurm sources use, with the
# modules each provides, as TensorFlow 2.21's BUILD files have them (client
# testlib is test.py; :test is googletest.py). The Slurm sources may import
# no other tensorflow.* module until it is added here.
KNOWN_TARGETS = {
    '//tensorflow/core:protos_all_py': (
        'tensorflow.core.protobuf.cluster_pb2',),
    '//tensorflow/python/distribute/cluster_resolver:base_cluster_resolver_py':
        ('tensorflow.python.distribute.cluster_resolver.cluster_resolver',),
    '//tensorflow/python/distribute/failure_handling:failure_handling_lib': (
        'tensorflow.python.distribute.failure_handling.failure_handling',),
    '//tensorflow/python/distribute/failure_handling:failure_handling_util': (
        'tensorflow.python.distribute.failure_handling.failure_handling_util',
    ),
    '//tensorflow/python/eager:context': ('tensorflow.python.eager.context',),
    '//tensorflow/python/framework:errors': (
        'tensorflow.python.framework.errors',
        'tensorflow.python.framework.errors_impl'),
    '//tensorflow/python/platform:client_testlib': (
        'tensorflow.python.platform.test',),
    '//tensorflow/python/platform:tf_logging': (
        'tensorflow.python.platform.tf_logging',),
    '//tensorflow/python/training:server_lib': (
        'tensorflow.python.training.server_lib',),
    '//tensorflow/python/util:tf_export': ('tensorflow.python.util.tf_export',),
    '@absl_py//absl/testing:absltest': ('absl.testing.absltest',),
    '@absl_py//absl/testing:parameterized': ('absl.testing.parameterized',),
}

Target = collections.namedtuple('Target', 'kind srcs deps')


class _Unreadable(Exception):
  """A BUILD expression that is not strings, lists, `+` and names."""


def _value(node, names):
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  if isinstance(node, ast.List):
    return [_value(element, names) for element in node.elts]
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _value(node.left, names) + _value(node.right, names)
  if isinstance(node, ast.Name) and node.id in names:
    return names[node.id]
  raise _Unreadable(ast.dump(node))


def _attribute(keywords, name, names):
  """The value of a rule's attribute: [] if absent, None if unreadable."""
  try:
    return _value(keywords[name], names) if name in keywords else []
  except _Unreadable:
    return None


def label(dep, package):
  """`dep` of a target of `package` as //pkg:name (//pkg is //pkg:pkg)."""
  if dep.startswith(':'):
    return '//%s%s' % (package, dep)
  if '//' not in dep:
    return '//%s:%s' % (package, dep)
  if ':' not in dep.split('//', 1)[1]:
    return '%s:%s' % (dep, dep.rsplit('/', 1)[1])
  return dep


def build_targets(text, package):
  """{label: Target} of the rules of a BUILD file of `package`."""
  names, targets = {}, {}
  for statement in ast.parse(text).body:
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
        isinstance(statement.targets[0], ast.Name)):
      try:
        names[statement.targets[0].id] = _value(statement.value, names)
      except _Unreadable:
        pass
    call = isinstance(statement, ast.Expr) and statement.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
      continue
    keywords = {k.arg: k.value for k in call.keywords}
    name = keywords.get('name')
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
      targets[label(':' + name.value, package)] = Target(
          call.func.id, _attribute(keywords, 'srcs', names),
          _attribute(keywords, 'deps', names))
  return targets


def _files(target_label, target):
  """The paths of a target's .py srcs."""
  package = target_label[2:].split(':')[0]
  return {package + '/' + src for src in target.srcs or ()
          if src.endswith('.py') and ':' not in src}


def module(path):
  """The module of a .py file's path (a package's __init__.py: the package)."""
  name = path[:-len('.py')].replace('/', '.')
  return name[:-len('.__init__')] if name.endswith('.__init__') else name


def imports(source, path, known):
  """The modules a source imports: of `from a import b`, a.b if `known`."""
  found = []
  for node in ast.walk(ast.parse(source, path)):
    if isinstance(node, ast.Import):
      found += [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      parts = module(path).split('.')
      if not path.endswith('__init__.py'):
        parts.pop()  # The package a relative import starts from.
      parts = parts[:len(parts) + 1 - node.level] if node.level else []
      base = '.'.join(parts + ([node.module] if node.module else []))
      found += [base + '.' + alias.name
                if base + '.' + alias.name in known else base
                for alias in node.names]
  return found


def _read(root, path):
  try:
    with open(os.path.join(root, path), encoding='utf-8') as f:
      return f.read()
  except FileNotFoundError:
    return None


def _target_problems(root, target_label, target, targets, providers):
  """What a checked target's deps lack or have too many of."""
  if target.srcs is None or target.deps is None:
    return ['%s: its srcs or deps are not lists of strings' % target_label]
  package = target_label[2:].split(':')[0]
  deps = {label(dep, package) for dep in target.deps}
  own = _files(target_label, target)
  carried = {dep: own & _files(dep, targets[dep])
             for dep in deps if dep in targets}
  used = {dep for dep, paths in carried.items() if paths}
  found = []
  for path in sorted(own.difference(*carried.values())):
    source = _read(root, path)
    if source is None:
      found.append('%s: no %s' % (target_label, path))
      continue
    for name in imports(source, path, providers):
      need = providers.get(name, set()) - {target_label}
      if name not in providers and name.startswith('tensorflow.'):
        found.append('%s imports %s (%s), which no known target provides '
                     '(tools/strict_deps.py KNOWN_TARGETS)' %
                     (target_label, name, os.path.basename(path)))
      elif need and not need & deps:
        found.append('%s imports %s (%s) without a dep on %s' % (
            target_label, name, os.path.basename(path),
            ' or '.join(sorted(need))))
      used |= need & deps
  provided = set().union(*providers.values())
  found += ['%s depends on %s, whose modules its sources do not import' %
            (target_label, dep) for dep in sorted((deps & provided) - used)]
  return found


def problems(root, packages, companions=()):
  """The strict-deps problems of the Slurm targets of a tree at `root`.

  Args:
    root: the tree.
    packages: the core's packages, whose slurm_* targets are checked.
    companions: packages whose every target is checked.

  Returns:
    A message per missing or unused dep, naming the target and the module,
    and per BUILD or source that is missing or cannot be read.
  """
  targets, found = {}, []
  for package in list(packages) + list(companions):
    text = _read(root, package + '/BUILD')
    if text is None:
      found.append('no %s/BUILD' % package)
    else:
      targets.update(build_targets(text, package))
  providers = collections.defaultdict(set)
  for target_label, modules in KNOWN_TARGETS.items():
    for name in modules:
      providers[name].add(target_label)
  for target_label, target in targets.items():
    if target.kind != 'filegroup':
      for path in _files(target_label, target):
        providers[module(path)].add(target_label)
  for target_label, target in sorted(targets.items()):
    package, name = target_label[2:].split(':')
    if target.kind != 'filegroup' and (
        package in companions or name.startswith('slurm_')):
      found += _target_problems(root, target_label, target, targets,
                                dict(providers))
  return found
