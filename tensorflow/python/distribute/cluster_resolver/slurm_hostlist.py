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
"""The grammar of Slurm's compressed host and task-count lists; safe reads.

`expand_hostlist` turns a hostlist such as `n[09-11],gpu1-ib` into host names
in the order `scontrol show hostnames` prints them, and
`expand_tasks_per_node` turns `4(x2),1` into counts, and `parse_int` reads
one number. All are pure functions that refuse malformed or oversized input
before allocating anything large.
The resolver's other layers run commands (`run_command`: nvidia-smi) and
read files (`read_regular_file`: slurm.conf, SLURM_HOSTFILE) only through
this module, within bounds of time and size.
"""

import itertools
import os
import re
import selectors
import stat
import subprocess
import time

# The most names one list may expand to. Slurm sets no total, but no step has
# more nodes (or tasks) than this.
MAX_HOSTS = 1024 * 1024
# How long a command run here may take: as long as a Slurm client's call to
# slurmctld (MessageTimeout, 10 s by default); within the KillWait (30 s by
# default) after SIGTERM there is time for two.
SUBPROCESS_TIMEOUT_SECS = 10
# The most output a command run here may print, and the largest slurm.conf
# read: far beyond a list of MAX_HOSTS host names.
MAX_READ_BYTES = 16 * 1024 * 1024
# Slurm refuses a bracket range (`LO-HI`) of more hosts than this, and a
# bracket group other than the last of more hosts in all (_MAX_RANGE and
# MAX_PREFIX_CNT in Slurm's src/common/hostlist.{c,h}).
_MAX_RANGE = 64 * 1024
# Slurm reads range bounds as unsigned 64-bit numbers.
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
# Decimal text, as Slurm's atoi reads it; at most 40 digits, since int() of
# a long string of digits is slow (and refused beyond 4300 digits).
_DECIMAL_RE = re.compile(r'\s*[0-9]{1,40}\s*')
# Where Slurm's commands find slurm.conf when SLURM_CONF is not set: the
# usual install locations (Debian's older slurm-llnl among them), and the copy
# slurmd keeps in configless mode. Without any, scontrol looks for a
# controller in DNS, which can take long to fail.
_SLURM_CONF_PATHS = ('/etc/slurm/slurm.conf', '/etc/slurm-llnl/slurm.conf',
                     '/usr/local/etc/slurm.conf', '/run/slurm/conf/slurm.conf')


def abbreviate(items, most=8):
  """Shows a list, or its first `most` items and how many there are."""
  if len(items) <= most:
    return repr(list(items))
  return '%r... (%d in all)' % (list(items[:most]), len(items))


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
    texts[1] + ... + texts[-1] for every choice of numbers (see `_names`),
    each group a tuple of (width, lo, hi) ranges; count is their number, or
    MAX_HOSTS + 1 if larger.
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

  The last varies fastest; the others, nested around it, from the first
  (fastest) to the next-to-last (slowest): `x[1-2]y[3-4]z[5-6]` gives x1y3z5
  x1y3z6 x2y3z5 ... (row-major order for two groups). Its own inverse.
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


