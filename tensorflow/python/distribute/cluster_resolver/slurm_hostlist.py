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
"""The grammar of Slurm's compressed host and task-count lists.

`expand_hostlist` turns a hostlist such as `n[09-11],gpu1-ib` into host names
in the order `scontrol show hostnames` prints them, and
`expand_tasks_per_node` turns `4(x2),1` into counts. Both are pure functions
that refuse malformed or oversized input before allocating anything large.
`get_expander` also offers Slurm's own `scontrol show hostnames`, alone or as
a cross-check.
"""

import itertools
import os
import re
import subprocess

# Slurm refuses a bracket range (`LO-HI`) of more hosts than this, and a
# bracket group other than the last of more hosts in all (_MAX_RANGE and
# MAX_PREFIX_CNT in Slurm's src/common/hostlist.{c,h}).
_MAX_RANGE = 64 * 1024
# The most names one expression may expand to. Slurm sets no total, but no
# step has more nodes (or tasks) than this; larger results are refused before
# anything is allocated.
_MAX_HOSTS = 1024 * 1024
_BRACKET_RE = re.compile(r'[\[\]]')
# An item of a hostlist whose brackets are balanced: text up to a separator
# (a comma, space, tab or newline), with bracket groups that may hold
# separators.
_HOSTLIST_ITEM_RE = re.compile(r'(?:[^ \t\n,\[\]]|\[[^\]]*\])+')
_RANGE_RE = re.compile(r'([0-9]+)(?:-([0-9]*))?')
# A bracket body that is a comma list of such ranges, and a hostlist whose
# brackets are balanced and not nested: each checked at once, the part-by-
# part checks that name the culprit run only when these fail.
_BODY_RE = re.compile(r'[0-9]+(?:-[0-9]*)?(?:,[0-9]+(?:-[0-9]*)?)*')
_BALANCED_RE = re.compile(r'[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*')
# Slurm reads range bounds as unsigned 64-bit numbers.
_MAX_RANGE_BOUND = 2**64 - 1
# `_numbered_names` writes a number as a head and one of these tails...
_TAIL_DIGITS = 3
_TAIL_BLOCK = 10**_TAIL_DIGITS
_TAILS = tuple('%0*d' % (_TAIL_DIGITS, tail) for tail in range(_TAIL_BLOCK))
# ... in ranges of at least this many numbers; `_group_names` formats the
# numbers of shorter ones one by one.
_SHORT_RANGE = 16
_TASKS_PER_NODE_RE = re.compile(r'([0-9]+)(?:\(x([0-9]+)\))?')
_SUBPROCESS_TIMEOUT_SECS = 30
# Where scontrol finds slurm.conf when SLURM_CONF is not set: the usual
# install locations, and the copy slurmd keeps in configless mode. Without
# any, scontrol looks for a controller in DNS, which can take long to fail.
_SLURM_CONF_PATHS = ('/etc/slurm/slurm.conf', '/etc/slurm-llnl/slurm.conf',
                     '/usr/local/etc/slurm.conf', '/run/slurm/conf/slurm.conf')


def _split_hostlist(hostlist):
  """Splits a hostlist at separators outside brackets; drops empty items."""
  if _BALANCED_RE.fullmatch(hostlist):
    return _HOSTLIST_ITEM_RE.findall(hostlist)
  depth = 0
  for bracket in _BRACKET_RE.finditer(hostlist):
    if bracket.group() == '[':
      if depth:
        raise ValueError('Invalid hostlist %r: nested "[" at position %d' %
                         (hostlist, bracket.start()))
      depth = 1
    else:
      if not depth:
        raise ValueError('Invalid hostlist %r: "]" without "[" at position %d'
                         % (hostlist, bracket.start()))
      depth = 0
  if depth:
    raise ValueError('Invalid hostlist %r: "[" without "]"' % hostlist)
  return _HOSTLIST_ITEM_RE.findall(hostlist)


