"""`expand_hostlist` against Slurm's own `scontrol show hostnames`.

A seeded generator builds a few thousand hostlist expressions. It decides the
class of each one from how it built it, never from what the module or
scontrol prints:

* valid: every form of the grammar (names separated by commas, spaces or
  tabs; zero padding; comma lists and `LO-HI` ranges in brackets; several
  bracket groups; duplicates; numbers up to 2**64-2; the limits).
  scontrol must print exactly the module's list.
* malformed: one defect that Slurm 22.05 rejects, placed where it does not
  swallow it (a descending range, empty brackets or list items, non-digits,
  a range or group over Slurm's limits, a stray `]` or `[[` at the last
  bracket). scontrol must print "Invalid hostlist" and the module must raise
  ValueError naming the bad part. Slurm 23.11 and later (24.11 here) accept
  the last two, and must print what the generator says they read: a stray
  `]` is text after the last bracket (`n[1-2]]x` is n1]x n2]x), and before a
  nested `[` everything is literal (`a[1]b[[2-3]]` is a[1]b[2] a[1]b[3]);
  the module refuses both as unbalanced brackets.
* known differences from Slurm 22.05 (Debian 12's scontrol), each with both
  outcomes stated exactly, and 24.11's where it differs
  (`_SCONTROL_SINCE_2311`):
  - text after the last bracket (`gpu[1-2]-ib`): Slurm 22.05 rejects it;
    the module expands it as Slurm 23.11 and later do, i.e. like the
    expression without that text, with the text appended to every name
    (24.11 must print exactly the module's list);
  - a newline between names: a separator since Slurm 23.02, as in the
    module, which must expand like the same expression with commas;
  - an enumerated list (`_KNOWN_DIFFERENCES`): junk that Slurm accepts and
    the module refuses, numbers above 2**64-1, Slurm's bugs.
  Any other disagreement fails.

scontrol needs only a three-line slurm.conf, no daemon; `SLURM_CONF` always
points at one in a temporary directory (without it scontrol looks for a
configuration server in DNS). The scontrol is the one on PATH (Debian 12's
slurm-client, 22.05), or with SLURM_LAB_SLURM=20.11, 24.11 or 26.05 the one
in the Slurm lab's Debian root of that series (tools/slurm_lab/root.sh; as
root), whose version must then be that series; tools/test.sh runs the test
with each. Slurm 20.11 answers every case as 22.05 does, 26.05 as 24.11
(after a controller lookup for expressions with `{`, whose error line is
dropped: _NO_CONTROLLER_FOR_FUNCTION).
The test is skipped if scontrol is not installed; `tools/setup.sh` installs
Debian's slurm-client and builds the root. It is not in tests/BUILD: it runs under pytest only.

The module's layer 1 ("the hostlist grammar") says which grammar it
follows; the differences from Slurm 22.05 listed here are those its docstring
names (text after a bracket as in Slurm 23.11, newlines as in 23.02, junk
refused) and Slurm's own bugs.
"""

import concurrent.futures
import dataclasses
import os
import random
import re
import resource
import shutil
import signal
import string
import subprocess
import tempfile
import time
from typing import Optional, Tuple
import unittest

from absl import logging
from absl.testing import absltest

from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import expand_hostlist

_SEED = 20261130
_NUM_VALID = 1300
_NUM_MALFORMED = 600
_NUM_SUFFIXED = 250
_NUM_NEWLINE = 60
# Each generated expression expands to at most this many names.
_MAX_NAMES = 300
_ULONG_MAX = 2**64 - 1
_SCONTROL_TIMEOUT_SECS = 30
_SCONTROL_WORKERS = 4
_SHOW_FAILURES = 15

# Characters of literal name text. Besides letters, digits and `-_.`, every
# other printable ASCII character is an ordinary name character for both
# (except brackets and separators); they appear now and then.
_NAME_CHARS = string.ascii_letters + string.digits + '-_.'
_RARE_CHARS = ''.join(sorted(set(string.punctuation) - set('[],')))
# Characters that make a bracket list item invalid for Slurm too, when they
# follow its last digit (Slurm ignores junk after the low bound only when a
# high bound follows, so the module's refusal of `1abc-3` is listed apart).
_JUNK_CHARS = string.ascii_letters + '.:_/%#@+'


# ------------------------------------------------------------------------------
# What scontrol does.
# ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Scontrol:
  """One run of `scontrol show hostnames EXPR`."""
  returncode: Optional[int]  # None: timed out.
  stdout: str
  stderr: str

  @property
  def names(self):
    """One name per line, as scontrol prints them."""
    lines = self.stdout.split('\n')
    if lines[-1] == '':
      lines.pop()
    return lines

  @property
  def accepted(self):
    return self.returncode == 0 and not self.stderr

  @property
  def rejected(self):
    # scontrol reports a bad hostlist on stderr with exit status 0; a `fatal`
    # exits with 1. A crash (negative status: a signal) is not a rejection.
    if self.returncode == 0:
      return not self.stdout and 'Invalid hostlist' in self.stderr
    return self.returncode is not None and self.returncode > 0

  def __str__(self):
    if self.returncode is None:
      return 'scontrol timed out after %d s' % _SCONTROL_TIMEOUT_SECS
    text = 'scontrol exit %d, prints %s' % (self.returncode,
                                           _show_names(self.names))
    if self.stderr:
      text += ', stderr %r' % _shorten(self.stderr)
    return text


# Slurm 26.05's scontrol first asks the controller to expand an expression
# with a `{` (a "hostlist function"); with no controller running (the
# slurm.conf below names localhost) it prints this line on stderr, then
# expands the expression itself as 24.11 does. The line is dropped: it says
# nothing about the expression.
_NO_CONTROLLER_FOR_FUNCTION = ('scontrol: error: hostlist_create_client: '
                               'controller failed to expand hostlist '
                               'function\n')


