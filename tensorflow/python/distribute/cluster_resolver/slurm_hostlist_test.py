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
"""Tests for the Slurm hostlist grammar."""

import re

from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_tasks_per_node
from tensorflow.python.platform import test


class ExpandHostlistTest(test.TestCase, parameterized.TestCase):
  """The hostlist grammar, as `scontrol show hostnames` expands it."""

  def testNameWithoutBracketsIsItself(self):
    self.assertEqual(['gpu1-ib'], expand_hostlist('gpu1-ib'))

  def testNumberAbove64BitsOutsideBracketsIsKeptAsWritten(self):
    self.assertEqual(['n18446744073709551616'],
                     expand_hostlist('n18446744073709551616'))

  def testBracketListGivesEachNumberAfterThePrefix(self):
    self.assertEqual(['n1', 'n3'], expand_hostlist('n[1,3]'))

  def testRangeGivesEveryNumberFromLowToHigh(self):
    self.assertEqual(['n1', 'n2', 'n3'], expand_hostlist('n[1-3]'))

  def testDocstringExample(self):
    self.assertEqual(['n1', 'n2', 'm5', 'o3', 'o4', 'o6', 'o7', 'o8', 'o9'],
                     expand_hostlist('n[1-2],m5,o[3-4,6,7-9]'))

  def testRangeCountsInNumericOrder(self):
    self.assertEqual(['n9', 'n10'], expand_hostlist('n[9-10]'))

  @parameterized.named_parameters(
      ('_low_bound_padded', 'n[08-012]', ['n08', 'n09', 'n10', 'n11', 'n12']),
      ('_high_bound_padded', 'n[1-010]', ['n%d' % i for i in range(1, 11)]),
      ('_tensorflow_example', 'n[0001-0003],m5,o[009-011]',
       ['n0001', 'n0002', 'n0003', 'm5', 'o009', 'o010', 'o011']),
  )
  def testNumbersArePaddedToTheWidthOfTheLowBound(self, hostlist, expected):
    self.assertEqual(expected, expand_hostlist(hostlist))

  def testEachRangeHasItsOwnWidth(self):
    self.assertEqual(['n1', 'n2', 'n3', 'n05', 'n06'],
                     expand_hostlist('n[1-3,05-06]'))

  def testRangeWithoutHighBoundIsItsLowBound(self):
    self.assertEqual(['n3'], expand_hostlist('n[3-]'))

  def testTextAfterBracketFollowsEveryNumber(self):
    self.assertEqual(['node1-ib', 'node2-ib'], expand_hostlist('node[1-2]-ib'))

  def testBracketNeedsNoPrefix(self):
    self.assertEqual(['1', '2', '3'], expand_hostlist('[1-3]'))

  def testTwoGroupsExpandInRowMajorOrder(self):
    self.assertEqual(
        ['rack1-node01', 'rack1-node02', 'rack2-node01', 'rack2-node02'],
        expand_hostlist('rack[1-2]-node[01-02]'))

  def testAdjacentGroupsExpandInRowMajorOrder(self):
    self.assertEqual(['n13', 'n14', 'n23', 'n24'],
                     expand_hostlist('n[1-2][3-4]'))

  def testLastGroupVariesFastestThenFirstThenNextToLast(self):
    self.assertEqual(['x1y3z5', 'x1y3z6', 'x2y3z5', 'x2y3z6',
                      'x1y4z5', 'x1y4z6', 'x2y4z5', 'x2y4z6'],
                     expand_hostlist('x[1-2]y[3-4]z[5-6]'))

  def testTextBetweenAndAfterSeveralGroupsIsKept(self):
    self.assertEqual(['a1b3c', 'a1b4c', 'a2b3c', 'a2b4c'],
                     expand_hostlist('a[1-2]b[3-4]c'))

  def testCommasAndWhitespaceSeparateItems(self):
    self.assertEqual(['n1', 'n2', 'n3', 'n4', 'n5'],
                     expand_hostlist('n1 n2\tn3\nn4,n5'))

  def testCommaInBracketsSeparatesNothing(self):
    self.assertEqual(['a1', 'a2', 'b'], expand_hostlist('a[1,2],b'))

  @parameterized.named_parameters(
      ('_repeated_separators', ' a,,b , c ', ['a', 'b', 'c']),
      ('_only_separators', ' , ', []),
      ('_empty_string', '', []),
  )
  def testEmptyItemsAreDropped(self, hostlist, expected):
    self.assertEqual(expected, expand_hostlist(hostlist))

  @parameterized.named_parameters(
      ('_items', 'n2,n1,n3', ['n2', 'n1', 'n3']),
      ('_items_and_ranges', 'n[1-3],n2', ['n1', 'n2', 'n3', 'n2']),
      ('_in_brackets', 'n[3,1,3]', ['n3', 'n1', 'n3']),
  )
  def testOrderAndDuplicatesAreKept(self, hostlist, expected):
    self.assertEqual(expected, expand_hostlist(hostlist))

  @parameterized.named_parameters(
      ('_unclosed', 'n[1-2', r'"\[" without "\]"'),
      ('_unopened', 'n1-2]', r'"\]" without "\[" at position 4'),
      ('_nested', 'n[1[2]]', r'nested "\[" at position 3'),
  )
  def testUnbalancedBracketIsValueErrorSayingWhere(self, hostlist, regex):
    with self.assertRaisesRegex(ValueError, regex):
      expand_hostlist(hostlist)

  def testEmptyBracketsAreValueErrorNamingTheItem(self):
    with self.assertRaisesRegex(ValueError, r"empty brackets in 'n\[\]'"):
      expand_hostlist('m1,n[]')

  @parameterized.named_parameters(
      ('_letters', 'n[a-b]', 'a-b'),
      ('_negative_number', 'n[-1]', '-1'),
      ('_empty_list_item', 'n[1,]', ''),
      ('_double_dash', 'n[1--3]', '1--3'),
      ('_three_bounds', 'n[1-2-3]', '1-2-3'),
      ('_space', 'n[1 ]', '1 '),
      ('_sign', 'n[+1]', '+1'),
      ('_hex', 'n[0x1]', '0x1'),
      ('_step', 'n[0-5:2]', '0-5:2'),
  )
  def testMalformedRangeIsValueErrorNamingIt(self, hostlist, part):
    with self.assertRaisesRegex(
        ValueError, r'bad range %s in "\[.*\]"; expected N or LO-HI' %
        re.escape(repr(part))):
      expand_hostlist(hostlist)

  def testDescendingRangeIsValueError(self):
    with self.assertRaisesRegex(ValueError, r"range '5-3' goes down \(5 > 3\)"):
      expand_hostlist('n[5-3]')

  def testBoundOf64BitsIsAccepted(self):
    self.assertEqual(['n18446744073709551615'],
                     expand_hostlist('n[18446744073709551615]'))

  def testBoundAbove64BitsIsValueError(self):
    with self.assertRaisesRegex(ValueError,
                                r'18446744073709551616 .* above 2\*\*64-1'):
      expand_hostlist('n[1-18446744073709551616]')

  def testNameWithBytesThatAreNotUtf8IsValueError(self):
    with self.assertRaisesRegex(ValueError, 'not UTF-8 text'):
      expand_hostlist('n\udce9[1-2]')

  @parameterized.named_parameters(('_none', None), ('_bytes', b'n1'))
  def testNonStringIsValueError(self, hostlist):
    with self.assertRaisesRegex(ValueError, 'expected a string'):
      expand_hostlist(hostlist)

  def testNameOfUtf8TextIsKept(self):
    self.assertEqual(expand_hostlist('nœud[1-2]'), ['nœud1', 'nœud2'])

  @parameterized.named_parameters(
      ('_malformed', 'm1,n[a]'),
      ('_unbalanced', 'm1,n['),
      ('_too_large', 'n[0-65536]'),
  )
  def testErrorQuotesTheHostlist(self, hostlist):
    with self.assertRaisesRegex(
        ValueError, '^Invalid hostlist %s: ' % re.escape(repr(hostlist))):
      expand_hostlist(hostlist)

  def testRangeOfSlurmsLimitIsAccepted(self):
    hosts = expand_hostlist('n[0-65535]')
    self.assertLen(hosts, 65536)
    self.assertEqual(['n0', 'n65535'], [hosts[0], hosts[-1]])

  def testRangeOverSlurmsLimitIsRefused(self):
    with self.assertRaisesRegex(
        ValueError, r"range '0-65536' has 65537 hosts, more than Slurm's "
        r'limit of 65536 per range'):
      expand_hostlist('n[0-65536]')

  def testHugeRangeIsRefused(self):
    with self.assertRaisesRegex(ValueError, r"'0-999999999' has 1000000000"):
      expand_hostlist('n[0-999999999]')

  def testLastGroupOfSlurmsLimitIsAccepted(self):
    hosts = expand_hostlist('a[1]b[1-65536]')
    self.assertLen(hosts, 65536)
    self.assertEqual('a1b65536', hosts[-1])

  def testGroupBeforeLastOverSlurmsLimitIsRefused(self):
    with self.assertRaisesRegex(
        ValueError, r'bracket group 1 has 65537 hosts, more than Slurm'):
      expand_hostlist('a[0-65535,0]b[0]')

  def testListOfMaxHostsIsAccepted(self):
    self.assertLen(expand_hostlist(','.join(['n[0-65535]'] * 16)),
                   slurm_hostlist.MAX_HOSTS)

  @parameterized.named_parameters(
      ('_sum_of_items', ','.join(['n[0-65535]'] * 16) + ',m'),
      ('_product_of_groups', 'a[0-65535]b[0-65535]'),
  )
  def testListOverMaxHostsIsRefused(self, hostlist):
    with self.assertRaisesRegex(ValueError, 'expands to more than 1048576'):
      expand_hostlist(hostlist)