def _ranges(hostlist, body):
  """Yields (low text, lo, hi) for every range of a bracket body, checked.

  Args:
    hostlist: The whole expression, for error messages.
    body: The text between the brackets, e.g. `01-03,7`.

  Raises:
    ValueError: If a range is malformed, goes down, ends above 2**64-1 or has
      more than `_MAX_RANGE` hosts.
  """
  if not _BODY_RE.fullmatch(body):
    for part in body.split(','):
      if not _RANGE_RE.fullmatch(part):
        raise ValueError(
            'Invalid hostlist %r: bad range %r in "[%s]"; expected N or LO-HI '
            'with decimal digits' % (hostlist, part, body))
  for part in body.split(','):
    low, _, high = part.partition('-')
    lo = int(low)
    hi = int(high) if high else lo  # Slurm: `3-` is 3.
    if hi > _MAX_RANGE_BOUND:
      raise ValueError('Invalid hostlist %r: %d in range %r is above 2**64-1' %
                       (hostlist, hi, part))
    if lo > hi:
      raise ValueError('Invalid hostlist %r: range %r goes down (%d > %d)' %
                       (hostlist, part, lo, hi))
    if hi - lo + 1 > _MAX_RANGE:
      raise ValueError(
          'Invalid hostlist %r: range %r has %d hosts, more than Slurm\'s '
          'limit of %d per range' % (hostlist, part, hi - lo + 1, _MAX_RANGE))
    yield low, lo, hi


def parse_ranges(hostlist, body):
  """Parses a bracket body such as `01-03,7` into (lo, hi, width) triples."""
  return [(lo, hi, len(low)) for low, lo, hi in _ranges(hostlist, body)]


def _split_item(hostlist, item):
  """Splits one item into its literal texts and its bracket bodies.

  Returns:
    (texts, bodies): len(texts) == len(bodies) + 1; the names are
    texts[0] + b0 + texts[1] + b1 + ... + texts[-1] for every choice of a
    number from each bracket body (see `_expand_item` for their order).
  """
  prefix, _, rest = item.partition('[')
  body, _, suffix = rest.partition(']')
  if '[' not in suffix and body:
    return [prefix, suffix], [body]
  texts = []
  bodies = []
  position = 0
  while True:
    open_at = item.find('[', position)
    if open_at < 0:
      texts.append(item[position:])
      return texts, bodies
    close_at = item.index(']', open_at)  # _split_hostlist checked the balance.
    body = item[open_at + 1:close_at]
    if not body:
      raise ValueError('Invalid hostlist %r: empty brackets in %r' %
                       (hostlist, item))
    texts.append(item[position:open_at])
    bodies.append(body)
    position = close_at + 1


def _item_size(hostlist, item, body_sizes):
  """Counts the names of an item; checks Slurm's limits on its brackets.

  Args:
    hostlist: The whole expression, for error messages.
    item: One item of it that holds brackets.
    body_sizes: Bracket body -> its number of names, for the bodies counted
      so far; updated.
  """
  _, bodies = _split_item(hostlist, item)
  size = 1
  for i, body in enumerate(bodies):
    body_size = body_sizes.get(body)
    if body_size is None:
      body_size = sum(hi - lo + 1 for _, lo, hi in _ranges(hostlist, body))
      body_sizes[body] = body_size
    if i < len(bodies) - 1 and body_size > _MAX_RANGE:
      raise ValueError(
          'Invalid hostlist %r: bracket group %d has %d hosts, more than '
          'Slurm\'s limit of %d for a group before the last' %
          (hostlist, i + 1, body_size, _MAX_RANGE))
    size *= body_size
  return size