def parse_int(name, text, minimum, maximum):
  """Parses the text of variable `name` as an int in minimum..maximum.

  Surrounding whitespace is allowed, as Slurm's own atoi; signs, non-ASCII
  digits and anything else are not.

  Raises:
    ValueError: Naming the variable and its value, if it is not such an int.
  """
  if isinstance(text, str) and _DECIMAL_RE.fullmatch(text):
    number = int(text)
    if minimum <= number <= maximum:
      return number
  raise ValueError('%s=%r: expected an integer in %d..%d' %
                   (name, text, minimum, maximum))


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
      (unbalanced, nested or empty brackets, non-digits or a descending
      range in brackets), a range or a
      group before the last has more than `_MAX_RANGE` hosts, or the whole
      list more than `MAX_HOSTS`. Nothing large is allocated before these
      checks.
  """
  if not isinstance(hostlist, str):
    raise ValueError('Invalid hostlist %r: expected a string' % (hostlist,))
  try:
    hostlist.encode('utf-8')
  except UnicodeEncodeError as e:
    # Bytes of the environment that are not UTF-8 (os.environ keeps them as
    # surrogates): no host name of TensorFlow's can hold them.
    raise ValueError('Invalid hostlist %r: not UTF-8 text (character %d)' %
                     (hostlist, e.start)) from None
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


def slurm_conf_path(environ):
  """The slurm.conf that Slurm's commands read here, or None if none is found.

  `SLURM_CONF` (Slurm sets it in every task), else the first of the usual
  places that exists.
  """
  if environ.get('SLURM_CONF'):
    return environ['SLURM_CONF']
  return next((path for path in _SLURM_CONF_PATHS if os.path.exists(path)),
              None)


def read_regular_file(path, limit):
  """Returns the bytes of the regular file `path`, of at most `limit` bytes.

  The path may be a symbolic link; what it names must be a regular file.
  Anything else (a FIFO, a device such as /dev/zero, a directory) is refused
  before it is opened, since opening some devices acts on them; what is
  opened (non-blocking, so that a FIFO put there meanwhile cannot block) is
  checked again. At most `limit` + 1 bytes are read.

  Raises:
    OSError: If it cannot be opened or read.
    ValueError: If it is not a regular file or is larger than `limit`; the
      message says which, without the path.
  """
  if not stat.S_ISREG(os.stat(path).st_mode):
    raise ValueError('not a regular file')
  fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
  with open(fd, 'rb') as opened:
    size = os.fstat(fd)
    if not stat.S_ISREG(size.st_mode):
      raise ValueError('not a regular file')
    # Up to its size when opened, and one byte more to tell a file over the
    # bound.
    data = opened.read(min(size.st_size, limit) + 1)
  if len(data) > limit:
    raise ValueError('larger than %d bytes' % limit)
  return data


def _read_pipes(process, deadline):
  """Reads the output of `process` up to MAX_READ_BYTES; None if too much.

  Returns:
    (stdout, stderr) as bytes, once both are closed; or None when they hold
    more than MAX_READ_BYTES together.

  Raises:
    subprocess.TimeoutExpired: If they are not closed by `deadline`.
  """
  chunks = {process.stdout: [], process.stderr: []}
  size = 0
  with selectors.DefaultSelector() as selector:
    for pipe in chunks:
      selector.register(pipe, selectors.EVENT_READ)
    while selector.get_map():
      left = deadline - time.monotonic()
      if left <= 0:
        raise subprocess.TimeoutExpired(process.args, SUBPROCESS_TIMEOUT_SECS)
      for key, _ in selector.select(left):
        data = os.read(key.fd, 64 * 1024)
        if not data:
          selector.unregister(key.fileobj)
        chunks[key.fileobj].append(data)
        size += len(data)
        if size > MAX_READ_BYTES:
          return None
  return b''.join(chunks[process.stdout]), b''.join(chunks[process.stderr])


def _decoded(shown, name, data):
  """`data` (stream `name` of command `shown`) as UTF-8 text."""
  try:
    return data.decode('utf-8')
  except UnicodeDecodeError as e:
    raise RuntimeError('`%s` printed %s that is not UTF-8 text (byte %d)' %
                       (shown, name, e.start)) from None


def run_command(command, missing_ok=False, statuses=(0,)):
  """Runs `command` (no shell); returns what it printed.

  It runs for at most SUBPROCESS_TIMEOUT_SECS (then it is killed) and may
  print at most MAX_READ_BYTES.

  Args:
    command: The program and its arguments, a list of strings.
    missing_ok: Return None, not raise, if the program is not on PATH.
    statuses: The exit statuses that are not a failure.

  Returns:
    (stdout, stderr) as text, or None (`missing_ok`).

  Raises:
    RuntimeError: Naming the command and what happened, if it cannot be run
      (not on PATH, not executable, not a program of this machine), does not
      finish in time, prints too much, exits with a status not in
      `statuses` (the message ends with its stdout and stderr) or prints
      what is not UTF-8 text.
  """
  shown = ' '.join(command)
  try:
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
  except FileNotFoundError:
    if missing_ok:
      return None
    raise RuntimeError('`%s` cannot run: %s is not on PATH' %
                       (shown, command[0])) from None
  except OSError as e:
    raise RuntimeError('`%s` cannot run: %s' %
                       (shown, e.strerror or e)) from None
  deadline = time.monotonic() + SUBPROCESS_TIMEOUT_SECS
  with process:
    try:
      output = _read_pipes(process, deadline)
      status = None if output is None else process.wait(
          max(0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
      raise RuntimeError('`%s` did not finish within %d s' %
                         (shown, SUBPROCESS_TIMEOUT_SECS)) from None
    finally:
      if process.poll() is None:
        process.kill()
        process.wait()
  if output is None:
    raise RuntimeError('`%s` printed more than %d bytes' %
                       (shown, MAX_READ_BYTES))
  if status not in statuses:
    printed = b''.join(output).decode('utf-8', errors='replace')
    raise RuntimeError('`%s` failed (exit status %d): %s' %
                       (shown, status, printed.strip()[-300:]))
  return tuple(_decoded(shown, name, data)
               for name, data in zip(('stdout', 'stderr'), output))