class _ScontrolRunner:
  """Runs scontrol with a minimal environment and a three-line slurm.conf.

  `scontrol` is the command that runs it: [path], or for a Slurm of a lab
  root one that enters that Debian root (which sees this machine's /tmp,
  where the slurm.conf is) and runs /usr/bin/scontrol there.
  """

  def __init__(self, scontrol, directory):
    self._scontrol = list(scontrol)
    self._directory = directory
    conf = os.path.join(directory, 'slurm.conf')
    with open(conf, 'w') as f:
      # MessageTimeout: Slurm 26.05's controller lookup for `{` (above)
      # fails after 1 s instead of 10 (3.5 min of the test's run on 26.05).
      f.write('ClusterName=x\nSlurmctldHost=localhost\nMessageTimeout=1\n')
    self._env = {'PATH': os.environ.get('PATH', os.defpath), 'SLURM_CONF': conf}
    self._cache = {}
    self.runs = 0
    self.seconds = 0.0

  def _run(self, expr):
    # `--` ends scontrol's options: an expression may start with `-`.
    command = self._scontrol + ['--', 'show', 'hostnames', expr]
    try:
      result = subprocess.run(
          command, capture_output=True, env=self._env, cwd=self._directory,
          timeout=_SCONTROL_TIMEOUT_SECS, check=False)
    except subprocess.TimeoutExpired:
      return _Scontrol(None, '', '')
    decode = lambda b: b.decode('utf-8', 'surrogateescape')
    return _Scontrol(result.returncode, decode(result.stdout),
                     decode(result.stderr).replace(
                         _NO_CONTROLLER_FOR_FUNCTION, '', 1))

  def version(self):
    """(major, minor) of Slurm, e.g. (22, 5), from `scontrol --version`."""
    result = subprocess.run(self._scontrol + ['--version'], capture_output=True,
                            text=True, env=self._env, cwd=self._directory,
                            timeout=_SCONTROL_TIMEOUT_SECS, check=False)
    match = re.search(r'(\d+)\.(\d+)', result.stdout)
    if result.returncode != 0 or not match:
      raise RuntimeError('scontrol --version: exit %d, %r, %r' % (
          result.returncode, result.stdout, result.stderr))
    return int(match.group(1)), int(match.group(2)), result.stdout.strip()

  def run_all(self, exprs):
    """Runs each expression once, a few at a time: {expr: _Scontrol}."""
    todo = sorted(set(exprs) - set(self._cache))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(_SCONTROL_WORKERS) as pool:
      for expr, result in zip(todo, pool.map(self._run, todo)):
        self._cache[expr] = result
    self.runs += len(todo)
    self.seconds += time.monotonic() - start
    return {expr: self._cache[expr] for expr in exprs}


# ------------------------------------------------------------------------------
# What the module does, and what the tests expect.
# ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Module:
  names: Optional[Tuple[str, ...]]  # None if it raised.
  error: Optional[BaseException] = None

  def __str__(self):
    if self.error is None:
      return 'module returns %s' % _show_names(self.names)
    return 'module raises %s(%r)' % (type(self.error).__name__,
                                     _shorten(str(self.error)))


def _expand(expr):
  try:
    return _Module(tuple(expand_hostlist(expr)))
  except Exception as e:  # pylint: disable=broad-except
    return _Module(None, e)


def _raised_value_error(module):
  # Exactly ValueError, not a subclass: the module raises it itself.
  return module.error.__class__ is ValueError


@dataclasses.dataclass(frozen=True)
class _Prints:
  """Expected of scontrol: exit 0 and these names.

  If `after_error`, stderr has an error line but no "Invalid hostlist" (an
  error Slurm swallows); otherwise stderr is empty.
  """
  names: object  # A tuple of names, or a _Lazy making them.
  after_error: bool = False

  def matches(self, result):
    if result.returncode != 0 or tuple(result.names) != _names(self.names):
      return False
    if self.after_error:
      return ('error:' in result.stderr and
              'Invalid hostlist' not in result.stderr)
    return not result.stderr

  def __str__(self):
    text = 'scontrol prints %s' % _show_names(_names(self.names))
    if self.after_error:
      text += ' after an error it swallows'
    return text


class _Invalid:
  """Expected of scontrol: "Invalid hostlist", nothing printed."""

  def matches(self, result):
    return result.returncode == 0 and result.rejected

  def __str__(self):
    return 'scontrol says "Invalid hostlist"'


@dataclasses.dataclass(frozen=True)
class _Crashes:
  signum: int

  def matches(self, result):
    return result.returncode == -self.signum

  def __str__(self):
    return 'scontrol dies of %s' % signal.Signals(self.signum).name


def _prints(*names):
  return _Prints(tuple(names))


def _prints_after_error(*names):
  return _Prints(tuple(names), after_error=True)


class _Lazy:
  """Names made only when needed (a long list, kept out of import time)."""

  def __init__(self, make):
    self._make = make

  def __call__(self):
    return tuple(self._make())


def _names(names):
  return names() if isinstance(names, _Lazy) else tuple(names)


_INVALID = _Invalid()


def _shorten(text, limit=300):
  return text if len(text) <= limit else text[:limit] + '...'


def _first_difference(module_names, expected_names):
  """Where two lists of names part, for a failure message ('' if equal)."""
  if module_names is None or expected_names is None:
    return ''
  for i, (a, b) in enumerate(zip(module_names, expected_names)):
    if a != b:
      return '; name %d differs: module %r, expected %r' % (i, a, b)
  if len(module_names) != len(expected_names):
    return '; module has %d names, expected %d' % (len(module_names),
                                                   len(expected_names))
  return ''


def _show_names(names, limit=10):
  if names is None:
    return 'nothing'
  names = list(names)
  if len(names) <= limit:
    return repr(names)
  return '%r ... %r (%d names)' % (names[:limit - 2], names[-2:], len(names))


# ------------------------------------------------------------------------------
# The generator.
# ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _ValidCase:
  expr: str
  size: int  # The number of names, counted by the generator.
  groups: int  # The most bracket groups in one item.


@dataclasses.dataclass(frozen=True)
class _MalformedCase:
  expr: str
  defect: str
  # A text the module's error must name, beyond quoting the expression.
  bad_part: Optional[str]
  # How Slurm 23.11 and later read an expression with a stray `]` or a
  # nested `[` (None for the other defects, which every Slurm rejects): each
  # item as (text before each name, a valid expression giving the names, text
  # after each name). `n[1-2]]x`: ('', 'n[1-2]', ']x'); `a[1]b[[2-3]]`:
  # ('a[1]b[', '[2-3]', ']'), i.e. the text before the last `[` is literal.
  reading_2311: Optional[Tuple[Tuple[str, str, str], ...]] = None


