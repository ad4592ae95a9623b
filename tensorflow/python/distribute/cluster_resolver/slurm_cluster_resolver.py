# Copyright 2018 The TensorFlow Authors. All Rights Reserved.
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
"""Implementation of Cluster Resolvers for the Slurm workload manager.

The module has three layers, each built only on the one before it:

1. The hostlist grammar: `expand_hostlist` and `expand_tasks_per_node` turn
   Slurm's compressed strings (`n[09-11],gpu1-ib`, `4(x2),1`) into lists.
2. A model of the Slurm step: `_SlurmStep` says on which node every task of
   the step runs and which GPUs Slurm lets this task see. It is read from the
   environment by `_read_step`, following Slurm's task distribution rules
   (block, cyclic, plane, arbitrary, heterogeneous steps), and checked against
   what this task can see of the truth (`SLURMD_NODENAME`, `SLURM_NODEID`,
   `SLURM_LOCALID`, `SLURM_GTIDS`).
3. The mapping to TensorFlow: `_resolve` turns a step into jobs, `host:port`
   addresses and this task's GPUs. `SlurmClusterResolver` runs it once, then
   sets `CUDA_VISIBLE_DEVICES`.

Only `SlurmClusterResolver.__init__` and the small readers it calls touch the
outside world (environment, files, subprocesses); everything else is pure.
"""

import argparse
import bisect
import collections
import dataclasses
import functools
import itertools
import json
import os
import re
import subprocess
import sys
from typing import Mapping, Optional, Sequence, Tuple

from absl import logging

# Slurm refuses a bracket range (`LO-HI`) of more hosts than this, and a
# bracket group other than the last of more hosts in all (MAX_RANGE and
# MAX_PREFIX_CNT in Slurm's src/common/hostlist.{c,h}).
MAX_RANGE = 64 * 1024
# The most names one expression may expand to. Slurm sets no total, but no
# step has more nodes (or tasks) than this; larger results are refused before
# anything is allocated.
MAX_HOSTS = 1024 * 1024

_BRACKET_RE = re.compile(r'[\[\]]')
# An item of a hostlist whose brackets are balanced: text up to a separator
# (a comma, space, tab or newline), with bracket groups that may hold
# separators.
_HOSTLIST_ITEM_RE = re.compile(r'(?:[^ \t\n,\[\]]|\[[^\]]*\])+')
_RANGE_RE = re.compile(r'([0-9]+)(?:-([0-9]*))?')
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
_JOB_NAME_RE = re.compile(r'[A-Za-z][A-Za-z0-9_]*')
_NO_GPUS = ('', 'NoDevFiles')
_MAX_PORT = 65535
# port_base='derived' picks a block of ports in [_DERIVED_PORTS_START,
# _DERIVED_PORTS_END) from the job and step ids.
# Below Linux's default ephemeral range (32768-60999), so that outgoing
# connections do not hold them.
_DERIVED_PORTS_START = 20000
_DERIVED_PORTS_END = 32768
_DERIVED_PORTS_BLOCK = 64
_SUBPROCESS_TIMEOUT_SECS = 30
# Where the resolver notes, as JSON [task, Slurm's value, value written], the
# CUDA_VISIBLE_DEVICES it replaced, so that another resolver in the same task
# (this process or a child) starts from Slurm's value and not from its share.
_SAVED_CVD_VAR = 'TF_SLURM_RESOLVER_CUDA_VISIBLE_DEVICES'

# ------------------------------------------------------------------------------
# Layer 1: the hostlist grammar.
# ------------------------------------------------------------------------------


def _split_hostlist(hostlist):
  """Splits a hostlist at separators outside brackets; drops empty items."""
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


def _parse_ranges(hostlist, body):
  """Parses a bracket body such as `01-03,7` into (lo, hi, width) triples."""
  ranges = []
  for part in body.split(','):
    match = _RANGE_RE.fullmatch(part)
    if not match:
      raise ValueError(
          'Invalid hostlist %r: bad range %r in "[%s]"; expected N or LO-HI '
          'with decimal digits' % (hostlist, part, body))
    lo = int(match.group(1))
    hi = int(match.group(2)) if match.group(2) else lo  # Slurm: `3-` is 3.
    if hi > _MAX_RANGE_BOUND:
      raise ValueError('Invalid hostlist %r: %d in range %r is above 2**64-1' %
                       (hostlist, hi, part))
    if lo > hi:
      raise ValueError('Invalid hostlist %r: range %r goes down (%d > %d)' %
                       (hostlist, part, lo, hi))
    if hi - lo + 1 > MAX_RANGE:
      raise ValueError(
          'Invalid hostlist %r: range %r has %d hosts, more than Slurm\'s '
          'limit of %d per range' % (hostlist, part, hi - lo + 1, MAX_RANGE))
    ranges.append((lo, hi, len(match.group(1))))
  return ranges


def _parse_host_pattern(hostlist, item):
  """Splits one item into literal texts and bracket groups.

  Returns:
    (texts, groups): len(texts) == len(groups) + 1; the names are
    texts[0] + g0 + texts[1] + g1 + ... + texts[-1] for every choice of a
    number from each group (see `_expand_pattern` for their order).
  """
  texts = []
  groups = []
  position = 0
  while True:
    open_at = item.find('[', position)
    if open_at < 0:
      texts.append(item[position:])
      return texts, groups
    close_at = item.index(']', open_at)  # _split_hostlist checked the balance.
    body = item[open_at + 1:close_at]
    if not body:
      raise ValueError('Invalid hostlist %r: empty brackets in %r' %
                       (hostlist, item))
    texts.append(item[position:open_at])
    groups.append(_parse_ranges(hostlist, body))
    position = close_at + 1


def _group_size(group):
  return sum(hi - lo + 1 for lo, hi, _ in group)


def _pattern_size(hostlist, groups):
  """Counts a pattern's names; checks Slurm's limit on all but the last group."""
  size = 1
  for i, group in enumerate(groups):
    group_size = _group_size(group)
    if i < len(groups) - 1 and group_size > MAX_RANGE:
      raise ValueError(
          'Invalid hostlist %r: bracket group %d has %d hosts, more than '
          'Slurm\'s limit of %d for a group before the last' %
          (hostlist, i + 1, group_size, MAX_RANGE))
    size *= group_size
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


def _is_short(number_range):
  lo, hi, _ = number_range
  return hi - lo < _SHORT_RANGE


def _group_names(prefix, group, suffix=''):
  """Returns `prefix + number + suffix` for every number of a bracket group.

  The numbers of a long range are written by `_numbered_names`; those of
  short ranges (a fragmented node list has thousands) are formatted one by
  one, a run of short ranges in one pass.

  Args:
    prefix: The text before the number.
    group: A parsed bracket group: (lo, hi, width) ranges.
    suffix: The text after the number.
  """
  names = []
  for short, ranges in itertools.groupby(group, key=_is_short):
    if short:
      names += ['%s%0*d%s' % (prefix, width, number, suffix)
                for lo, hi, width in ranges for number in range(lo, hi + 1)]
    else:
      for lo, hi, width in ranges:
        names += _numbered_names(prefix, lo, hi, width, suffix)
  return names