def _numbered_names(prefix, lo, hi, width, suffix):
  """Returns `prefix + '%0*d' % (width, n) + suffix` for n from lo to hi.

  A number is written as its head `n // 1000`, zero-padded to `width - 3`,
  and a three-digit tail from `_TAILS`: a whole block of 1,000 names then
  costs one head and a concatenation per name, not a number formatting per
  name. Numbers below 1000 are formatted one by one unless `width` pads them
  beyond three digits.

  Args:
    prefix: The text before the number.
    lo: The first number.
    hi: The last number.
    width: The width to zero-pad numbers to.
    suffix: The text after the number.
  """
  formatted_end = _TAIL_BLOCK if width <= _TAIL_DIGITS else 0
  names = ['%s%0*d%s' % (prefix, width, number, suffix)
           for number in range(lo, min(hi + 1, formatted_end))]
  for head in range(max(lo, formatted_end) // _TAIL_BLOCK,
                    hi // _TAIL_BLOCK + 1):
    start = head * _TAIL_BLOCK
    tails = _TAILS[max(lo - start, 0):min(hi - start, _TAIL_BLOCK - 1) + 1]
    if suffix:
      tails = [tail + suffix for tail in tails]
    head_text = '%s%0*d' % (prefix, max(width - _TAIL_DIGITS, 0), head)
    names += [head_text + tail for tail in tails]
  return names


def _group_names(hostlist, prefix, body, suffix=''):
  """Returns `prefix + number + suffix` for every number of a bracket body.

  Args:
    hostlist: The whole expression, for error messages.
    prefix: The text before the number.
    body: The text between the brackets.
    suffix: The text after the number.
  """
  names = []
  for low, lo, hi in _ranges(hostlist, body):
    if lo == hi:
      names.append(prefix + low + suffix)  # The number as written.
    elif hi - lo < _SHORT_RANGE:
      names += ['%s%0*d%s' % (prefix, len(low), number, suffix)
                for number in range(lo, hi + 1)]
    else:
      names += _numbered_names(prefix, lo, hi, len(low), suffix)
  return names


def _expand_item(hostlist, item):
  """Expands one item in the order `scontrol show hostnames` prints.

  The last bracket varies fastest; the others, nested around it, vary from
  the first (fastest) to the next-to-last (slowest). For two brackets this is
  plain row-major order: `r[1-2]n[1-2]` gives r1n1 r1n2 r2n1 r2n2.

  Args:
    hostlist: The whole expression, for error messages.
    item: One item of it that holds brackets.

  Returns:
    The list of names.
  """
  texts, bodies = _split_item(hostlist, item)
  if len(bodies) == 1:
    prefix, suffix = texts
    return _group_names(hostlist, prefix, bodies[0], suffix)
  values = [_group_names(hostlist, '', body) for body in bodies]
  order = list(range(len(bodies) - 2, -1, -1)) + [len(bodies) - 1]
  names = []
  for combination in itertools.product(*(values[i] for i in order)):
    chosen = dict(zip(order, combination))
    names.append(''.join(texts[i] + chosen[i] for i in range(len(bodies))) +
                 texts[-1])
  return names


def expand_hostlist(hostlist):
  """Expands a Slurm hostlist expression into a list of host names.

  Follows `scontrol show hostnames`: items are separated by commas or
  whitespace; a bracket holds a comma list of numbers and `LO-HI` ranges,
  zero-padded to the width of the low bound; an item with several bracket
  groups expands to every combination, in scontrol's order; text may follow a
  bracket (`node[1-2]-ib`, as Slurm 23.11 accepts). Order and duplicates are
  kept. Where Slurm's parser accepts junk (unbalanced brackets, signs or
  spaces in ranges), this raises instead.

  Input: 'n[1-2],m5,o[3-4,6,7-9]'
  Output: ['n1', 'n2', 'm5', 'o3', 'o4', 'o6', 'o7', 'o8', 'o9']

  Args:
    hostlist: The hostlist expression, e.g. `SLURM_STEP_NODELIST`.

  Returns:
    The list of host names.

  Raises:
    ValueError: If the expression is malformed (unbalanced, nested or empty
      brackets, non-digits or a descending range in brackets), a range has more
      than `_MAX_RANGE` hosts, or the whole list more than `_MAX_HOSTS`. Nothing
      large is allocated before these checks.
  """
  if not isinstance(hostlist, str):
    raise ValueError('Invalid hostlist %r: expected a string' % (hostlist,))
  items = _split_hostlist(hostlist)
  # Every item is checked and counted before any is expanded. The parsed
  # items are not kept for the second pass: thousands of small objects that
  # outlive a pass would make Python's garbage collector walk all objects of
  # the process (TensorFlow's included), which costs more than parsing twice.
  total = 0
  body_sizes = {}
  for item in items:
    if '[' in item:
      total += _item_size(hostlist, item, body_sizes)
    else:
      total += 1
    if total > _MAX_HOSTS:
      raise ValueError('Invalid hostlist %r: expands to more than %d hosts' %
                       (hostlist, _MAX_HOSTS))
  hosts = []
  # The numbers of short bracket bodies, formatted once per body: fragmented
  # node lists repeat the same few bodies (`r1[1-2],r2[1-2],...`).
  body_numbers = {}
  for item in items:
    if '[' not in item:
      hosts.append(item)
      continue
    texts, bodies = _split_item(hostlist, item)
    if len(bodies) > 1 or body_sizes[bodies[0]] > _SHORT_RANGE:
      hosts += _expand_item(hostlist, item)
      continue
    numbers = body_numbers.get(bodies[0])
    if numbers is None:
      numbers = body_numbers[bodies[0]] = _group_names(hostlist, '', bodies[0])
    prefix, suffix = texts
    hosts += [prefix + number + suffix for number in numbers]
  return hosts


def expand_tasks_per_node(tasks_per_node):
  """Expands Slurm's compressed tasks-per-node list.

  The order is preserved so that entry i belongs to node i of the node list.
  Input: '3(x2),2,1'
  Output: [3, 3, 2, 1]

  Args:
    tasks_per_node: The string, e.g. `SLURM_STEP_TASKS_PER_NODE`.

  Returns:
    The list of task counts.

  Raises:
    ValueError: If the string is malformed or expands to more than
      `_MAX_HOSTS` entries.
  """
  if not isinstance(tasks_per_node, str):
    raise ValueError('Invalid tasks-per-node list %r: expected a string' %
                     (tasks_per_node,))
  parsed = []
  total = 0
  for part in tasks_per_node.split(','):
    match = _TASKS_PER_NODE_RE.fullmatch(part)
    if not match:
      raise ValueError(
          'Invalid tasks-per-node list %r: bad entry %r; expected N or N(xK)'
          % (tasks_per_node, part))
    repeat = int(match.group(2) or 1)
    if repeat < 1:
      raise ValueError('Invalid tasks-per-node list %r: entry %r repeats '
                       'zero times' % (tasks_per_node, part))
    total += repeat
    if total > _MAX_HOSTS:
      raise ValueError('Invalid tasks-per-node list %r: more than %d entries' %
                       (tasks_per_node, _MAX_HOSTS))
    parsed.append((int(match.group(1)), repeat))
  counts = []
  for count, repeat in parsed:
    counts += [count] * repeat
  return counts


def expand_hostlist_with_scontrol(hostlist, timeout=_SUBPROCESS_TIMEOUT_SECS):
  """Expands a hostlist with `scontrol show hostnames`, as TF r1.15 did."""
  if not os.environ.get('SLURM_CONF') and not any(
      os.path.exists(path) for path in _SLURM_CONF_PATHS):
    raise RuntimeError(
        'Cannot expand hostlist %r with scontrol: SLURM_CONF is not set and '
        'there is no slurm.conf in %s, so scontrol would look for a Slurm '
        'controller in DNS (Slurm sets SLURM_CONF in every task; outside a '
        "task set it, or use hostlist_expansion='builtin')" %
        (hostlist, ', '.join(_SLURM_CONF_PATHS)))
  command = ['scontrol', 'show', 'hostnames', hostlist]
  try:
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False)
  except FileNotFoundError:
    raise RuntimeError('Cannot expand hostlist %r: scontrol is not installed '
                       'or not on PATH' % hostlist) from None
  except subprocess.TimeoutExpired:
    raise RuntimeError('Cannot expand hostlist %r: %r did not finish within '
                       '%s s' % (hostlist, command, timeout)) from None
  output = '%s\n%s' % (result.stdout, result.stderr)
  if result.returncode != 0:
    raise RuntimeError('Cannot expand hostlist %r: %r exited with status %d: '
                       '%s' % (hostlist, command, result.returncode,
                               output.strip()))
  if 'invalid hostlist' in output.lower():
    # scontrol 22.05 reports a bad expression this way with exit status 0.
    raise ValueError('Invalid hostlist %r: scontrol says %s' %
                     (hostlist, output.strip()))
  return result.stdout.split()


