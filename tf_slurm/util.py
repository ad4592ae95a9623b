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
"""The companion's bounded reads: numbers, files and commands.

`parse_int` reads one number as Slurm's atoi does; the companion runs
commands (`run_command`: scontrol, nvidia-smi) and reads files
(`read_regular_file`: slurm.conf) only through this module, within bounds
of time and size.
"""

import os
import re
import selectors
import stat
import subprocess
import time

# How long a command run here may take: as long as a Slurm client's call to
# slurmctld (MessageTimeout, 10 s by default); within the KillWait (30 s by
# default) after SIGTERM there is time for two.
SUBPROCESS_TIMEOUT_SECS = 10
# The most output a command run here may print, and the largest slurm.conf
# read: far beyond a list of a million host names.
MAX_READ_BYTES = 16 * 1024 * 1024
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