def _expand_pattern(texts, groups):
  """Expands one parsed item in the order `scontrol show hostnames` prints.

  The last group varies fastest; the others, nested around it, vary from the
  first (fastest) to the next-to-last (slowest). For two groups this is plain
  row-major order: `r[1-2]n[1-2]` gives r1n1 r1n2 r2n1 r2n2.

  Args:
    texts: Literal texts around the groups, one more than `groups`.
    groups: Parsed bracket groups.

  Returns:
    The list of names.
  """
  if not groups:
    return [texts[0]]
  if len(groups) == 1:
    prefix, suffix = texts
    return _group_names(prefix, groups[0], suffix)
  values = [_group_names('', group) for group in groups]
  order = list(range(len(groups) - 2, -1, -1)) + [len(groups) - 1]
  names = []
  for combination in itertools.product(*(values[i] for i in order)):
    chosen = dict(zip(order, combination))
    names.append(''.join(texts[i] + chosen[i] for i in range(len(groups))) +
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
      than `MAX_RANGE` hosts, or the whole list more than `MAX_HOSTS`. Nothing
      large is allocated before these checks.
  """
  if not isinstance(hostlist, str):
    raise ValueError('Invalid hostlist %r: expected a string' % (hostlist,))
  items = _split_hostlist(hostlist)
  # An item without brackets is a name as it stands (None here): a long list
  # of names then costs no parsed object per name.
  patterns = [
      _parse_host_pattern(hostlist, item) if '[' in item else None
      for item in items
  ]
  total = 0
  for pattern in patterns:
    total += 1 if pattern is None else _pattern_size(hostlist, pattern[1])
    if total > MAX_HOSTS:
      raise ValueError('Invalid hostlist %r: expands to more than %d hosts' %
                       (hostlist, MAX_HOSTS))
  hosts = []
  for item, pattern in zip(items, patterns):
    if pattern is None:
      hosts.append(item)
    else:
      hosts.extend(_expand_pattern(*pattern))
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


def _expand_hostlist_with_scontrol(hostlist, timeout=_SUBPROCESS_TIMEOUT_SECS):
  """Expands a hostlist with `scontrol show hostnames`, as TF r1.15 did."""
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


# ------------------------------------------------------------------------------
# Layer 2: a model of the Slurm step.
# ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _SlurmGpus:
  """What Slurm says of the GPUs of this task.

  Attributes:
    visible: The GPU ids this task may use, as `CUDA_VISIBLE_DEVICES` names
      them, or None when nothing says which GPUs exist.
    source: The variable `visible` came from.
    bound_per_task: Whether Slurm already gave this task its own GPUs
      (`--gpus-per-task`, `--gpu-bind`), so that they are not to be split.
    on_node: GPUs Slurm gave this node (`SLURM_GPUS_ON_NODE`), if known.
    step_total: GPUs of the whole job when it asked for a total
      (`--gpus=N`: `SLURM_GPUS`), which Slurm may spread unevenly over the
      nodes; None otherwise.
  """
  visible: Optional[Tuple[str, ...]] = None
  source: str = 'CUDA_VISIBLE_DEVICES'
  bound_per_task: bool = False
  on_node: Optional[int] = None
  step_total: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class _Runs:
  """The tasks of a Slurm step, by rank, as runs of consecutive ranks.

  Run i is the ranks `firsts[i]` to `firsts[i] + counts[i] - 1`, all on node
  `nodes[i]` (an index into the step's nodes), where they are the tasks of
  local indices `starts[i]` to `starts[i] + counts[i] - 1`; a task's local
  index is its index among the step's tasks on its node, in rank order. The
  block distribution has one run per node, cyclic one per task: the work on
  a block step grows with its nodes, not with its tasks. The runs are kept
  as columns, so that a step of many nodes needs no object per node.
  """
  firsts: Sequence[int]
  nodes: Sequence[int]
  starts: Sequence[int]
  counts: Sequence[int]

  @classmethod
  def from_rows(cls, rows):
    """Makes the runs from (first, node, start, count) rows in rank order."""
    columns = tuple(zip(*rows))
    return cls(*columns) if columns else cls((), (), (), ())

  def __iter__(self):
    """Yields (first, node, start, count) for every run, in rank order."""
    return zip(self.firsts, self.nodes, self.starts, self.counts)


@dataclasses.dataclass(frozen=True)
class _SlurmStep:
  """Where every task of a Slurm step runs, and what this task may use.

  Attributes:
    nodes: The step's node names, in the order Slurm numbers them
      (`SLURM_NODEID`).
    tasks_per_node: The number of tasks on each of `nodes`.
    runs: Where every task of the step runs, by Slurm rank (`SLURM_PROCID`),
      as `_Runs`.
    task_index: This process's rank.
    gpus: What Slurm says of this task's GPUs (`_SlurmGpus`).
    node_components: For every node, its heterogeneous job component
      (`srun A : B`), or None if the step is not heterogeneous.
    counts_source: Where the tasks per node came from, for error messages.
    reserved_ports: The ports Slurm reserved for the step on every node
      (`srun --resv-ports`: `SLURM_STEP_RESV_PORTS`), or None.
    job_step: (`SLURM_JOB_ID`, `SLURM_STEP_ID`) as ints, 0 where unset.
  """
  nodes: Tuple[str, ...]
  tasks_per_node: Tuple[int, ...]
  runs: _Runs
  task_index: int
  gpus: '_SlurmGpus' = None
  node_components: Optional[Tuple[int, ...]] = None
  counts_source: str = ''
  reserved_ports: Optional[Tuple[int, ...]] = None
  job_step: Tuple[int, int] = (0, 0)

  @property
  def num_tasks(self):
    return sum(self.tasks_per_node)

  @property
  def heterogeneous(self):
    return self.node_components is not None

  def place(self, rank):
    """Returns (node index, local index) of the task of rank `rank`."""
    runs = self.runs
    run = bisect.bisect_right(runs.firsts, rank) - 1
    return runs.nodes[run], runs.starts[run] + rank - runs.firsts[run]

  def node_ranks(self, node):
    """Returns the ranks of the tasks on node index `node`, in order."""
    return [
        rank for first, run_node, _, count in self.runs if run_node == node
        for rank in range(first, first + count)
    ]

  @functools.cached_property
  def task_nodes(self):
    """For every task, by rank, the index into `nodes` of its node."""
    return [node for _, node, _, count in self.runs for _ in range(count)]

  @functools.cached_property
  def local_indices(self):
    """Each task's index among the step's tasks on its node, by rank."""
    return [
        index for _, _, local, count in self.runs
        for index in range(local, local + count)
    ]


def _runs(task_nodes, num_nodes):
  """Returns the `_Runs` of the node index of every rank."""
  rows = []
  seen = [0] * num_nodes
  first = 0
  for node, ranks in itertools.groupby(task_nodes):
    count = sum(1 for _ in ranks)
    rows.append((first, node, seen[node], count))
    seen[node] += count
    first += count
  return _Runs.from_rows(rows)


def _deal(counts, chunk):
  """Deals ranks to nodes in turn, `chunk` at a time, skipping full nodes.

  This is Slurm's cyclic (chunk 1) and plane (chunk = plane size)
  distribution. The work is linear in the number of tasks.

  Args:
    counts: Tasks on each node, in node order.
    chunk: How many consecutive ranks a node takes per turn.

  Returns:
    The `_Runs` of the step: a run per turn of a node.
  """
  left = list(counts)
  active = [node for node, count in enumerate(counts) if count]
  rows = []
  first = 0
  while active:
    for node in active:
      take = min(chunk, left[node])
      rows.append((first, node, counts[node] - left[node], take))
      first += take
      left[node] -= take
    active = [node for node in active if left[node]]
  return _Runs.from_rows(rows)


def _block(counts):
  """Returns the `_Runs` of the block distribution: one run per node."""
  firsts = tuple(itertools.accumulate(counts, initial=0))[:-1]
  return _Runs(firsts, range(len(counts)), (0,) * len(counts), tuple(counts))


def _parse_distribution(distribution, plane_size):
  """Returns ('block'|'cyclic'|'plane'|'arbitrary', chunk) for nodes.

  Args:
    distribution: `SLURM_DISTRIBUTION`, e.g. 'cyclic', 'block:cyclic',
      'plane', 'arbitrary'; None when unset (Slurm's default is block).
    plane_size: `SLURM_DIST_PLANESIZE`, or None.
  """
  if not distribution:
    return 'block', 1
  node_level = distribution.split(',')[0].split(':')[0].strip().lower()
  if node_level in ('block', '*', 'unknown'):
    return 'block', 1
  if node_level in ('cyclic', 'arbitrary'):
    return node_level, 1
  if node_level.startswith('plane'):
    size = node_level[len('plane='):] if '=' in node_level else plane_size
    if size is None:
      raise RuntimeError('SLURM_DISTRIBUTION=%r needs SLURM_DIST_PLANESIZE, '
                         'which is not set' % distribution)
    return 'plane', _positive_int('SLURM_DIST_PLANESIZE', size)
  raise ValueError('SLURM_DISTRIBUTION=%r: unknown task distribution %r; '
                   'expected block, cyclic, plane or arbitrary' %
                   (distribution, node_level))


def _positive_int(name, value, minimum=1):
  """Parses `value` of variable `name` as an int >= minimum."""
  text = str(value).strip()
  if not re.fullmatch('[0-9]+', text) or int(text) < minimum:
    raise ValueError('%s=%r: expected an integer >= %d' %
                     (name, value, minimum))
  return int(text)


def _hostfile_runs(path, nodes, counts, expand):
  """Reads the arbitrary distribution's host of each rank from SLURM_HOSTFILE.

  Args:
    path: The file named by `SLURM_HOSTFILE`: host names or hostlists, one or
      more per line, `#` starts a comment.
    nodes: The step's node names.
    counts: Tasks on each node.
    expand: The hostlist expander.

  Returns:
    The `_Runs` of the step.

  Raises:
    RuntimeError: If the file cannot be read (tasks that could not read it
      would number the step differently), or contradicts the step's node
      list or counts.
    ValueError: If a line is not a hostlist.
  """
  try:
    with open(path) as hostfile:
      lines = hostfile.read().splitlines()
  except OSError as e:
    raise RuntimeError(
        'SLURM_HOSTFILE=%r cannot be read (%s); the arbitrary distribution '
        'needs it on every node, e.g. on a shared filesystem' %
        (path, e.strerror or e)) from None
  names = []
  for number, line in enumerate(lines, 1):
    names.extend(_parse_variable('SLURM_HOSTFILE', path, lambda _: expand(
        line.split('#', 1)[0]), ', line %d' % number))
  names = names[:sum(counts)]
  index = {node: i for i, node in enumerate(nodes)}
  unknown = sorted(set(names) - set(index))
  if unknown:
    raise RuntimeError('SLURM_HOSTFILE=%r names hosts %s that are not in the '
                       'step node list %s' % (path, unknown, list(nodes)))
  task_nodes = [index[name] for name in names]
  if collections.Counter(task_nodes) != collections.Counter(
      dict(enumerate(counts))):
    raise RuntimeError(
        'SLURM_HOSTFILE=%r puts %d ranks on nodes %s, but Slurm says the '
        'step runs %s tasks on them' %
        (path, len(names), list(nodes), counts))
  return _runs(task_nodes, len(nodes))


@dataclasses.dataclass(frozen=True)
class _StepVariables:
  """The raw Slurm variables that describe a step, with their names."""
  nodelist_var: str
  tasks_per_node_var: str
  num_tasks_var: str
  is_batch: bool


_STEP_VARIABLES = _StepVariables(
    'SLURM_STEP_NODELIST', 'SLURM_STEP_TASKS_PER_NODE', 'SLURM_STEP_NUM_TASKS',
    is_batch=False)
_JOB_VARIABLES = _StepVariables(
    'SLURM_JOB_NODELIST', 'SLURM_TASKS_PER_NODE', 'SLURM_NTASKS',
    is_batch=True)


def _require(environ, name, hint=''):
  try:
    return environ[name]
  except KeyError:
    raise RuntimeError('%s is not set: not running inside a Slurm task?%s' %
                       (name, hint)) from None


def _het_components(environ, nodes, expand):
  """Returns the heterogeneous job component of each node, or None.

  In a heterogeneous step (`srun A : B`), `SLURM_STEP_NODELIST` is the merged,
  name-sorted list, while ranks run over the components in order, block-wise
  within each, and `SLURM_NODEID` follows component order too. Each
  component's nodes are in `SLURM_JOB_NODELIST_HET_GROUP_<n>` (Slurm 22.05:
  `..._PACK_GROUP_<n>`); components never share a node.

  Args:
    environ: The environment.
    nodes: The step's node names.
    expand: The hostlist expander.

  Returns:
    The component of each of `nodes`, or None outside heterogeneous steps.

  Raises:
    RuntimeError: If a component's node list is missing or the lists leave a
      node of the step out.
  """
  size_var = next((name for name in ('SLURM_HET_SIZE', 'SLURM_PACK_SIZE')
                   if name in environ), None)
  if size_var is None:
    return None
  size = _positive_int(size_var, environ[size_var])
  component_of = {}
  for component in range(size):
    names = ['SLURM_JOB_NODELIST_%s_%d' % (kind, component)
             for kind in ('HET_GROUP', 'PACK_GROUP')]
    name = next((name for name in names if name in environ), None)
    if name is None:
      raise RuntimeError('%s is not set (nor %s, its Slurm 22.05 name) in a '
                         'heterogeneous step (%s=%d): the nodes of component '
                         '%d are unknown' %
                         (names[0], names[1], size_var, size, component))
    for node in _parse_variable(name, environ[name], expand):
      component_of.setdefault(node, component)
  missing = [node for node in nodes if node not in component_of]
  if missing:
    raise RuntimeError('Nodes %s of the heterogeneous step are in no '
                       'component\'s SLURM_JOB_NODELIST_HET_GROUP_<n>' % missing)
  return [component_of[node] for node in nodes]


def _het_task_index(environ, nodes, counts):
  """Returns this task's index in a heterogeneous step: its node-major slot.

  A task sees only its own component's SLURM_DISTRIBUTION, so no task can
  place the ranks of the other components. Tasks are numbered node by node
  instead, in component order (the same as Slurm's ranks when every
  component is laid out block-wise, Slurm's default), which every task
  computes alike; a task finds itself by its node and SLURM_LOCALID.
  """
  name = _require(environ, 'SLURMD_NODENAME')
  if name not in nodes:
    raise RuntimeError('SLURMD_NODENAME=%r is not in the step node list %s' %
                       (name, list(nodes)))
  node = nodes.index(name)
  local = _positive_int('SLURM_LOCALID', _require(environ, 'SLURM_LOCALID'),
                        minimum=0)
  if local >= counts[node]:
    raise RuntimeError('SLURM_LOCALID=%d but node %r runs %d tasks of the step'
                       % (local, name, counts[node]))
  return sum(counts[:node]) + local


def _layout(environ, nodes, counts, expand, is_batch):
  """Orders the nodes as Slurm numbers them and places every rank on one.

  Returns:
    (nodes, counts, the `_Runs` of the step, the heterogeneous component of
    every node or None).
  """
  components = None if is_batch else _het_components(environ, nodes, expand)
  if components is not None:
    order = sorted(range(len(nodes)), key=components.__getitem__)
    nodes = tuple(nodes[i] for i in order)
    counts = [counts[i] for i in order]
    return nodes, counts, _block(counts), tuple(components[i] for i in order)
  kind, chunk = _parse_distribution(
      environ.get('SLURM_DISTRIBUTION'), environ.get('SLURM_DIST_PLANESIZE'))
  if kind == 'block':
    return nodes, counts, _block(counts), None
  if kind in ('cyclic', 'plane'):
    return nodes, counts, _deal(counts, chunk), None
  hostfile = _require(environ, 'SLURM_HOSTFILE',
                      ' SLURM_DISTRIBUTION=arbitrary needs it.')
  return nodes, counts, _hostfile_runs(hostfile, nodes, counts, expand), None


def _parse_variable(name, value, parse, where=''):
  """Returns `parse(value)`; a ValueError names the variable and its value."""
  try:
    return parse(value)
  except ValueError as e:
    raise ValueError('%s=%r%s: %s' % (name, value, where, e)) from None


def _node_counts(environ, variables, tasks_per_node, expand):
  """Reads the node list and tasks per node; applies the user's override.

  Returns:
    (nodes, counts, where the counts came from).
  """
  nodelist = environ.get(variables.nodelist_var)
  if nodelist is None and not isinstance(tasks_per_node, Mapping):
    _require(environ, variables.nodelist_var, ' Launch the program with srun.')
  nodes = tuple(tasks_per_node if nodelist is None else _parse_variable(
      variables.nodelist_var, nodelist, expand))
  slurm_value = environ.get(variables.tasks_per_node_var)
  slurm_counts = (None if slurm_value is None else _parse_variable(
      variables.tasks_per_node_var, slurm_value, expand_tasks_per_node))
  source = ('tasks_per_node=%r' % (tasks_per_node,) if tasks_per_node is not None
            else '%s=%r' % (variables.tasks_per_node_var, slurm_value))
  if tasks_per_node is None:
    if slurm_counts is None:
      _require(environ, variables.tasks_per_node_var,
               ' Launch the program with srun.')
    counts = slurm_counts
  elif isinstance(tasks_per_node, Mapping):
    if set(tasks_per_node) != set(nodes):
      raise RuntimeError('tasks_per_node names hosts %s, but %s=%r has hosts '
                         '%s' % (sorted(tasks_per_node), variables.nodelist_var,
                                 nodelist, list(nodes)))
    counts = [tasks_per_node[node] for node in nodes]
  else:
    counts = [tasks_per_node] * len(nodes)
  # Slurm's counts are ints (expand_tasks_per_node): a node-by-node search is
  # needed only for a user's override or a count below 1.
  if tasks_per_node is not None or min(counts, default=1) < 1:
    for node, count in zip(nodes, counts):
      if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError('%s: node %r has %r tasks; expected an integer >= 1'
                         % (source, node, count))
  if len(counts) != len(nodes):
    raise ValueError(
        '%s=%r has %d entries but %s=%r has %d nodes; expected one entry per '
        'node' % (variables.tasks_per_node_var, slurm_value, len(counts),
                  variables.nodelist_var, nodelist, len(nodes)))
  if slurm_counts is not None and slurm_counts != counts:
    raise RuntimeError(
        'tasks_per_node=%r asks for %s tasks on nodes %s, but Slurm assigned '
        '%s (%s=%r)' % (tasks_per_node, counts, list(nodes), slurm_counts,
                        variables.tasks_per_node_var, slurm_value))
  return nodes, counts, source


def _check_against_task(environ, step, is_batch):
  """Compares the derived layout with what this task's variables say.

  Raises:
    RuntimeError: Showing both sides, on any difference.
  """
  node, local = step.place(step.task_index)
  derived = {
      'SLURMD_NODENAME': step.nodes[node],
      'SLURM_NODEID': str(node),
      'SLURM_LOCALID': str(local),
  }
  # A batch script's SLURM_GTIDS is 0, whatever the job; in a heterogeneous
  # step, task indices are node-major slots, not ranks.
  if not is_batch and not step.heterogeneous:
    derived['SLURM_GTIDS'] = ','.join(map(str, step.node_ranks(node)))
  mismatches = [
      '%s: Slurm says %r, derived %r' % (name, environ[name], value)
      for name, value in derived.items()
      if name in environ and environ[name].strip() != value
  ]
  if mismatches:
    raise RuntimeError(
        'The task layout derived from the Slurm environment does not match '
        'this task (task %d of %d on nodes %s, tasks per node %s, '
        'SLURM_DISTRIBUTION=%r): %s' %
        (step.task_index, step.num_tasks, list(step.nodes),
         list(step.tasks_per_node), environ.get('SLURM_DISTRIBUTION'),
         '; '.join(mismatches)))


def _task_identity(environ):
  return [environ.get(name) for name in ('SLURM_JOB_ID', 'SLURM_STEP_ID',
                                         'SLURM_PROCID')]


def _slurm_cuda_visible_devices(environ):
  """Returns CUDA_VISIBLE_DEVICES as Slurm set it for this task, or None.

  If a resolver of this same task replaced it (and it still holds what that
  resolver wrote), Slurm's value is the one that resolver saved.
  """
  current = environ.get('CUDA_VISIBLE_DEVICES')
  try:
    task, original, written = json.loads(environ.get(_SAVED_CVD_VAR, ''))
  except (ValueError, TypeError):
    return current
  if task == _task_identity(environ) and written == current:
    return original
  return current


def _binds_gpus_per_task(tres_bind):
  """Whether SLURMD_TRES_BIND (e.g. 'gpu:per_task:1') binds GPUs per task.

  `--gpus-per-task`, `--gpu-bind=single:N|map_gpu:..|mask_gpu:..` give each
  task its own GPUs; `--gpu-bind=closest` (or none) may leave every task of a
  node all of its GPUs, which are then split like `--gres` GPUs.
  """
  for binding in tres_bind.split(';'):
    kind, _, options = binding.partition(':')
    if kind == 'gpu':
      modes = {option.split(':')[0] for option in options.split(',')}
      return bool(modes & {'per_task', 'single', 'map_gpu', 'mask_gpu'})
  return False


def _parse_gpu_total(text):
  """Parses `--gpus`' `[type:]N[,[type:]N...]` (SLURM_GPUS) into a count."""
  total = 0
  for item in text.split(','):
    count = item.rsplit(':', 1)[-1].strip()
    if not count.isdigit():
      raise ValueError('expected [TYPE:]COUNT, e.g. 4 or a100:4')
    total += int(count)
  return total


def _read_gpus(environ):
  """Reads what Slurm says of this task's GPUs into a `_SlurmGpus`."""
  on_node = environ.get('SLURM_GPUS_ON_NODE')
  if on_node is not None:
    on_node = _positive_int('SLURM_GPUS_ON_NODE', on_node, minimum=0)
  step_total = environ.get('SLURM_GPUS')
  if step_total is not None:
    step_total = _parse_variable('SLURM_GPUS', step_total, _parse_gpu_total)
  source = 'CUDA_VISIBLE_DEVICES'
  value = _slurm_cuda_visible_devices(environ)
  for fallback in ('SLURM_STEP_GPUS', 'SLURM_JOB_GPUS'):
    if value is None:
      source, value = fallback, environ.get(fallback)
  if value is None:
    return _SlurmGpus(on_node=on_node, step_total=step_total)
  value = value.strip()
  visible = () if value in _NO_GPUS else tuple(
      gpu.strip() for gpu in value.split(','))
  if any(not gpu for gpu in visible) or len(set(visible)) != len(visible):
    raise ValueError('%s=%r: expected distinct comma-separated device ids' %
                     (source, value))
  bound = (_binds_gpus_per_task(environ.get('SLURMD_TRES_BIND', '')) or
           (on_node is not None and on_node > len(visible)))
  return _SlurmGpus(visible, source, bound, on_node, step_total)


def _parse_ports(text):
  """Parses a port list such as `12000-12003,12005`."""
  ports = tuple(
      number for lo, hi, _ in _parse_ranges(text, text)
      for number in range(lo, hi + 1))
  if not all(1 <= port <= _MAX_PORT for port in ports):
    raise ValueError('expected ports within 1..%d' % _MAX_PORT)
  return ports


def _read_step(environ, tasks_per_node=None, expand=expand_hostlist):
  """Builds the model of this task's Slurm step from its environment.

  Args:
    environ: The environment, e.g. `os.environ`.
    tasks_per_node: The user's override: None, an int, or a dict host ->
      count.
    expand: The hostlist expander.

  Returns:
    A `_SlurmStep`.

  Raises:
    RuntimeError: If variables are missing or contradict each other.
    ValueError: If a variable is malformed.
  """
  variables = (_STEP_VARIABLES if 'SLURM_STEP_NODELIST' in environ or
               'SLURM_STEP_TASKS_PER_NODE' in environ else _JOB_VARIABLES)
  _require(environ, 'SLURM_PROCID',
           ' Launch the program with srun (inside sbatch or salloc).')
  nodes, counts, counts_source = _node_counts(environ, variables,
                                             tasks_per_node, expand)
  if variables.num_tasks_var in environ:
    num_tasks = _positive_int(variables.num_tasks_var,
                              environ[variables.num_tasks_var])
    if num_tasks != sum(counts):
      raise RuntimeError(
          '%s=%d but the tasks per node %s add up to %d; launch the program '
          'with srun so that the step variables are consistent' %
          (variables.num_tasks_var, num_tasks, counts, sum(counts)))
  if len(set(nodes)) != len(nodes):
    raise ValueError('%s=%r names a node twice' %
                     (variables.nodelist_var, environ[variables.nodelist_var]))
  nodes, counts, runs, node_components = _layout(environ, nodes, counts,
                                                 expand, variables.is_batch)
  if node_components is None:
    rank = _positive_int('SLURM_PROCID', environ['SLURM_PROCID'], minimum=0)
  else:
    rank = _het_task_index(environ, nodes, counts)
  if rank >= sum(counts):
    raise RuntimeError('SLURM_PROCID=%d but the step has only %d tasks (%s)' %
                       (rank, sum(counts), counts_source))
  reserved_ports = environ.get('SLURM_STEP_RESV_PORTS')
  if reserved_ports is not None:
    reserved_ports = _parse_variable('SLURM_STEP_RESV_PORTS', reserved_ports,
                                     _parse_ports)
  step = _SlurmStep(
      nodes=tuple(nodes),
      tasks_per_node=tuple(counts),
      runs=runs,
      task_index=rank,
      gpus=_read_gpus(environ),
      node_components=node_components,
      counts_source=counts_source,
      reserved_ports=reserved_ports,
      job_step=tuple(
          _positive_int(name, environ.get(name, '0'), minimum=0)
          for name in ('SLURM_JOB_ID', 'SLURM_STEP_ID')))
  _check_against_task(environ, step, variables.is_batch)
  return step


# ------------------------------------------------------------------------------
# Layer 3: the mapping to TensorFlow.
# ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Resolution:
  """What the resolver decided: the cluster, this task's role and GPUs.

  Attributes:
    cluster: Job name -> task addresses (`host:port`), jobs in sorted order.
    task_type: This task's job name.
    task_id: This task's index in its job.
    gpus: This task's GPUs, and how its node's are dealt
      (`_GpuAssignment`).
  """
  cluster: Tuple[Tuple[str, Tuple[str, ...]], ...]
  task_type: str
  task_id: int
  gpus: '_GpuAssignment'


def _check_count(name, value, optional=True):
  if value is None and optional:
    return
  if isinstance(value, bool) or not isinstance(value, int) or value < 0:
    raise ValueError('%s=%r: expected %san integer >= 0' %
                     (name, value, 'None or ' if optional else ''))


def _check_job_name(argument, name):
  if not isinstance(name, str) or not _JOB_NAME_RE.fullmatch(name):
    raise ValueError('%s: job name %r is not a valid TensorFlow job name (a '
                     'letter, then letters, digits or _)' % (argument, name))


def _check_jobs(jobs):
  if not isinstance(jobs, Mapping) or not jobs:
    raise ValueError('jobs=%r: expected a non-empty dict of job name -> '
                     'number of tasks' % (jobs,))
  for name, count in jobs.items():
    _check_job_name('jobs', name)
    _check_count('jobs[%r]' % name, count, optional=False)


def _task_jobs(step, jobs, het_jobs):
  """Returns the job of every task of the step, by rank, as runs.

  Without `het_jobs`, ranks go to jobs in sorted job-name order, as
  TensorFlow always did. With it, every task of heterogeneous component c
  belongs to job `het_jobs[c]`.

  Returns:
    (job name, number of consecutive ranks in it) pairs, in rank order, each
    of another job than the one before; no number is 0. A job has one run, or
    in a heterogeneous step at most one per component.

  Raises:
    RuntimeError: If `jobs` asks for other task counts than Slurm assigned.
    ValueError: If `jobs` or `het_jobs` is malformed.
  """
  if jobs is not None:
    _check_jobs(jobs)
  if het_jobs is None:
    jobs = {'worker': step.num_tasks} if jobs is None else jobs
    if sum(jobs.values()) != step.num_tasks:
      raise RuntimeError(
          'Requested %d tasks (jobs=%r) but Slurm assigned %d tasks to this '
          'step (%s)' % (sum(jobs.values()), dict(jobs), step.num_tasks,
                         step.counts_source))
    return [(name, jobs[name]) for name in sorted(jobs) if jobs[name]]
  if isinstance(het_jobs, str) or not isinstance(het_jobs, Sequence):
    raise ValueError('het_jobs=%r: expected a list of job names, one per '
                     'heterogeneous component' % (het_jobs,))
  for name in het_jobs:
    _check_job_name('het_jobs', name)
  if not step.heterogeneous:
    raise RuntimeError('het_jobs=%r needs a heterogeneous step (srun A : B); '
                       'SLURM_HET_SIZE is not set' % (list(het_jobs),))
  if max(step.node_components) >= len(het_jobs):
    raise ValueError('het_jobs=%r names %d components, but the step has tasks '
                     'of component %d' % (list(het_jobs), len(het_jobs),
                                          max(step.node_components)))
  job_runs = []
  for _, node, _, count in step.runs:
    name = het_jobs[step.node_components[node]]
    if job_runs and job_runs[-1][0] == name:
      count += job_runs.pop()[1]
    job_runs.append((name, count))
  from_slurm = {}
  for name, count in job_runs:
    from_slurm[name] = from_slurm.get(name, 0) + count
  if jobs is not None and {k: v for k, v in jobs.items() if v} != from_slurm:
    raise RuntimeError(
        'jobs=%r does not match the heterogeneous components: het_jobs=%r '
        'gives %r (%s)' % (dict(jobs), list(het_jobs), from_slurm,
                           step.counts_source))
  return job_runs


def _ports(step, port_base):
  """Returns the port of a node's i-th task, for i up to the busiest node's.

  A task's port is port_base + its local index (its index among the step's
  tasks on its node).

  Args:
    step: The `_SlurmStep`.
    port_base: An int, 'reserved' (the ports `srun --resv-ports` reserved,
      `SLURM_STEP_RESV_PORTS`) or 'derived' (a block of ports in
      [20000, 32768) chosen from the job and step ids: the same in every task
      of the step and after a requeue, and unlikely to collide with another
      step on the same nodes).

  Raises:
    ValueError: If `port_base` is malformed or a port falls outside 1..65535.
    RuntimeError: If Slurm reserved too few ports.
  """
  needed = max(step.tasks_per_node)
  if port_base == 'reserved':
    reserved = step.reserved_ports
    if step.heterogeneous:
      raise RuntimeError(
          "port_base='reserved' cannot work in a heterogeneous step: Slurm "
          'reserves each component\'s ports on its own nodes but gives every '
          'task all of them in SLURM_STEP_RESV_PORTS=%s; use '
          "port_base='derived' or a fixed port_base" %
          ','.join(map(str, reserved or ())))
    if reserved is None:
      raise RuntimeError("port_base='reserved' needs SLURM_STEP_RESV_PORTS: "
                         'launch the step with srun --resv-ports=N (Slurm '
                         'reserves ports from MpiParams=ports=LO-HI in '
                         'slurm.conf)')
    if len(reserved) < needed:
      raise RuntimeError(
          'SLURM_STEP_RESV_PORTS has %d ports %s, but the busiest node runs '
          '%d tasks' % (len(reserved), list(reserved), needed))
    return list(reserved[:needed])
  if port_base == 'derived':
    block = -(-needed // _DERIVED_PORTS_BLOCK) * _DERIVED_PORTS_BLOCK
    blocks = (_DERIVED_PORTS_END - _DERIVED_PORTS_START) // block
    if not blocks:
      raise RuntimeError("port_base='derived': %d tasks on the busiest node "
                         'need more ports than [%d, %d) holds' %
                         (needed, _DERIVED_PORTS_START, _DERIVED_PORTS_END))
    job_id, step_id = step.job_step
    port_base = _DERIVED_PORTS_START + block * (
        (job_id * 7919 + step_id) % blocks)
  if isinstance(port_base, bool) or not isinstance(port_base, int):
    raise ValueError("port_base=%r: expected an integer port, 'reserved' or "
                     "'derived'" % (port_base,))
  if port_base < 1 or port_base + needed - 1 > _MAX_PORT:
    raise ValueError(
        'port_base=%d: tasks on the busiest node need ports %d..%d, which '
        'must lie within 1..%d' % (port_base, port_base,
                                   port_base + needed - 1, _MAX_PORT))
  return [port_base + index for index in range(needed)]


def _addresses(step, ports):
  """Returns the `host:port` of every task, by rank, as a tuple.

  Args:
    step: The `_SlurmStep`.
    ports: The port of a node's i-th task, for every i (`_ports`).
  """
  # str(), as '%s' formats it: hosts named by a user's tasks_per_node may be
  # of any type.
  hosts = list(map(str, step.nodes))
  port_texts = [':%d' % port for port in ports]
  return tuple([
      hosts[node] + port_text for _, node, local, count in step.runs
      for port_text in port_texts[local:local + count]
  ])


def _assign_jobs(job_runs, addresses, task_index):
  """Groups the task addresses by job; finds this task's job and index.

  Args:
    job_runs: The job of every task, as runs (`_task_jobs`).
    addresses: The address of every task, by rank, as a tuple.
    task_index: This task's rank.

  Returns:
    (cluster, task type, task id) as in `_Resolution`.
  """
  cluster = {}
  first = 0
  for name, count in job_runs:
    job = cluster.get(name, ())
    if first <= task_index < first + count:
      task_type, task_id = name, len(job) + task_index - first
    # A job has few runs (`_task_jobs`), so that joining them stays cheap.
    cluster[name] = job + addresses[first:first + count]
    first += count
  return (tuple((name, cluster[name]) for name in sorted(cluster)), task_type,
          task_id)


def _deal_gpus(node_gpus, per_task, local):
  """Returns the GPUs of the task of local index `local` on a node.

  The node's tasks take `per_task` GPUs each, by value, in local index order;
  when the node has fewer GPUs than tasks (`per_task` is then 1), task l
  shares the (l mod G)-th of the node's G GPUs.

  Args:
    node_gpus: The node's GPU ids, as Slurm lists them.
    per_task: GPUs each task uses.
    local: The task's index among the step's tasks on its node.
  """
  if per_task * (local + 1) > len(node_gpus):
    return (node_gpus[local % len(node_gpus)],)
  return node_gpus[local * per_task:(local + 1) * per_task]


def _gpu_sharers(num_gpus, num_tasks, local):
  """How many of a node's `num_tasks` tasks use the GPU of task `local`."""
  if num_tasks <= num_gpus:
    return 1
  return num_tasks // num_gpus + (local % num_gpus < num_tasks % num_gpus)


def _busiest_node_tasks(step, node):
  """Tasks on the busiest node of the step (of `node`'s component)."""
  if not step.heterogeneous:
    return max(step.tasks_per_node)
  component = step.node_components[node]
  return max(count for count, other in zip(step.tasks_per_node,
                                           step.node_components)
             if other == component)


def _warn_if_step_gpus_uneven(step, node, num_gpus):
  """Warns when `--gpus=N` (SLURM_GPUS) may have left nodes uneven.

  GPUs given per node (`--gres=gpu:N`, `--gpus-per-node`) are the same on
  every node, so this node's count stands for all. `--gpus=N` lets Slurm
  spread N GPUs over the nodes as it likes; a task sees only its own node's,
  and knows the spread was even only when N is its node's count times the
  number of nodes.
  """
  if step.gpus.step_total is None:
    return
  num_nodes = sum(1 for other in step.node_components or step.nodes
                  if not step.heterogeneous or
                  other == step.node_components[node])
  if num_nodes > 1 and step.gpus.step_total != num_gpus * num_nodes:
    logging.warning(
        'Slurm spread SLURM_GPUS=%d GPUs over %d nodes and gave this one %d: '
        'workers on other nodes may use a different number of GPUs, which '
        'MultiWorkerMirroredStrategy does not support; pass gpus_per_task.',
        step.gpus.step_total, num_nodes, num_gpus)


@dataclasses.dataclass(frozen=True)
class _GpuAssignment:
  """The GPUs of the tasks of this task's node.

  Attributes:
    per_task: GPUs each task of the step (or of its heterogeneous component)
      uses.
    node_gpus: The GPU ids dealt among the node's tasks by `_deal_gpus`, or
      None when Slurm bound this task's own GPUs or nothing is to be dealt.
    task_gpus: This task's GPU ids for `CUDA_VISIBLE_DEVICES`, or None to
      leave it alone.
    sharers: How many tasks of the node use this task's GPU (1: its own).
  """
  per_task: int
  node_gpus: Optional[Tuple[str, ...]]
  task_gpus: Optional[Tuple[str, ...]]
  sharers: int = 1

  def of_local_task(self, local):
    """Returns the GPUs of the node's task of local index `local`, or None."""
    if self.node_gpus is None:
      return None
    return _deal_gpus(self.node_gpus, self.per_task, local)


def _assign_gpus(step, gpus_per_node, gpus_per_task, count_node_gpus):
  """Decides how many GPUs every task uses, and which this task's node deals.

  GPUs that Slurm bound to this task stay with it. GPUs that Slurm gave the
  node are dealt among the node's tasks by local index, by value: each task
  of the step gets k = G // T GPUs, where G is the node's GPU count and T the
  number of tasks on the step's busiest node, so that every worker has the
  same number. When k would be 0 and neither count was given, each task gets
  one GPU, shared round-robin within its node.

  Args:
    step: The `_SlurmStep`.
    gpus_per_node: The user's value or None.
    gpus_per_task: The user's value or None.
    count_node_gpus: Returns the number of GPUs on this node when nothing in
      the environment says (nvidia-smi); called only then.

  Returns:
    A `_GpuAssignment`.

  Raises:
    RuntimeError: If more GPUs are requested than Slurm gave.
  """
  gpus = step.gpus
  visible, source = gpus.visible, gpus.source
  if gpus.bound_per_task:
    per_task = len(visible) if gpus_per_task is None else gpus_per_task
    if per_task > len(visible):
      raise RuntimeError(
          'Requested %d GPUs per task (gpus_per_task) but Slurm bound %d to '
          'this task (%s=%r)' % (per_task, len(visible), source,
                                 ','.join(visible)))
    if (gpus_per_node is not None and gpus.on_node is not None and
        gpus_per_node > gpus.on_node):
      raise RuntimeError(
          'Requested more GPUs per node than available: gpus_per_node=%d but '
          'Slurm gave this node %d (SLURM_GPUS_ON_NODE)' %
          (gpus_per_node, gpus.on_node))
    return _GpuAssignment(per_task, None, visible[:per_task])
  defaults = gpus_per_node is None and gpus_per_task is None
  if visible is None:
    source = 'gpus_per_node'
    if gpus_per_node is None:
      gpus_per_node, source = count_node_gpus(), 'nvidia-smi --list-gpus'
      if not gpus_per_node:
        # No GPU anywhere: CUDA_VISIBLE_DEVICES stays as is.
        return _GpuAssignment(0, None, None)
    visible = tuple(str(i) for i in range(gpus_per_node))
  if gpus_per_node is None:
    gpus_per_node = len(visible)
  elif gpus_per_node > len(visible):
    raise RuntimeError(
        'Requested more GPUs per node than available: gpus_per_node=%d but '
        'this node has %d (%s=%r)' % (gpus_per_node, len(visible), source,
                                      ','.join(visible)))
  node_gpus = visible[:gpus_per_node]
  node, local = step.place(step.task_index)
  on_node = step.tasks_per_node[node]
  busiest = _busiest_node_tasks(step, node)
  per_task = gpus_per_node // busiest if gpus_per_task is None else (
      gpus_per_task)
  if per_task * busiest > gpus_per_node:
    raise RuntimeError(
        'Requested more GPUs per node than available: %d tasks on the busiest '
        'node x %d GPUs per task (gpus_per_task) > %d GPUs per node (%s)' %
        (busiest, per_task, gpus_per_node, source))
  if defaults:
    _warn_if_step_gpus_uneven(step, node, gpus_per_node)
  sharers = 1
  if defaults and gpus_per_node and not per_task:
    per_task = 1
    sharers = _gpu_sharers(gpus_per_node, on_node, local)
    logging.warning(
        'This node has %d GPUs (%s) for %d tasks of the step, and the busiest '
        'node %d: every task uses one GPU, and this task\'s GPU is used by %d '
        'task(s) of this node%s. Pass gpus_per_task to choose otherwise.',
        gpus_per_node, source, on_node, busiest, sharers,
        ' (TF_FORCE_GPU_ALLOW_GROWTH=true unless set, so that they do not '
        'each reserve all of its memory)' if sharers > 1 else '')
  elif gpus_per_node and not per_task:
    logging.warning('This node has %d GPUs (%s) for %d tasks: this task gets '
                    'none.', gpus_per_node, source, on_node)
  elif per_task * on_node < gpus_per_node:
    logging.info(
        'Each task uses %d GPU(s), as many as the %d tasks of the busiest node '
        'can each have; %d of this node\'s %d GPUs stay unused. Pass '
        'gpus_per_task to choose otherwise.', per_task, busiest,
        gpus_per_node - per_task * on_node, gpus_per_node)
  if not visible and gpus.visible is not None:
    # Slurm's value already hides every GPU.
    return _GpuAssignment(per_task, None, None)
  return _GpuAssignment(per_task, node_gpus,
                        _deal_gpus(node_gpus, per_task, local), sharers)


def _resolve(step, jobs, port_base, gpus_per_node, gpus_per_task,
             count_node_gpus, het_jobs=None):
  """Maps a Slurm step to TensorFlow. Pure apart from `count_node_gpus`."""
  _check_count('gpus_per_node', gpus_per_node)
  _check_count('gpus_per_task', gpus_per_task)
  job_runs = _task_jobs(step, jobs, het_jobs)
  addresses = _addresses(step, _ports(step, port_base))
  cluster, task_type, task_id = _assign_jobs(job_runs, addresses,
                                             step.task_index)
  gpus = _assign_gpus(step, gpus_per_node, gpus_per_task, count_node_gpus)
  return _Resolution(cluster, task_type, task_id, gpus)


def _count_nvidia_gpus(timeout=_SUBPROCESS_TIMEOUT_SECS):
  """Counts this node's GPUs with `nvidia-smi --list-gpus`; 0 without it."""
  command = ['nvidia-smi', '--list-gpus']
  try:
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False)
  except FileNotFoundError:
    return 0
  except subprocess.TimeoutExpired:
    raise RuntimeError('%r did not finish within %s s; pass gpus_per_node to '
                       'skip it' % (command, timeout)) from None
  if result.returncode != 0:
    if 'no devices were found' in (result.stdout + result.stderr).lower():
      return 0
    raise RuntimeError(
        'Could not get the number of GPUs: %r exited with status %d: %s; '
        'pass gpus_per_node to skip it' %
        (command, result.returncode, (result.stdout + result.stderr).strip()))
  return sum(line.startswith('GPU ') for line in result.stdout.splitlines())


def get_num_gpus():
  """Returns the number of GPUs this process may use on the current node.

  `CUDA_VISIBLE_DEVICES` if set (`''` and `NoDevFiles` mean none), else the
  number `nvidia-smi --list-gpus` reports (0 without nvidia-smi).
  """
  visible = _read_gpus(os.environ).visible
  return _count_nvidia_gpus() if visible is None else len(visible)


def _expand_hostlist_checked(hostlist):
  """Expands with both `expand_hostlist` and scontrol; raises if they differ.

  A cheap canary for sites whose Slurm grammar moves ahead of this module.
  """
  results = []
  for expand in (expand_hostlist, _expand_hostlist_with_scontrol):
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


_HOSTLIST_EXPANDERS = {
    'builtin': expand_hostlist,
    'scontrol': _expand_hostlist_with_scontrol,
    'check': _expand_hostlist_checked,
}
_HOSTLIST_EXPANSION_VAR = 'TF_SLURM_HOSTLIST_EXPANSION'


def _hostlist_expander(hostlist_expansion, environ):
  """Returns the expander named by the argument, else by the environment."""
  name = 'hostlist_expansion'
  if hostlist_expansion is None:
    name = _HOSTLIST_EXPANSION_VAR
    hostlist_expansion = environ.get(_HOSTLIST_EXPANSION_VAR, 'builtin')
  if hostlist_expansion not in _HOSTLIST_EXPANDERS:
    raise ValueError('%s=%r: expected one of %s' %
                     (name, hostlist_expansion, sorted(_HOSTLIST_EXPANDERS)))
  return _HOSTLIST_EXPANDERS[hostlist_expansion]


# ------------------------------------------------------------------------------
# The explain command: what the resolver reads and decides, with no
# TensorFlow (so that it answers at once), no servers and no GPUs touched.
# ------------------------------------------------------------------------------

_EXPLAINED_VARIABLES = re.compile(
    r'(SLURM_(PROCID|LOCALID|NODEID|GTIDS|STEP_NODELIST|STEP_TASKS_PER_NODE|'
    r'STEP_NUM_TASKS|JOB_NODELIST|TASKS_PER_NODE|NTASKS|DISTRIBUTION|'
    r'DIST_PLANESIZE|HOSTFILE|HET_SIZE|PACK_SIZE|JOB_NODELIST_(HET|PACK)_GROUP_'
    r'\d+|STEP_GPUS|JOB_GPUS|GPUS_ON_NODE|STEP_RESV_PORTS|JOB_ID|STEP_ID)|'
    r'SLURMD_NODENAME|SLURMD_TRES_BIND|CUDA_VISIBLE_DEVICES|%s|%s)$' %
    (_SAVED_CVD_VAR, _HOSTLIST_EXPANSION_VAR))


def _parse_jobs(text):
  jobs = {}
  for item in text.split(','):
    name, _, count = item.partition('=')
    if not count.isdigit():
      raise argparse.ArgumentTypeError(
          '%r: expected NAME=COUNT[,NAME=COUNT...]' % text)
    jobs[name] = int(count)
  return jobs


def _parse_port_base(text):
  return text if text in ('reserved', 'derived') else int(text)


def _explain_parser():
  parser = argparse.ArgumentParser(
      prog='python -m %s' % __spec__.name if __spec__ else None,
      description='Shows what SlurmClusterResolver reads and decides for this '
      'Slurm task (run it inside srun or a batch script). Starts no '
      'TensorFlow server and touches no GPU.')
  parser.add_argument('--all', action='store_true',
                      help='show every task of the step')
  parser.add_argument('--tf-config', action='store_true',
                      help='print only the TF_CONFIG JSON of this task')
  parser.add_argument('--jobs', type=_parse_jobs,
                      help='e.g. chief=1,ps=2,worker=4 (default: all workers)')
  parser.add_argument('--het-jobs', type=lambda text: text.split(','),
                      help='job of each heterogeneous component, e.g. ps,worker')
  parser.add_argument('--port-base', type=_parse_port_base, default=8888,
                      help="an int, 'reserved' or 'derived' (default 8888)")
  parser.add_argument('--gpus-per-node', type=int)
  parser.add_argument('--gpus-per-task', type=int)
  parser.add_argument('--tasks-per-node', type=int)
  parser.add_argument('--rpc-layer', default='grpc')
  parser.add_argument('--hostlist-expansion',
                      choices=sorted(_HOSTLIST_EXPANDERS))
  return parser


def _task_gpus(step, resolution, task):
  """GPUs of a task of the step, as far as this task can tell, or None.

  Besides its own, a task knows the GPUs of the tasks on its node when Slurm
  gave the node GPUs to deal among them.
  """
  if task == step.task_index:
    return resolution.gpus.task_gpus
  if step.task_nodes[task] != step.task_nodes[step.task_index]:
    return None
  return resolution.gpus.of_local_task(step.local_indices[task])


def _format_gpus(gpus):
  return '-' if gpus is None else ','.join(gpus) or 'none'


def _explain(environ, args, out):
  """Writes what the resolver reads and decides for this task to `out`."""
  expand = _hostlist_expander(args.hostlist_expansion, environ)
  step = _read_step(environ, args.tasks_per_node, expand)
  resolution = _resolve(step, args.jobs, args.port_base, args.gpus_per_node,
                        args.gpus_per_task, lambda: 0, args.het_jobs)
  cluster = {name: list(addresses) for name, addresses in resolution.cluster}
  if args.tf_config:
    out.write(json.dumps({
        'cluster': cluster,
        'task': {'type': resolution.task_type, 'index': resolution.task_id},
        'rpc_layer': args.rpc_layer,
    }) + '\n')
    return
  task_jobs = []
  for name, addresses in resolution.cluster:
    task_jobs.extend((name, i, address) for i, address in enumerate(addresses))
  by_address = {address: (name, i) for name, i, address in task_jobs}
  addresses = _addresses(step, _ports(step, args.port_base))
  out.write('Variables read:\n')
  for name in sorted(n for n in environ if _EXPLAINED_VARIABLES.match(n)):
    out.write('  %s=%s\n' % (name, environ[name]))
  out.write('Nodes, as Slurm numbers them: %s\n' % ' '.join(step.nodes))
  out.write('Tasks per node: %s (%s)\n' % (
      ','.join(map(str, step.tasks_per_node)), step.counts_source))
  out.write('Jobs: %s\n' % ', '.join(
      '%s=%d' % (name, len(a)) for name, a in resolution.cluster))
  if step.gpus.visible is None:
    gpus_note = ('no CUDA_VISIBLE_DEVICES: the resolver counts GPUs with '
                 'nvidia-smi (not run here)')
  else:
    gpus_note = '%s=%s, %s' % (
        step.gpus.source, _format_gpus(step.gpus.visible),
        'bound to this task by Slurm' if step.gpus.bound_per_task else
        "the node's, split among its tasks")
  out.write('GPUs: %s; %d per task\n' % (gpus_note,
                                          resolution.gpus.per_task))
  tasks = range(step.num_tasks) if args.all else [step.task_index]
  out.write('%-6s %-14s %-6s %-14s %-22s %s\n' %
            ('rank', 'node', 'local', 'task', 'address', 'GPUs'))
  for task in tasks:
    name, index = by_address[addresses[task]]
    out.write('%-6d %-14s %-6d %-14s %-22s %s%s\n' % (
        task, step.nodes[step.task_nodes[task]], step.local_indices[task],
        '%s:%d' % (name, index), addresses[task],
        _format_gpus(_task_gpus(step, resolution, task)),
        '   <- this task' if task == step.task_index and args.all else ''))


def main(argv=None, environ=None, out=None):
  """Runs the explain command; returns the exit status."""
  args = _explain_parser().parse_args(argv)
  try:
    _explain(os.environ if environ is None else environ, args,
             sys.stdout if out is None else out)
  except (RuntimeError, ValueError) as e:
    sys.stderr.write('error: %s\n' % e)
    return 1
  return 0


if __name__ == '__main__':
  sys.exit(main())

# pylint: disable=g-import-not-at-top
# Below this line TensorFlow is imported; the explain command above runs
# without it, so that it answers in a fraction of a second.
from tensorflow.python.distribute.cluster_resolver.cluster_resolver import ClusterResolver
from tensorflow.python.distribute.cluster_resolver.cluster_resolver import format_master_url
from tensorflow.python.training.server_lib import ClusterSpec
from tensorflow.python.util.tf_export import tf_export
# pylint: enable=g-import-not-at-top


@tf_export('distribute.cluster_resolver.SlurmClusterResolver')
class SlurmClusterResolver(ClusterResolver):
  """ClusterResolver for systems with the Slurm workload manager.

  Create it in every task of an `srun` step. It reads the step from Slurm's
  environment variables (node list, tasks per node, task distribution, GPU
  binding), hands the step's tasks to TensorFlow jobs and gives each task the
  address `node:port` of the node Slurm really runs it on, so that

  ```python
  resolver = tf.distribute.cluster_resolver.SlurmClusterResolver()
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      cluster_resolver=resolver)
  ```

  started with `srun python train.py` trains across the whole allocation.

  Tasks are Slurm ranks: TF task i (over jobs in sorted name order) is
  `SLURM_PROCID` i. For example, in a 4-task step,
  `SlurmClusterResolver(jobs={'ps': 1, 'worker': 3})` makes rank 0 `ps:0` and
  ranks 1-3 `worker:0..2`. Ports count up from `port_base` on each node.

  GPUs follow Slurm: if it gave the node's GPUs to all of its tasks
  (`--gres=gpu:N`), the local tasks split `CUDA_VISIBLE_DEVICES` by local rank,
  as many to every task as the busiest node allows;
  if it bound GPUs per task (`--gpus-per-task`, `--gpu-bind`), each task keeps
  its own. Without GPUs the resolver works too (0 GPUs per task).
  """

  def __init__(self,
               jobs=None,
               port_base=8888,
               gpus_per_node=None,
               gpus_per_task=None,
               tasks_per_node=None,
               auto_set_gpu=True,
               rpc_layer='grpc',
               hostlist_expansion=None,
               het_jobs=None):
    """Creates a new SlurmClusterResolver object.

    Everything is resolved and checked here, once; `CUDA_VISIBLE_DEVICES` is
    set (if `auto_set_gpu`) only after every check passed, and on any error
    the environment is left as it was.

    Used environment variables: `SLURM_PROCID`, `SLURM_STEP_NODELIST`,
    `SLURM_STEP_TASKS_PER_NODE`, `SLURM_STEP_NUM_TASKS` (in a batch script
    without a step: `SLURM_JOB_NODELIST`, `SLURM_TASKS_PER_NODE`,
    `SLURM_NTASKS`), `SLURM_DISTRIBUTION`, `SLURM_DIST_PLANESIZE`,
    `SLURM_HOSTFILE`, `SLURM_HET_SIZE` and `SLURM_JOB_NODELIST_HET_GROUP_<n>`
    (or the `PACK` names), `SLURMD_NODENAME`, `SLURM_NODEID`, `SLURM_LOCALID`,
    `SLURM_GTIDS`, `CUDA_VISIBLE_DEVICES`, `SLURM_STEP_GPUS`,
    `SLURM_JOB_GPUS`, `SLURM_GPUS_ON_NODE`, `SLURMD_TRES_BIND`,
    `SLURM_STEP_RESV_PORTS`, `SLURM_JOB_ID`, `SLURM_STEP_ID`,
    `TF_SLURM_HOSTLIST_EXPANSION`. Besides `CUDA_VISIBLE_DEVICES`, the
    resolver sets `TF_SLURM_RESOLVER_CUDA_VISIBLE_DEVICES` to remember
    Slurm's value.

    Args:
      jobs: Dictionary with job names as key and number of tasks in the job as
        value. Defaults to as many 'worker's as there are tasks in the step.
        Tasks are handed to jobs in sorted job-name order.
      port_base: The first port number to start with for processes on a node;
        a task's port is `port_base` plus its index among the step's tasks on
        its node. 'reserved' takes the ports `srun --resv-ports=N` reserved
        (`SLURM_STEP_RESV_PORTS`); 'derived' a block in [20000, 32768)
        chosen from the job and step ids, the same in every task and after a
        requeue.
      gpus_per_node: Number of GPUs available on each node. Defaults to the
        GPUs Slurm gave the node (`CUDA_VISIBLE_DEVICES`), else the number
        nvidia-smi reports, else 0.
      gpus_per_task: Number of GPUs to be used for each task. Defaults to the
        GPUs Slurm bound to the task, else to `gpus_per_node` divided by the
        tasks on the busiest node of the step, the same in every task; when
        that is 0 and neither count was given, each task gets one GPU,
        shared round-robin with the other tasks of its node (which then set
        TF_FORCE_GPU_ALLOW_GROWTH=true unless it is set). A given value must
        fit the busiest node of the step.
      tasks_per_node: Number of tasks running on each node: an int, or a dict
        mapping host names to task counts. Defaults to Slurm's
        `SLURM_STEP_TASKS_PER_NODE` (`SLURM_TASKS_PER_NODE` in a batch
        script); a value that contradicts it is an error.
      auto_set_gpu: Set `CUDA_VISIBLE_DEVICES` to this task's GPUs.
      rpc_layer: The protocol TensorFlow uses to communicate between nodes.
      hostlist_expansion: 'builtin' to expand node lists in Python,
        'scontrol' to run `scontrol show hostnames` as TF r1.15 did, or
        'check' to do both and raise if they differ. Defaults to the
        environment variable TF_SLURM_HOSTLIST_EXPANSION, else 'builtin'.
      het_jobs: In a heterogeneous step (`srun A : B`), the job of each
        component, e.g. ['ps', 'worker']: component 0's tasks are then ps:0..
        and component 1's worker:0... Task counts come from Slurm; `jobs`,
        if given too, must agree.

    Raises:
      RuntimeError: If more GPUs per node or a different number of tasks are
        requested than Slurm assigned, or the Slurm environment is missing or
        inconsistent.
      ValueError: If an argument or a Slurm variable is malformed.
    """
    expand = _hostlist_expander(hostlist_expansion, os.environ)
    if tasks_per_node is not None and not isinstance(tasks_per_node, Mapping):
      _check_count('tasks_per_node', tasks_per_node)
    step = _read_step(os.environ, tasks_per_node, expand)
    resolution = _resolve(step, jobs, port_base, gpus_per_node, gpus_per_task,
                          _count_nvidia_gpus, het_jobs)
    self._step = step
    self._resolution = resolution
    self._cluster_spec = ClusterSpec(dict(resolution.cluster))
    self.task_type = resolution.task_type
    self.task_id = resolution.task_id
    self.rpc_layer = rpc_layer
    if auto_set_gpu:
      _set_cuda_visible_devices(resolution.gpus)

  def cluster_spec(self):
    """Returns the ClusterSpec of the step: every job's `host:port` list.

    It was resolved once, at construction; calling this changes nothing.
    """
    return self._cluster_spec

  def get_task_info(self):
    """Returns the job name and task index of this process."""
    return self.task_type, self.task_id

  def master(self, task_type=None, task_id=None, rpc_layer=None):
    """Returns the master string for connecting to a TensorFlow master.

    Args:
      task_type: (Optional) Overrides the default auto-selected task type.
      task_id: (Optional) Overrides the default auto-selected task index.
      rpc_layer: (Optional) Overrides the default RPC protocol TensorFlow uses
        to communicate across nodes.

    Returns:
      A connection string such as 'grpc://n1:8888', or '' if no task is
      selected.
    """
    task_type = task_type if task_type is not None else self.task_type
    task_id = task_id if task_id is not None else self.task_id
    if task_type is None or task_id is None:
      return ''
    return format_master_url(
        self._cluster_spec.task_address(task_type, task_id),
        rpc_layer or self.rpc_layer)

  def num_accelerators(self,
                       task_type=None,
                       task_id=None,
                       config_proto=None):
    """Returns the number of GPUs each task uses, e.g. {'GPU': 2}."""
    del task_type, task_id, config_proto  # Every task uses as many.
    return {'GPU': self._resolution.gpus.per_task}


def _set_cuda_visible_devices(gpus):
  """Sets CUDA_VISIBLE_DEVICES to this task's GPUs if that changes anything.

  Slurm's own value is saved in `_SAVED_CVD_VAR`, so that another resolver in
  this task (this process or a child) splits Slurm's list, not this share.
  A task that shares its GPU with other tasks of its node also sets
  TF_FORCE_GPU_ALLOW_GROWTH=true, unless the user set it, so that none of
  them reserves all of the GPU's memory.

  Args:
    gpus: The task's `_GpuAssignment`.
  """
  task_gpus = gpus.task_gpus
  if task_gpus is None:
    return
  if gpus.sharers > 1:
    os.environ.setdefault('TF_FORCE_GPU_ALLOW_GROWTH', 'true')
  value = ','.join(task_gpus)
  if os.environ.get('CUDA_VISIBLE_DEVICES') == value:
    return
  saved = [_task_identity(os.environ),
           _slurm_cuda_visible_devices(os.environ), value]
  os.environ[_SAVED_CVD_VAR] = json.dumps(saved)
  os.environ['CUDA_VISIBLE_DEVICES'] = value