def expand_hostlist_checked(hostlist):
  """Expands with both `expand_hostlist` and scontrol; raises if they differ.

  A cheap canary for sites whose Slurm grammar moves ahead of this module.
  """
  results = []
  for expand in (expand_hostlist, expand_hostlist_with_scontrol):
    try:
      results.append(expand(hostlist))
    except ValueError as e:
      results.append(e)
  builtin, slurm = results
  if isinstance(builtin, list) and builtin == slurm:
    return builtin
  if isinstance(builtin, ValueError) and isinstance(slurm, ValueError):
    raise builtin
  raise RuntimeError(
      'Hostlist %r: the built-in expansion gives %s but `scontrol show '
      'hostnames` gives %s' % (hostlist, _abbreviate(builtin),
                               _abbreviate(slurm)))


def _abbreviate(result, most=8):
  if isinstance(result, Exception):
    return 'an error (%s)' % result
  if len(result) <= most:
    return repr(result)
  return '%d names %r...' % (len(result), result[:most])


_EXPANDERS = {
    'builtin': expand_hostlist,
    'scontrol': expand_hostlist_with_scontrol,
    'check': expand_hostlist_checked,
}


def get_expander(name):
  """Returns the hostlist expander called `name`.

  Args:
    name: 'builtin' (`expand_hostlist`), 'scontrol' (`scontrol show
      hostnames`, as TensorFlow r1.15 did) or 'check' (both; they must
      agree).

  Raises:
    ValueError: If `name` is not one of these.
  """
  if not isinstance(name, str) or name not in _EXPANDERS:
    raise ValueError('hostlist_expansion=%r: expected one of %s' %
                     (name, sorted(_EXPANDERS)))
  return _EXPANDERS[name]
