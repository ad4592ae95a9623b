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

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_hostlist
from tensorflow.python.distribute.cluster_resolver.slurm_hostlist import expand_tasks_per_node


class ExpandHostlistTest(parameterized.TestCase):
  """The hostlist grammar, as `scontrol show hostnames` expands it."""

  @parameterized.named_parameters(
      ('_single_name', 'n1', ['n1']),
      ('_list_in_brackets', 'n[1,3]', ['n1', 'n3']),
      ('_range', 'n[1-3]', ['n1', 'n2', 'n3']),
      ('_docstring_example', 'n[1-2],m5,o[3-4,6,7-9]',
       ['n1', 'n2', 'm5', 'o3', 'o4', 'o6', 'o7', 'o8', 'o9']),
      ('_tf_zero_padding_example', 'n[0001-0003],m5,o[009-011]',
       ['n0001', 'n0002', 'n0003', 'm5', 'o009', 'o010', 'o011']),
      ('_numeric_not_string_order', 'n[9-10]', ['n9', 'n10']),
      ('_padding_from_low_bound', 'n[08-012]',
       ['n08', 'n09', 'n10', 'n11', 'n12']),
      ('_zeros_of_high_bound_ignored', 'n[1-010]',
       ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9', 'n10']),
      ('_padding_per_range', 'n[1-3,05-06]', ['n1', 'n2', 'n3', 'n05', 'n06']),
      ('_real_sparse_list', 'c[09,11]', ['c09', 'c11']),
      ('_real_mixed_partition', 'c[09-11],gpu1-ib,gpu2-ib',
       ['c09', 'c10', 'c11', 'gpu1-ib', 'gpu2-ib']),
      ('_two_groups_row_major', 'rack[1-2]-node[01-02]',
       ['rack1-node01', 'rack1-node02', 'rack2-node01', 'rack2-node02']),
      ('_three_groups_in_scontrol_order', 'x[1-2]y[3-4]z[5-6]',
       ['x1y3z5', 'x1y3z6', 'x2y3z5', 'x2y3z6',
        'x1y4z5', 'x1y4z6', 'x2y4z5', 'x2y4z6']),
      ('_adjacent_groups', 'n[1-2][3-4]', ['n13', 'n14', 'n23', 'n24']),
      ('_text_after_bracket', 'node[1-2]-ib', ['node1-ib', 'node2-ib']),
      ('_text_after_several_groups', 'a[1-2]b[3-4]c',
       ['a1b3c', 'a1b4c', 'a2b3c', 'a2b4c']),
      ('_brackets_without_prefix', '[1-3]', ['1', '2', '3']),
      ('_trailing_dash_is_single_number', 'n[3-]', ['n3']),
      ('_whitespace_separators', 'n1 n2\tn3\nn4', ['n1', 'n2', 'n3', 'n4']),
      ('_separators_collapse', ' a,,b , c ', ['a', 'b', 'c']),
      ('_order_kept', 'n2,n1,n3', ['n2', 'n1', 'n3']),
      ('_duplicates_kept', 'n[1-3],n2', ['n1', 'n2', 'n3', 'n2']),
      ('_order_and_duplicates_kept_in_brackets', 'n[3,1,3]',
       ['n3', 'n1', 'n3']),
      ('_empty', '', []),
      ('_only_separators', ' , ', []),
  )
  def testExpandsLikeScontrol(self, hostlist, expected):
    self.assertEqual(expected, expand_hostlist(hostlist))

  @parameterized.named_parameters(
      ('_descending_range', 'n[5-3]', r"'5-3'"),
      ('_empty_brackets', 'n[]', r"empty brackets in 'n\[\]'"),
      ('_unclosed_bracket', 'n[1-2', r'"\[" without "\]"'),
      ('_unopened_bracket', 'n1-2]', r'"\]" without "\["'),
      ('_nested_brackets', 'n[1[2]]', r'nested "\["'),
      ('_letters_in_range', 'n[a-b]', r"'a-b'"),
      ('_negative_number', 'n[-1]', r"'-1'"),
      ('_empty_item_in_brackets', 'n[1,]', r"bad range '' in \"\[1,\]\""),
      ('_double_dash', 'n[1--3]', r"'1--3'"),
      ('_three_bounds', 'n[1-2-3]', r"'1-2-3'"),
      ('_space_in_range', 'n[1 ]', r"'1 '"),
      ('_sign_in_range', 'n[+1]', r"'\+1'"),
      ('_hex_in_range', 'n[0x1]', r"'0x1'"),
      ('_step_syntax', 'n[0-5:2]', r"'0-5:2'"),
      ('_above_64_bits', 'n[18446744073709551616]', r'18446744073709551616'),
  )
  def testMalformedHostlistIsValueErrorNamingTheBadPart(self, hostlist, regex):
    with self.assertRaisesRegex(ValueError, regex):
      expand_hostlist(hostlist)

  @parameterized.named_parameters(('_none', None), ('_bytes', b'n1'))
  def testNonStringHostlistIsValueError(self, hostlist):
    with self.assertRaisesRegex(ValueError, 'expected a string'):
      expand_hostlist(hostlist)

  def testRangeOfMaxRangeHostsIsAccepted(self):
    hosts = expand_hostlist('n[0-65535]')
    self.assertLen(hosts, 65536)
    self.assertEqual(['n0', 'n65535'], [hosts[0], hosts[-1]])

  def testLastGroupOfMaxRangeHostsIsAccepted(self):
    hosts = expand_hostlist('a[1]b[1-65536]')
    self.assertLen(hosts, 65536)
    self.assertEqual('a1b65536', hosts[-1])

  @parameterized.named_parameters(
      ('_range_one_past_limit', 'n[0-65536]', r"'0-65536' has 65537 hosts"),
      ('_billion_names', 'n[0-999999999]', r"'0-999999999'"),
      ('_group_before_last_past_limit', 'a[0-65535,0]b[0]', r'group 1'),
      ('_product_of_groups', 'a[0-65535]b[0-65535]',
       r"'a\[0-65535\]b\[0-65535\]': expands to more than"),
      ('_sum_of_items', ','.join(['n[0-65535]'] * 17), r'expands to more than'),
  )
  def testExpansionPastCapIsRefused(self, hostlist, regex):
    with self.assertRaisesRegex(ValueError, regex):
      expand_hostlist(hostlist)


class ExpandTasksPerNodeTest(parameterized.TestCase):
  """Slurm's compressed tasks-per-node lists."""

  @parameterized.named_parameters(
      ('_single', '2', [2]),
      ('_list', '2,1,3', [2, 1, 3]),
      ('_docstring_example', '3(x2),2,1', [3, 3, 2, 1]),
      ('_two_digit_counts', '3(x2),2,11(x4)', [3, 3, 2, 11, 11, 11, 11]),
      ('_ten_repeats', '13(x10)',
       [13, 13, 13, 13, 13, 13, 13, 13, 13, 13]),
      ('_real_N4_n10', '4(x2),1(x2)', [4, 4, 1, 1]),
      ('_real_mixed_N5_n7', '3,1(x4)', [3, 1, 1, 1, 1]),
      ('_real_heterogeneous', '1,2,1', [1, 2, 1]),
  )
  def testExpandsInNodeOrder(self, tasks_per_node, expected):
    self.assertEqual(expected, expand_tasks_per_node(tasks_per_node))

  @parameterized.named_parameters(
      ('_letter', 'x', r"bad entry 'x'"),
      ('_zero_repeats', '2(x0)', r"'2\(x0\)' repeats zero times"),
      ('_empty', '', r"bad entry ''"),
      ('_empty_entry', '2,,1', r"'2,,1': bad entry ''"),
      ('_trailing_comma', '2,', r"'2,': bad entry ''"),
      ('_repeat_without_count', '(x2)', r"bad entry '\(x2\)'"),
      ('_repeat_without_number', '2(x)', r"bad entry '2\(x\)'"),
      ('_upper_case_x', '2(X2)', r"bad entry '2\(X2\)'"),
      ('_negative', '-1', r"bad entry '-1'"),
      ('_leading_space', ' 2', r"bad entry ' 2'"),
      ('_space_in_repeat', '2(x 3)', r"bad entry '2\(x 3\)'"),
      ('_repeat_without_parentheses', '2x2', r"bad entry '2x2'"),
      ('_not_a_string', None, r'None: expected a string'),
      ('_too_many_entries', '1(x99999999999)', r'more than \d+ entries'),
  )
  def testMalformedListIsValueErrorNamingTheBadEntry(self, tasks_per_node,
                                                     regex):
    with self.assertRaisesRegex(ValueError, regex):
      expand_tasks_per_node(tasks_per_node)




if __name__ == '__main__':
  absltest.main()
