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
`expand_tasks_per_node` turns `4(x2),1` into counts. Both refuse malformed or
oversized input before allocating anything large.
"""

import itertools
import re

# The most names one list may expand to. Slurm sets no total, but no step has
# more nodes (or tasks) than this.
MAX_HOSTS = 1024 * 1024
# Slurm refuses a bracket range (`LO-HI`) of more hosts than this, and a
# bracket group other than the last of more hosts in all; it reads range
# bounds as unsigned 64-bit numbers.
_MAX_RANGE = 64 * 1024
_MAX_RANGE_BOUND = 2**64 - 1
_BRACKET_RE = re.compile(r'[\[\]]')
# An item of a hostlist: text up to a separator (a comma, space, tab or
# newline), with bracket groups that may hold separators; or a bracket that
# opens no such group or closes none.
_ITEM_RE = re.compile(r'(?:[^ \t\n,\[\]]+|\[[^\[\]]*\])+|[\[\]]')
# A bracket group; splitting an item at them gives its texts and bodies.
_GROUP_RE = re.compile(r'\[([^\]]*)\]')
_RANGE_RE = re.compile(r'([0-9]+)(?:-([0-9]*))?')
_TASKS_PER_NODE_RE = re.compile(r'([0-9]+)(?:\(x([0-9]+)\))?')


def _bracket_error(hostlist):
  """Says where a "[" is not closed by a "]" before the next "[", or why."""
  is_open = False
  for bracket in _BRACKET_RE.finditer(hostlist):
    if bracket.group() == '[' and is_open:
      return 'nested "[" at position %d' % bracket.start()
    if bracket.group() == ']' and not is_open:
      return '"]" without "[" at position %d' % bracket.start()
    is_open = not is_open
  return '"[" without "]"'


def _parse_ranges(body):
  """Parses a bracket body such as `01-03,7`: its (width, lo, hi) and size.

  A range must be well formed, go up, end at most at 2**64-1 and have at most
  `_MAX_RANGE` hosts.
  """
  ranges = []
  size = 0
  for part in body.split(','):
    match = _RANGE_RE.fullmatch(part)
    if not match:
      raise ValueError('bad range %r in "[%s]"; expected N or LO-HI with '
                       'decimal digits' % (part, body))
    low, high = match.groups()
    lo = int(low)
    hi = int(high) if high else lo  # Slurm: `3-` is 3.
    if hi > _MAX_RANGE_BOUND:
      raise ValueError('%d in range %r is above 2**64-1' % (hi, part))
    if lo > hi:
      raise ValueError('range %r goes down (%d > %d)' % (part, lo, hi))
    if hi - lo + 1 > _MAX_RANGE:
      raise ValueError('range %r has %d hosts, more than Slurm\'s limit of %d '
                       'per range' % (part, hi - lo + 1, _MAX_RANGE))
    ranges.append((len(low), lo, hi))
    size += hi - lo + 1
  return tuple(ranges), size


def _parse_item(item):
  """Parses one item; checks its bracket groups' sizes.

  Returns:
    (texts, groups, count): the names are texts[0] + a number of groups[0] +
    texts[1] + ... + texts[-1] (`_names`), each group (width, lo, hi)
    ranges; count is their number, at most MAX_HOSTS + 1.
  """
  parts = _GROUP_RE.split(item)
  bodies = parts[1::2]
  if not all(bodies):
    raise ValueError('empty brackets in %r' % item)
  groups = []
  count = 1
  size = 0
  for body in bodies:
    if size > _MAX_RANGE:
      raise ValueError('bracket group %d has %d hosts, more than Slurm\'s '
                       'limit of %d for a group before the last' %
                       (len(groups), size, _MAX_RANGE))
    ranges, size = _parse_ranges(body)
    groups.append(ranges)
    count = min(count * size, MAX_HOSTS + 1)
  return tuple(parts[::2]), tuple(groups), count


def _parse(hostlist):
  """Parses a hostlist into its items as (texts, groups); checks its size."""
  items = _ITEM_RE.findall(hostlist)
  if '[' in items or ']' in items:
    raise ValueError(_bracket_error(hostlist))
  parsed = []
  total = 0
  for item in items:
    texts, groups, count = _parse_item(item)
    total += count
    if total > MAX_HOSTS:
      raise ValueError('expands to more than %d hosts' % MAX_HOSTS)
    parsed.append((texts, groups))
  return parsed


def _numbers(ranges):
  """The numbers of a bracket group, zero-padded to their low bound's width."""
  return [str(number).zfill(width)
          for width, lo, hi in ranges for number in range(lo, hi + 1)]


def _scontrol_order(groups):
  """Groups from the slowest to the fastest varying in scontrol's output.

  The last varies fastest, then the first, ..., the next-to-last slowest:
  `x[1-2]y[3-4]z[5-6]` gives x1y3z5 x1y3z6 x2y3z5 .... Its own inverse.
  """
  return groups[-2::-1] + groups[-1:]


def _names(texts, groups):
  """Expands one parsed item in the order `scontrol show hostnames` prints."""
  if not groups:
    return texts
  if len(groups) > 1:
    numbers = _scontrol_order([_numbers(ranges) for ranges in groups])
    return [
        ''.join(itertools.chain(*zip(texts, _scontrol_order(choice)))) +
        texts[-1] for choice in itertools.product(*numbers)
    ]
  (prefix, suffix), (ranges,) = texts, groups
  return [prefix + str(number).zfill(width) + suffix
          for width, lo, hi in ranges for number in range(lo, hi + 1)]


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
    ValueError: If the expression is not UTF-8 text or is malformed
      (unbalanced, nested or empty
      brackets, non-digits or a descending range in brackets), a range or a
      group before the last has more than `_MAX_RANGE` hosts, or the whole
      list more than `MAX_HOSTS`.
  """
  if not isinstance(hostlist, str):
    raise ValueError('Invalid hostlist %r: expected a string' % (hostlist,))
  try:
    hostlist.encode('utf-8')
  except UnicodeEncodeError:
    raise ValueError('Invalid hostlist %r: not UTF-8 text' %
                     (hostlist,)) from None
  try:
    parsed = _parse(hostlist)
  except ValueError as e:
    raise ValueError('Invalid hostlist %r: %s' % (hostlist, e)) from None
  hosts = []
  for texts, groups in parsed:
    hosts += _names(texts, groups)
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
      `MAX_HOSTS` entries.
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
    if total > MAX_HOSTS:
      raise ValueError('Invalid tasks-per-node list %r: more than %d entries' %
                       (tasks_per_node, MAX_HOSTS))
    parsed.append((int(match.group(1)), repeat))
  counts = []
  for count, repeat in parsed:
    counts += [count] * repeat
  return counts
