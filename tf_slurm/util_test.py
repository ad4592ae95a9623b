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
"""Tests of the companion's bounded reads (tf_slurm.util)."""

import os
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import util


class AbbreviateTest(absltest.TestCase):

  def testShortListIsShownWhole(self):
    self.assertEqual("['a', 'b']", util.abbreviate(('a', 'b')))

  def testLongListShowsItsFirstItemsAndLength(self):
    self.assertEqual('[0, 1, 2]... (10 in all)',
                     util.abbreviate(list(range(10)), most=3))


class RunCommandTest(parameterized.TestCase):
  """run_command: bounded in time and output; every failure a RuntimeError."""

  def setUp(self):
    super().setUp()
    self.bin = self.create_tempdir().full_path
    self.enter_context(mock.patch.dict(os.environ, {'PATH': self.bin}))
    self.enter_context(
        mock.patch.object(util, 'SUBPROCESS_TIMEOUT_SECS', 1))

  def command(self, body, mode=0o755):
    """Puts `tool` on PATH: a shell script of `body`, or these bytes."""
    path = os.path.join(self.bin, 'tool')
    with open(path, 'wb') as f:
      f.write(body if isinstance(body, bytes) else
              ('#!/bin/sh\n' + body).encode())
    os.chmod(path, mode)

  def testOutputOfBothStreamsIsReturnedAsText(self):
    self.command('echo n1; echo n2; echo warning >&2\n')
    self.assertEqual(util.run_command(['tool', 'x']),
                     ('n1\nn2\n', 'warning\n'))

  def testArgumentsArePassedAsTheyAre(self):
    self.command('for a; do echo "[$a]"; done\n')
    self.assertEqual(
        util.run_command(['tool', '--', 'a b', '$HOME'])[0],
        '[--]\n[a b]\n[$HOME]\n')

  def testMissingCommandIsNoneWhenAllowed(self):
    self.assertIsNone(util.run_command(['tool'], missing_ok=True))

  @parameterized.named_parameters(
      ('_missing', None, 0o755, r'^`tool -x` cannot run: tool is not on PATH$'),
      ('_not_executable', 'echo x\n', 0o644,
       r'^`tool -x` cannot run: Permission denied$'),
      ('_of_another_machine', b'\x7fELF\x02\x01\x01' + bytes(60), 0o755,
       r'^`tool -x` cannot run: Exec format error$'),
      ('_failing', 'echo out; echo err >&2; exit 3\n', 0o755,
       r'^`tool -x` failed \(exit status 3\): out\nerr$'),
      ('_hanging', 'exec /bin/sleep 30\n', 0o755,
       r'^`tool -x` did not finish within 1 s$'),
      ('_printing_without_end', 'exec /usr/bin/yes\n', 0o755,
       r'^`tool -x` printed more than %d bytes$' %
       util.MAX_READ_BYTES),
      ('_printing_non_utf8', 'printf "n\\377\\n"\n', 0o755,
       r'^`tool -x` printed stdout that is not UTF-8 text \(byte 1\)$'),
  )
  def testFailureIsRuntimeErrorNamingTheCommand(self, body, mode, regex):
    if body is not None:
      self.command(body, mode)
    with self.assertRaisesRegex(RuntimeError, regex):
      util.run_command(['tool', '-x'])


class ReadRegularFileTest(absltest.TestCase):
  """read_regular_file: a regular file within the bound, or an error."""

  def testRegularFileIsReadWhole(self):
    path = self.create_tempfile(content='GresTypes=gpu\n').full_path
    self.assertEqual(util.read_regular_file(path, 14),
                     b'GresTypes=gpu\n')

  def testFileLargerThanTheBoundIsValueError(self):
    path = self.create_tempfile(content='x' * 15).full_path
    with self.assertRaisesRegex(ValueError, '^larger than 14 bytes$'):
      util.read_regular_file(path, 14)

  def testFifoIsRefusedWithoutBlocking(self):
    path = os.path.join(self.create_tempdir().full_path, 'fifo')
    os.mkfifo(path)
    with self.assertRaisesRegex(ValueError, '^not a regular file$'):
      util.read_regular_file(path, 14)

  def testFileSwappedForAFifoAfterTheCheckIsRefusedWithoutBlocking(self):
    folder = self.create_tempdir().full_path
    path, fifo = os.path.join(folder, 'conf'), os.path.join(folder, 'fifo')
    self.create_tempfile(path, content='x')
    os.mkfifo(fifo)
    real_stat = os.stat

    def stat_then_swap(name):
      result = real_stat(name)
      os.replace(fifo, path)
      return result

    with mock.patch.object(os, 'stat', stat_then_swap):
      with self.assertRaisesRegex(ValueError, '^not a regular file$'):
        util.read_regular_file(path, 14)

  def testMissingFileIsOSError(self):
    with self.assertRaises(FileNotFoundError):
      util.read_regular_file('/nonexistent/slurm.conf', 14)


if __name__ == '__main__':
  absltest.main()