class ExpandTasksPerNodeTest(test.TestCase, parameterized.TestCase):
  """Slurm's compressed tasks-per-node lists."""

  def testListGivesEachCountInNodeOrder(self):
    self.assertEqual([2, 1, 3], expand_tasks_per_node('2,1,3'))

  def testRepeatGivesTheCountThatManyTimes(self):
    self.assertEqual([13] * 10, expand_tasks_per_node('13(x10)'))

  def testDocstringExample(self):
    self.assertEqual([3, 3, 2, 1], expand_tasks_per_node('3(x2),2,1'))

  @parameterized.named_parameters(
      ('_letter', 'x'),
      ('_empty', ''),
      ('_repeat_without_count', '(x2)'),
      ('_repeat_without_number', '2(x)'),
      ('_upper_case_x', '2(X2)'),
      ('_negative', '-1'),
      ('_leading_space', ' 2'),
      ('_space_in_repeat', '2(x 3)'),
      ('_repeat_without_parentheses', '2x2'),
  )
  def testMalformedEntryIsValueErrorNamingIt(self, entry):
    with self.assertRaisesRegex(
        ValueError, re.escape("list '1,%s': bad entry %r; expected N or N(xK)"
                              % (entry, entry))):
      expand_tasks_per_node('1,' + entry)

  def testEmptyEntryIsValueError(self):
    with self.assertRaisesRegex(ValueError, r"'2,,1': bad entry ''"):
      expand_tasks_per_node('2,,1')

  def testZeroRepeatsIsValueError(self):
    with self.assertRaisesRegex(ValueError, r"'2\(x0\)' repeats zero times"):
      expand_tasks_per_node('2(x0)')

  def testMoreThanMaxHostsEntriesIsRefused(self):
    with self.assertRaisesRegex(ValueError, 'more than 1048576 entries'):
      expand_tasks_per_node('1(x1048577)')

  def testNonStringIsValueError(self):
    with self.assertRaisesRegex(ValueError, 'None: expected a string'):
      expand_tasks_per_node(None)


if __name__ == '__main__':
  test.main()