@dataclasses.dataclass(frozen=True)
class _SuffixedCase:
  expr: str
  # The items as (expression without the text after the last bracket, that
  # text); the text is '' for items without any.
  items: Tuple[Tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class _NewlineCase:
  expr: str
  with_commas: str  # The same expression with ',' for every newline.


class _Generator:
  """Builds hostlist expressions whose class is known by construction."""

  def __init__(self, seed):
    self._rng = random.Random(seed)

  # Pieces.

  def _text(self, min_len, max_len):
    """Literal name text: no brackets, separators or whitespace."""
    rng = self._rng
    return ''.join(
        rng.choice(_RARE_CHARS) if rng.random() < 0.05 else
        rng.choice(_NAME_CHARS) for _ in range(rng.randint(min_len, max_len)))

  def _padded(self, value):
    if self._rng.random() < 0.25:
      return '0' * self._rng.randint(1, 3) + str(value)
    return str(value)

  def _value(self):
    """A range bound: mostly small, sometimes up to 2**64-2.

    Never 2**64-1: Slurm mishandles it anywhere but as a single value in the
    last group (see _KNOWN_DIFFERENCES).
    """
    rng = self._rng
    r = rng.random()
    if r < 0.7:
      return rng.randrange(20)
    if r < 0.9:
      return rng.randrange(1000)
    if r < 0.97:
      return rng.randrange(10**rng.randint(4, 19))
    return _ULONG_MAX - 1 - rng.randrange(50)

  def _item(self, budget):
    """One bracket list item of at most `budget` numbers: (text, count)."""
    rng = self._rng
    lo = self._value()
    r = rng.random()
    if budget == 1 or r < 0.35:
      return self._padded(lo), 1
    if r < 0.42:  # `N-`: Slurm reads it as N.
      return self._padded(lo) + '-', 1
    count = min(rng.randint(2, budget), _ULONG_MAX - lo)
    hi = lo + count - 1
    # The width comes from the low bound only: a padded high bound does not
    # change the names.
    return '%s-%s' % (self._padded(lo), self._padded(hi)), count

  def _body(self, max_size):
    """A bracket body (a comma list) of at most max_size numbers."""
    rng = self._rng
    items = []
    size = 0
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
      if size >= max_size:
        break
      text, count = self._item(max_size - size)
      items.append((text, count))
      size += count
    if rng.random() < 0.1:  # A duplicate, which Slurm keeps.
      text, count = rng.choice(items)
      if size + count <= max_size:
        items.insert(rng.randrange(len(items) + 1), (text, count))
        size += count
    return ','.join(text for text, _ in items), size

  def _num_groups(self):
    return self._rng.choices((1, 2, 3, 4), weights=(45, 30, 15, 10))[0]

  def _pattern(self, num_groups, max_names):
    """An item of at most max_names names: (text, names, bodies, texts).

    `texts` are the literal texts before each bracket group; nothing follows
    the last group.
    """
    per_group = max(1, int(max_names**(1.0 / num_groups)))
    texts = [self._text(0, 6) for _ in range(num_groups)]
    bodies = []
    size = 1
    for _ in range(num_groups):
      body, group_size = self._body(per_group)
      bodies.append(body)
      size *= group_size
    return self._join(texts, bodies), size, bodies, texts

  @staticmethod
  def _join(texts, bodies):
    return ''.join('%s[%s]' % (text, body) for text, body in zip(texts, bodies))

  def _valid_item(self, max_names):
    """(text, names, bracket groups) of a valid item."""
    if self._rng.random() < 0.3:
      return self._text(1, 10), 1, 0
    num_groups = self._num_groups()
    text, size, _, _ = self._pattern(num_groups, max_names)
    return text, size, num_groups

  def _separator(self, newline=False):
    rng = self._rng
    choices = ', \t\n' if newline else ', \t'
    r = rng.random()
    if r < 0.6:
      return ','
    if r < 0.75:
      return ' '
    if r < 0.82:
      return '\t'
    return ''.join(rng.choice(choices) for _ in range(rng.randint(2, 4)))

  def _join_items(self, items):
    """Items with separators between them (and sometimes around them)."""
    rng = self._rng
    parts = []
    if rng.random() < 0.08:
      parts.append(self._separator())
    for i, item in enumerate(items):
      if i:
        parts.append(self._separator())
      parts.append(item)
    if rng.random() < 0.08:
      parts.append(self._separator())
    return ''.join(parts)

  def _num_items(self):
    return self._rng.choices((1, 2, 3, 4, 5), weights=(35, 25, 20, 12, 8))[0]

  def _family(self):
    """Items of one prefix with nearby numbers and mixed widths.

    Slurm merges such names into ranges before printing them.
    """
    rng = self._rng
    prefix = self._text(0, 5).rstrip(string.digits)
    start = rng.randrange(12)
    items = []
    for _ in range(rng.randint(2, 6)):
      lo = max(0, start + rng.randint(-2, 2))
      count = rng.randint(1, 4)
      if count == 1 and rng.random() < 0.5:
        text = prefix + self._padded(lo)
        groups = 0
      else:
        text = '%s[%s-%s]' % (prefix, self._padded(lo),
                              self._padded(lo + count - 1))
        groups = 1
      items.append((text, count, groups))
      start = lo + count
    return items

  # Classes.

  def valid(self):
    rng = self._rng
    if rng.random() < 0.1:
      items = self._family()
      return _ValidCase(self._join_items([text for text, _, _ in items]),
                        sum(size for _, size, _ in items),
                        max(groups for _, _, groups in items))
    num_items = self._num_items()
    items = []
    size = 0
    most_groups = 0
    for _ in range(num_items):
      if items and rng.random() < 0.1:  # A duplicate item.
        text, item_size, groups = rng.choice(items)
      else:
        text, item_size, groups = self._valid_item(_MAX_NAMES // num_items)
      items.append((text, item_size, groups))
      size += item_size
      most_groups = max(most_groups, groups)
    expr = self._join_items([text for text, _, _ in items])
    return _ValidCase(expr, size, most_groups)

  _GROUP_DEFECTS = ('descending', 'empty_brackets', 'empty_list_item',
                    'non_digits', 'range_too_large', 'above_2**64-1',
                    'group_too_large')
  _ITEM_DEFECTS = ('stray_close', 'nested_open')

  def _bad_list_item(self, defect):
    """A bracket list item that every Slurm rejects."""
    rng = self._rng
    n = lambda: self._padded(rng.randrange(1000))
    letter = lambda: rng.choice(string.ascii_letters)
    if defect == 'descending':
      hi = self._value()
      lo = min(hi + rng.randint(1, 50), _ULONG_MAX)
      return '%s-%s' % (self._padded(lo), self._padded(hi))
    if defect == 'range_too_large':
      lo = rng.randrange(1000)
      return '%s-%s' % (self._padded(lo),
                        self._padded(lo + 65536 + rng.randrange(5000)))
    if defect == 'above_2**64-1':
      # lo >= 1: Slurm's count of 0..2**64-1 wraps to 0 (see
      # _KNOWN_DIFFERENCES).
      return '%d-%d' % (rng.randint(1, 1000),
                        _ULONG_MAX + rng.randint(1, 10**rng.randint(1, 25)))
    assert defect == 'non_digits', defect
    templates = (
        lambda: letter(),  # No digits.
        lambda: letter() + '-' + n(),  # No digits before '-'.
        lambda: '-' + n(),  # Nothing before '-'.
        lambda: n() + '-' + letter(),  # A high bound without digits.
        lambda: n() + '-' + n() + rng.choice(_JUNK_CHARS),  # Junk after hi.
        lambda: n() + rng.choice(_JUNK_CHARS),  # Junk after a single number.
        lambda: n() + ' ',  # A trailing space.
        lambda: n() + '--' + n(),
        lambda: n() + '-' + n() + '-' + n(),
        lambda: n() + '-' + n() + ':' + str(rng.randint(1, 3)),  # No steps.
        lambda: n() + 'x' + n(),  # Slurm's box syntax.
        lambda: '0x' + n(),  # No hex.
    )
    return rng.choice(templates)()

  def malformed(self):
    rng = self._rng
    defect = rng.choice(self._GROUP_DEFECTS + self._ITEM_DEFECTS)
    num_items = self._num_items()
    good = [self._valid_item(20)[0] for _ in range(num_items - 1)]
    reading = None
    if defect in self._ITEM_DEFECTS:
      num_groups = self._num_groups()
      text, _, bodies, texts = self._pattern(num_groups, 20)
      if defect == 'stray_close':  # `n[1-2]]`: 22.05 sees text after `]`.
        after = ']' + self._text(0, 3)
        bad_item = text + after
        reading = ('', text, after)
      else:  # `n[[1-2]]`: the same, from the last `[`.
        before = self._join(texts[:-1], bodies[:-1]) + texts[-1] + '['
        bad_item = before + '[%s]]' % bodies[-1]
        reading = (before, '[%s]' % bodies[-1], ']')
      bad_part = None
    else:
      num_groups = self._num_groups()
      if defect == 'group_too_large':
        num_groups = max(num_groups, 2)
      _, _, bodies, texts = self._pattern(num_groups, 4)
      # Slurm rejects a bad group only if it is the last or the next-to-last
      # one; it swallows errors in the others (see _KNOWN_DIFFERENCES).
      if num_groups == 1:
        target = 0
      elif defect == 'group_too_large':  # The last group has no such limit.
        target = num_groups - 2
      else:
        target = rng.choice((num_groups - 2, num_groups - 1))
      parts = bodies[target].split(',')
      if defect == 'empty_brackets':
        body = ''
        bad_part = '[]'
      elif defect == 'empty_list_item':
        parts.insert(rng.randrange(len(parts) + 1), '')
        body = ','.join(parts)
        bad_part = '[%s]' % body
      elif defect == 'group_too_large':
        # Each range within Slurm's limit, 65537 to 65539 numbers in all.
        first = rng.randint(32768, 65536)
        second = 65537 - first + rng.randrange(3)
        lo = rng.randrange(100)
        parts = ['%d-%d' % (lo, lo + first - 1),
                 '%d-%d' % (lo, lo + second - 1)]
        rng.shuffle(parts)
        body = ','.join(parts)
        bad_part = str(first + second)  # The module names the group's total.
      else:
        bad_part = self._bad_list_item(defect)
        parts.insert(rng.randrange(len(parts) + 1), bad_part)
        body = ','.join(parts)
      bodies[target] = body
      bad_item = self._join(texts, bodies)
    items = good[:]
    at = rng.randrange(len(items) + 1)
    items.insert(at, bad_item)
    if reading is not None:
      readings = [('', item, '') for item in good]
      readings.insert(at, reading)
      reading = tuple(readings)
    return _MalformedCase(self._join_items(items), defect, bad_part, reading)

  def suffixed(self):
    rng = self._rng
    num_items = self._num_items()
    items = []
    for i in range(num_items):
      suffixed = i == 0 or rng.random() < 0.3
      if suffixed:
        num_groups = rng.choices((1, 2, 3), weights=(60, 30, 10))[0]
        stem, _, _, _ = self._pattern(num_groups, _MAX_NAMES // num_items)
        items.append((stem, self._text(1, 6)))
      else:
        items.append((self._valid_item(_MAX_NAMES // num_items)[0], ''))
    rng.shuffle(items)
    expr = self._join_items([stem + suffix for stem, suffix in items])
    return _SuffixedCase(expr, tuple(items))

  def with_newlines(self):
    rng = self._rng
    while True:
      num_items = self._num_items()
      items = [self._valid_item(_MAX_NAMES // num_items)[0]
               for _ in range(num_items)]
      parts = ['\n'] if rng.random() < 0.2 else []
      for i, item in enumerate(items):
        if i:
          parts.append(self._separator(newline=True))
        parts.append(item)
      if rng.random() < 0.2:
        parts.append('\n')
      expr = ''.join(parts)
      if '\n' in expr:
        return _NewlineCase(expr, expr.replace('\n', ','))


def _generate():
  generator = _Generator(_SEED)
  valid = [generator.valid() for _ in range(_NUM_VALID)]
  malformed = [generator.malformed() for _ in range(_NUM_MALFORMED)]
  suffixed = [generator.suffixed() for _ in range(_NUM_SUFFIXED)]
  newline = [generator.with_newlines() for _ in range(_NUM_NEWLINE)]
  return valid, malformed, suffixed, newline


# Valid forms from the issue and Slurm's limits, listed to be sure they are
# there. scontrol must print exactly the module's list.
_LISTED_VALID = (
    '', ',', ' \t ', 'a,,b', ',a,', ' a b ', 'a\tb', 'n[1,2] m',
    'n[1-2] , m', 'n2,n1,n1', 'n[1-3],n2', 'n[1-2,2]', 'n01,n1', 'n9,n010',
    'n[01-10]', 'n[1-010]', 'n[001-5]', 'n[08-012]', 'n[9-10]', 'n[0-00]',
    'n[00-0]', 'n[007]', 'n[3-]', 'n[3,1,2]', 'n[1-3,05-06]',
    '[1-3]', '[1-3],[5]', '[1]a[2]', 'n[1-2][3-4]', 'n[1]-[2]', '123', '007',
    '0', 'nx[1-2]', 'N[001-3]', 'abc01def[1-2]', 'a=b[1-2]', 'n-', 'n-[1-2]',
    '-n[1-2]', 'a\\,b', 'a"b', "a'b", 'a*b?', 'a%d[1-2]', 'n%s',
    'rack[1-2]-node[01-02]', 'a[1-2]b[3-4]', 'x[1-2]y[3-4]z[5-6]',
    'a[1,3]b[2,4-5]', 'p[01-2]q[1-2]', 'w[1-2]x[3-4]y[5-6]z[7-8]',
    'a[1-2]b[1-2]c[1-2]d[1-2]e[1-2]',
    # Big numbers: exact up to 2**64-1; any width.
    'n[12345678901234567890]', 'n12345678901234567890',
    'n[18446744073709551613-18446744073709551614]',
    'n[18446744073709551615]', 'n18446744073709551615',
    'n[18446744073709551615],a', 'a[1]b[18446744073709551615]',
    'n[000000000000000000000000001-2]',
    # Slurm's limits: 65536 per range; 65536 in all in a group before the
    # last; no limit on the last group's total.
    'n[0-65535]', 'n[1-65536]', 'n[0-32767,32768-65535]', 'a[0-65535]b[7]',
    'a[3]b[0-65535]', 'a[0-65535]b[1]c[1]', 'a[1]b[0-65535]c[1]',
    'a[0-39999,0-25535]b[1]', 'a[1]b[0-65535,0-65535]',
    # The module's own limit, MAX_HOSTS = 2**20 names.
    'a[0-65535]b[0-15]',
)

# Malformed forms from the issue and Slurm's limits: (expression, the part
# the module's error must name).
_LISTED_MALFORMED = (
    ('n[5-3]', '5-3'), ('n[]', '[]'), ('[]', '[]'), ('[,]', '[,]'),
    ('n[1,]', '[1,]'), ('n[,1]', '[,1]'), ('n[1,,2]', '[1,,2]'),
    ('n[-3]', '-3'), ('n[-1]', '-1'), ('n[a-b]', 'a-b'), ('n[1-2-3]', '1-2-3'),
    ('n[1--3]', '1--3'), ('n[1-3a]', '1-3a'), ('n[0-5:2]', '0-5:2'),
    ('n[0x1]', '0x1'), ('n[1x]', '1x'), ('n[1x3]', '1x3'), ('n[1 ]', '1 '),
    ('a\\[1-2\\]', '1-2\\'), ('n[1-2]]', None), ('n[1]]', None),
    ('n[1,2]]', None), ('n[[1]]', None), ('a[a]b[1]', 'a'),
    ('a[1]b[a]c[1]', 'a'), ('a[1-2]b[1-70000]', '1-70000'),
    ('n[0-65536]', '0-65536'), ('n[1-65537]', '1-65537'),
    ('a[1]b[1-65537]', '1-65537'), ('a[0-65536]b[1]', '0-65536'),
    ('a[0-65535,0]b[0]', '65537'), ('a[1]b[0-65535,0]c[1]', '65537'),
    ('n[1-99999999999999999999]', '1-99999999999999999999'),
    ('n[1-18446744073709551616]', '1-18446744073709551616'),
    ('ok1,n[5-3],ok2', '5-3'),
)
# What Slurm 23.11 and later print for the listed malformed forms that they
# accept (a stray `]` is text after the last bracket; before a nested `[`,
# everything is literal text); Slurm 22.05 rejects them.
_LISTED_READ_SINCE_2311 = {
    'n[1-2]]': ('n1]', 'n2]'),
    'n[1]]': ('n1]',),
    'n[1,2]]': ('n1]', 'n2]'),
    'n[[1]]': ('n[1]',),
}

# Where scontrol 22.05 and the module disagree on purpose:
# (expression, the module's names or ValueError, what scontrol does).
_SUFFIX = 'text after the last bracket: Slurm >= 23.11 accepts it'
_UNCLOSED = 'an unclosed "[": Slurm 22.05 patches the name, >= 23.02 rejects'
_STRAY = 'a stray "]" or nested "[": Slurm takes it as name text'
_JUNK = ('signs, spaces or junk in a bracket: Slurm skips them or takes them '
         'into the width')
_NEWLINE = 'a newline: a separator since Slurm 23.02, a name character before'
_SATURATE = 'a number above 2**64-1: Slurm saturates it'
_ULONG_BUGS = 'Slurm bugs at 2**64-1'
_SWALLOWED = ('an error in a bracket group before the next-to-last: Slurm '
              'swallows it and drops that item (or the rest of it)')
_MERGED = ('names differing by \\r, \\v or \\f: Slurm prints the first one\'s '
           'prefix for the next')
_MAX_HOSTS = 'over the module\'s MAX_HOSTS (2**20 names): Slurm has no limit'
# Not run: `a[18446744073709551615]b[1]`, `a[99999999999999999999]b[1]` and
# `a[0-18446744073709551615]b[1]` make scontrol loop forever, using GBs of
# memory (the module expands the first, refuses the others).
_KNOWN_DIFFERENCES = (
    ('gpu[1-2]-ib', ['gpu1-ib', 'gpu2-ib'], _INVALID, _SUFFIX),
    ('gpu[1-2]ib', ['gpu1ib', 'gpu2ib'], _INVALID, _SUFFIX),
    ('node[0001-0003]-int.ib',
     ['node0001-int.ib', 'node0002-int.ib', 'node0003-int.ib'], _INVALID,
     _SUFFIX),
    ('a[1-2]b[3-4]c', ['a1b3c', 'a1b4c', 'a2b3c', 'a2b4c'], _INVALID, _SUFFIX),
    ('n[1-3]%2', ['n1%2', 'n2%2', 'n3%2'], _INVALID, _SUFFIX),
    ('n[0-65535]x', _Lazy(lambda: ('n%dx' % i for i in range(65536))),
     _INVALID, _SUFFIX),
    ('n[1-2', ValueError, _prints('n]'), _UNCLOSED),
    ('a[1,2', ValueError, _prints('a]', '2'), _UNCLOSED),
    (']n[', ValueError, _prints(']n]'), _UNCLOSED),
    ('[', ValueError, _prints(''), _UNCLOSED),
    ('[1-2', ValueError, _prints('1-2'), _UNCLOSED),
    ('n[1-2],m[3', ValueError, _prints('n1', 'n2', 'm]'), _UNCLOSED),
    ('n[1-2]x[', ValueError, _prints('n[1-2]x]'), _UNCLOSED),
    ('a[1-2]b[3', ValueError, _prints('a[1-2]b]'), _UNCLOSED),
    ('n1-2]', ValueError, _prints('n1-2]'), _STRAY),
    (']', ValueError, _prints(']'), _STRAY),
    ('a]b[1-2]', ValueError, _prints('a]b1', 'a]b2'), _STRAY),
    ('a[b[1-2]', ValueError, _prints('a[b1', 'a[b2'), _STRAY),
    ('x[1[2,3]', ValueError, _prints('x[12', 'x[13'), _STRAY),
    ('n[1[2]', ValueError, _prints('n[12'), _STRAY),
    ('a[[1],2]', ValueError, _prints('a[1', '2]'), _STRAY),
    ('a[1]-2]b[3]', ValueError, _prints('a01b3', 'a02b3'), _STRAY),
    ('n[+1]', ValueError, _prints('n01'), _JUNK),
    ('n[ 1]', ValueError, _prints('n01'), _JUNK),
    ('n[+1-3]', ValueError, _prints('n01', 'n02', 'n03'), _JUNK),
    ('n[1-+3]', ValueError, _prints('n1', 'n2', 'n3'), _JUNK),
    ('n[1 -2]', ValueError, _prints('n01', 'n02'), _JUNK),
    ('n[1- 2]', ValueError, _prints('n1', 'n2'), _JUNK),
    ('n[ 1- 2]', ValueError, _prints('n01', 'n02'), _JUNK),
    ('n[1, 2]', ValueError, _prints('n1', 'n02'), _JUNK),
    ('n[1,\t2]', ValueError, _prints('n1', 'n02'), _JUNK),
    ('n[1abc-3]', ValueError, _prints('n0001', 'n0002', 'n0003'), _JUNK),
    ('n[1.5-3]', ValueError, _prints('n001', 'n002', 'n003'), _JUNK),
    ('n[1X-3]', ValueError, _prints('n01', 'n02', 'n03'), _JUNK),
    ('n[0- -18446744073709551615]', ValueError, _prints('n0', 'n1'), _JUNK),
    ('n[1-2]\nm', ['n1', 'n2', 'm'], _INVALID, _NEWLINE),
    ('a\n,b', ['a', 'b'], _prints('a', '', 'b'), _NEWLINE),
    ('a\n[1-2]', ['a', '1', '2'], _prints('a', '1', 'a', '2'), _NEWLINE),
    ('n[1,\n2]', ValueError, _prints('n1', 'n02'), _NEWLINE),
    ('n[99999999999999999999]', ValueError,
     _prints('n18446744073709551615'), _SATURATE),
    ('n[18446744073709551615-18446744073709551616]', ValueError,
     _prints('n18446744073709551615'), _SATURATE),
    ('n99999999999999999999', ['n99999999999999999999'],
     _prints('n18446744073709551615'), _SATURATE),
    ('n0000099999999999999999999', ['n0000099999999999999999999'],
     _prints('n0000018446744073709551615'), _SATURATE),
    ('99999999999999999999', ['99999999999999999999'],
     _prints('18446744073709551615'), _SATURATE),
    # 2**64-1 followed by 0 of the same prefix loses its last 4 digits.
    ('n18446744073709551615,n0', ['n18446744073709551615', 'n0'],
     _prints('n1844674407370955', 'n0'), _ULONG_BUGS),
    ('n[18446744073709551615],n[0]', ['n18446744073709551615', 'n0'],
     _prints('n1844674407370955', 'n0'), _ULONG_BUGS),
    ('n[18446744073709551614-18446744073709551615]',
     ['n18446744073709551614', 'n18446744073709551615'],
     _Crashes(signal.SIGSEGV), _ULONG_BUGS),
    # The count of 0..2**64-1 wraps to 0: printing stops there, silently.
    ('n[0-18446744073709551615]', ValueError, _prints(), _ULONG_BUGS),
    ('a,n[0-18446744073709551615],b', ValueError, _prints('a'), _ULONG_BUGS),
    ('a[a]b[1]c[1]', ValueError, _prints_after_error(), _SWALLOWED),
    ('a[a]b[1-2]c[1],z', ValueError, _prints_after_error('z'), _SWALLOWED),
    ('a[5-3]b[1]c[1],z', ValueError, _prints_after_error('z'), _SWALLOWED),
    ('w[1-2]a[1-x]b[1]c[1],z', ValueError, _prints_after_error('z'),
     _SWALLOWED),
    ('a[0-2,0-65535]b[1]c[1]', ValueError,
     _prints('a0b1c1', 'a1b1c1', 'a2b1c1'), _SWALLOWED),
    ('a[0-65535,0]b[1]c[1]', ValueError,
     _Prints(_Lazy(lambda: ('a%db1c1' % i for i in range(65536)))),
     _SWALLOWED),
    ('x\r1,x2', ['x\r1', 'x2'], _prints('x\r1', 'x\r2'), _MERGED),
    ('ab1,a\vb2', ['ab1', 'a\vb2'], _prints('ab1', 'ab2'), _MERGED),
    ('n[1-2],n\r[3-4]', ['n1', 'n2', 'n\r3', 'n\r4'],
     _prints('n1', 'n2', 'n3', 'n4'), _MERGED),
    ('a[0-65535]b[0-16]', ValueError,
     _Prints(_Lazy(lambda: ('a%db%d' % (i, j) for i in range(65536)
                            for j in range(17)))), _MAX_HOSTS),
    # 2**32 names: Slurm's int count wraps to 0, and it prints nothing.
    ('a[0-65535]b[0-65535]', ValueError, _prints(), _MAX_HOSTS),
)

# Where Slurm 24.11 does otherwise than 22.05 in _KNOWN_DIFFERENCES (checked
# with Debian 13's scontrol 24.11.5): text after the last bracket is expanded
# (since 23.11), an unclosed `[` is rejected and a newline is a separator
# (both since 23.02): all as the module does. The rest of that list holds for
# 24.11 unchanged.
_SCONTROL_SINCE_2311 = {
    'gpu[1-2]-ib': _prints('gpu1-ib', 'gpu2-ib'),
    'gpu[1-2]ib': _prints('gpu1ib', 'gpu2ib'),
    'node[0001-0003]-int.ib': _prints('node0001-int.ib', 'node0002-int.ib',
                                      'node0003-int.ib'),
    'a[1-2]b[3-4]c': _prints('a1b3c', 'a1b4c', 'a2b3c', 'a2b4c'),
    'n[1-3]%2': _prints('n1%2', 'n2%2', 'n3%2'),
    'n[0-65535]x': _Prints(_Lazy(lambda: ('n%dx' % i for i in range(65536)))),
    'n[1-2': _INVALID,
    'a[1,2': _INVALID,
    ']n[': _INVALID,
    '[': _INVALID,
    '[1-2': _INVALID,
    'n[1-2],m[3': _INVALID,
    'n[1-2]x[': _INVALID,
    'a[1-2]b[3': _INVALID,
    'n[1-2]\nm': _prints('n1', 'n2', 'm'),
    'a\n,b': _prints('a', 'b'),
    'a\n[1-2]': _prints('a', '1', '2'),
}

# The Slurm series whose outcomes are known (Debian's scontrol of each, run on
# every case here): True where it answers as 24.11 (_SCONTROL_SINCE_2311),
# False where as 22.05.
_ANSWERS_SINCE_2311 = {(20, 11): False, (22, 5): False, (24, 11): True,
                       (26, 5): True}

# ------------------------------------------------------------------------------
# The tests.
# ------------------------------------------------------------------------------

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LAB_TOOLS = os.path.join(_ROOT, 'tools', 'slurm_lab')


def _find_scontrol(series, directory):
  """The command that runs the scontrol of Slurm `series`; skips if none.

  Args:
    series: '22.05' or None: the `scontrol` on PATH (Debian 12's package);
      '20.11', '24.11' or '26.05': the one in the Slurm lab's Debian root of
      that series, which tools/slurm_lab/root.sh (given SLURM_LAB_SLURM)
      builds if missing (as root, a few minutes) or finds in its cache.
    directory: the working directory of the scontrol runs.

  Returns:
    (a list of command words that runs scontrol, None or a process to kill
    when done). For a root that process holds the root entered once (by
    tools/slurm_lab/enter_root.sh, ~80 ms), and every run joins it with
    nsenter (its mounts, root directory and working directory), ~5 ms.
  """
  if series in (None, '22.05'):
    scontrol = shutil.which('scontrol')
    if scontrol is None:
      raise unittest.SkipTest(
          'scontrol is not installed (Debian: apt-get install slurm-client; '
          'tools/setup.sh installs it)')
    return [scontrol], None
  if series not in ('20.11', '24.11', '26.05'):
    raise AssertionError(
        'SLURM_LAB_SLURM must be 20.11, 22.05, 24.11 or 26.05, not %r' %
        series)
  if os.geteuid() != 0:
    raise unittest.SkipTest(
        'Slurm %s\'s scontrol runs from the lab\'s Debian root of it, which '
        'needs root (chroot, mount namespaces); run as root, as CI does' %
        series)
  built = subprocess.run(['bash', os.path.join(_LAB_TOOLS, 'root.sh')],
                         capture_output=True, text=True, timeout=1800,
                         stdin=subprocess.DEVNULL, check=False)
  if built.returncode != 0:
    raise AssertionError('tools/slurm_lab/root.sh failed (exit %d):\n%s' %
                         (built.returncode, built.stderr[-3000:]))
  root = built.stdout.strip().splitlines()[-1]
  # Bounded: the holder ends by itself after an hour if it is not killed.
  holder = subprocess.Popen(  # pylint: disable=consider-using-with
      [os.path.join(_LAB_TOOLS, 'enter_root.sh'), root, 'sleep', '3600'],
      cwd=directory, stdin=subprocess.DEVNULL)
  deadline = time.monotonic() + 30
  # Entered once its root directory is the root's /.
  while not os.path.exists('/proc/%d/root/.tfslurm-root' % holder.pid):
    if holder.poll() is not None or time.monotonic() > deadline:
      holder.kill()
      raise AssertionError('could not enter the Slurm %s root %s' %
                           (series, root))
    time.sleep(0.05)
  return ['nsenter', '--target', str(holder.pid), '--mount', '--root',
          '--wd', '/usr/bin/scontrol'], holder


class HostlistScontrolTest(absltest.TestCase):
  """`expand_hostlist` against `scontrol show hostnames` of one Slurm."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    series = os.environ.get('SLURM_LAB_SLURM')
    cls._tempdir = tempfile.TemporaryDirectory()
    scontrol, cls._holder = _find_scontrol(series, cls._tempdir.name)
    cls._scontrol = _ScontrolRunner(scontrol, cls._tempdir.name)
    major, minor, cls._version = cls._scontrol.version()
    if series and '%d.%02d' % (major, minor) != series:
      raise AssertionError('SLURM_LAB_SLURM=%s, but scontrol is %s' %
                           (series, cls._version))
    # What Slurm rejects or mangles depends on its version (see the module
    # docstring); the valid forms and newlines do not. The outcomes of the
    # series in _ANSWERS_SINCE_2311 are known; on others the version-specific
    # tests skip.
    cls._known = (major, minor) in _ANSWERS_SINCE_2311
    cls._since_2311 = _ANSWERS_SINCE_2311.get((major, minor), False)
    # One listed case crashes scontrol: no core file.
    cls._core_limit = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, cls._core_limit[1]))
    cls._valid, cls._malformed, cls._suffixed, cls._newline = _generate()
    cls._counts = {}

  @classmethod
  def tearDownClass(cls):
    resource.setrlimit(resource.RLIMIT_CORE, cls._core_limit)
    summary = ('hostlist expressions compared with scontrol (%s): %s; %d '
               'scontrol runs in %.1f s' % (
                   cls._version,
                   ', '.join('%s %d' % item
                             for item in sorted(cls._counts.items())),
                   cls._scontrol.runs, cls._scontrol.seconds))
    logging.info(summary)
    print('\n' + summary)
    if cls._holder is not None:
      cls._holder.kill()
      cls._holder.wait(timeout=30)
    cls._tempdir.cleanup()
    super().tearDownClass()

  def _requireKnownSlurm(self):
    if not self._known:
      self.skipTest('the expected outcomes are those of Slurm 20.11, 22.05, '
                    '24.11 and 26.05 (Debian\'s); scontrol is %s' %
                    self._version)

  def _reading(self, reading, results):
    """The names scontrol 23.11+ prints for a `reading_2311` (or None)."""
    names = []
    for before, expr, after in reading:
      if not results[expr].accepted:
        return None
      names.extend(before + name + after for name in results[expr].names)
    return tuple(names)

  def _count(self, what, number):
    type(self)._counts[what] = number
    logging.info('%s: %d expressions', what, number)

  def _assertNoFailures(self, what, compared, failures):
    self._count(what, compared)
    if failures:
      self.fail('%d of %d %s disagree; the first %d:\n%s' % (
          len(failures), compared, what, min(len(failures), _SHOW_FAILURES),
          '\n'.join(failures[:_SHOW_FAILURES])))

  def testGeneratorCoversEveryForm(self):
    # 2,000 generated expressions at least, and every class and defect.
    generated = {
        case.expr for cases in (self._valid, self._malformed, self._suffixed,
                                self._newline) for case in cases
    }
    self.assertGreaterEqual(len(generated), 2000)
    self.assertEqual({1, 2, 3, 4}, {c.groups for c in self._valid} - {0})
    self.assertIn(0, {c.groups for c in self._valid})
    self.assertEqual(
        set(_Generator._GROUP_DEFECTS + _Generator._ITEM_DEFECTS),
        {c.defect for c in self._malformed})
    exprs = [c.expr for c in self._valid]
    for form in ('\t', ' ', ',,', '-[', '][', '[0'):
      self.assertTrue(any(form in e for e in exprs), form)
    # Same seed, same expressions.
    self.assertEqual(self._valid[:50], _generate()[0][:50])

  def testValidExpressionsExpandLikeScontrol(self):
    exprs = [c.expr for c in self._valid] + list(_LISTED_VALID)
    sizes = {c.expr: c.size for c in self._valid}
    results = self._scontrol.run_all(exprs)
    failures = []
    for expr in exprs:
      module = _expand(expr)
      result = results[expr]
      if (not result.accepted or module.names is None or
          module.names != tuple(result.names) or
          (expr in sizes and sizes[expr] != len(result.names))):
        failures.append('%r (%s names by construction): %s; %s%s' % (
            expr, sizes.get(expr, '?'), module, result,
            _first_difference(module.names, result.names)))
    self._assertNoFailures('valid', len(exprs), failures)

  def testMalformedExpressionsAreRejectedLikeScontrol(self):
    # Slurm 24.11 accepts a stray `]` or a nested `[` (the module still
    # refuses them): it must print what `reading_2311` says.
    self._requireKnownSlurm()
    cases = [(c.expr, c.defect, c.bad_part) for c in self._malformed]
    cases += [(expr, 'listed', bad_part)
              for expr, bad_part in _LISTED_MALFORMED]
    readings = {c.expr: c.reading_2311 for c in self._malformed}
    parts = [expr for reading in readings.values() if reading
             for _, expr, _ in reading] if self._since_2311 else []
    results = self._scontrol.run_all([expr for expr, _, _ in cases] + parts)
    failures = []
    accepted = 0
    for expr, defect, bad_part in cases:
      module = _expand(expr)
      result = results[expr]
      problem = None
      expected = None
      if self._since_2311 and readings.get(expr):
        expected = self._reading(readings[expr], results)
        if expected is None:
          problem = 'scontrol rejects a part of its reading %r' % (
              readings[expr],)
      elif self._since_2311 and expr in _LISTED_READ_SINCE_2311:
        expected = _LISTED_READ_SINCE_2311[expr]
      if problem:
        pass
      elif expected is not None:
        accepted += 1
        if not _prints(*expected).matches(result):
          problem = 'scontrol %s does not print %s%s' % (
              self._version, _show_names(expected),
              _first_difference(tuple(result.names), expected))
        elif not _raised_value_error(module):
          problem = 'the module does not raise ValueError'
      elif not result.rejected:
        problem = 'scontrol accepts it'
      elif not _raised_value_error(module):
        problem = 'the module does not raise ValueError'
      elif bad_part is not None and bad_part not in str(module.error).replace(
          repr(expr), '', 1):  # Beyond quoting the expression.
        problem = 'the error does not name %r' % bad_part
      if problem:
        failures.append('%r (%s): %s: %s; %s' % (expr, defect, problem, module,
                                                 result))
    if self._since_2311:  # Every stray `]` and nested `[`, generated or listed.
      self.assertEqual(
          accepted, len(_LISTED_READ_SINCE_2311) +
          sum(1 for c in self._malformed if c.defect in
              _Generator._ITEM_DEFECTS))
    self._assertNoFailures('malformed', len(cases), failures)

  def testTextAfterTheLastBracketExpandsAsInSlurm2311(self):
    # Slurm 22.05 rejects the whole list; Slurm 23.11 and later (24.11) and
    # the module append the text to every name of its item.
    self._requireKnownSlurm()
    stems = [stem for case in self._suffixed for stem, _ in case.items]
    results = self._scontrol.run_all(
        [case.expr for case in self._suffixed] + stems)
    failures = []
    for case in self._suffixed:
      module = _expand(case.expr)
      result = results[case.expr]
      bad_stems = [str(results[stem]) for stem, _ in case.items
                   if not results[stem].accepted]
      if bad_stems:
        failures.append('%r: scontrol rejects a part without the text: %s' %
                        (case.expr, bad_stems))
        continue
      expected = tuple(name + suffix for stem, suffix in case.items
                       for name in results[stem].names)
      scontrol_expected = _prints(*expected) if self._since_2311 else _INVALID
      if module.names != expected or not scontrol_expected.matches(result):
        failures.append('%r: %s; %s; expected: module returns %s, %s%s' % (
            case.expr, module, result, _show_names(expected),
            scontrol_expected, _first_difference(module.names, expected)))
    self._assertNoFailures('with text after the last bracket',
                           len(self._suffixed), failures)

  def testNewlineSeparatesAsInSlurm2302(self):
    results = self._scontrol.run_all(
        [case.with_commas for case in self._newline])
    failures = []
    for case in self._newline:
      module = _expand(case.expr)
      result = results[case.with_commas]
      if not result.accepted or module.names != tuple(result.names):
        failures.append('%r: %s; with commas, %s%s' % (
            case.expr, module, result,
            _first_difference(module.names, result.names)))
    self._assertNoFailures('with newlines', len(self._newline), failures)

  def testKnownDifferencesFromSlurm(self):
    # Each with 22.05's outcome, or 24.11's where it differs.
    self._requireKnownSlurm()
    self.assertLessEqual(set(_SCONTROL_SINCE_2311),
                         {e for e, _, _, _ in _KNOWN_DIFFERENCES})
    results = self._scontrol.run_all([e for e, _, _, _ in _KNOWN_DIFFERENCES])
    failures = []
    for expr, module_expected, scontrol_expected, why in _KNOWN_DIFFERENCES:
      if self._since_2311:
        scontrol_expected = _SCONTROL_SINCE_2311.get(expr, scontrol_expected)
      module = _expand(expr)
      result = results[expr]
      if module_expected is ValueError:
        module_ok = _raised_value_error(module)
        module_text = 'module raises ValueError'
      else:
        module_ok = module.names == _names(module_expected)
        module_text = 'module returns %s' % _show_names(
            _names(module_expected))
      if not module_ok or not scontrol_expected.matches(result):
        failures.append('%r (%s): %s; %s; expected: %s, %s' % (
            expr, why, module, result, module_text, scontrol_expected))
    self._assertNoFailures('known differences', len(_KNOWN_DIFFERENCES),
                           failures)


if __name__ == '__main__':
  absltest.main()
