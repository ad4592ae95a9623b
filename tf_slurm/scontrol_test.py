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
"""The companion's hostlist_expansion: builtin, scontrol or check."""

import os
import re
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import scontrol
from tf_slurm import slurm_test_util
from tf_slurm import util
from tf_slurm.resolver import SlurmClusterResolver


class ScontrolTest(slurm_resolver_test_util.ResolverTestCase):
  """hostlist_expansion='scontrol': `scontrol show hostnames`, as r1.15."""

  def setUp(self):
    super().setUp()
    self.use_env(slurm_test_util.step_env('n[1-2]', '1(x2)', 'n1 n2', 1))

  def testScontrolOutputIsTheNodeList(self):
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    resolver = SlurmClusterResolver(gpus_per_node=0,
                                    hostlist_expansion='scontrol')
    self.assertWorkers(['n1:8888', 'n2:8888'], resolver)

  def testWithoutSlurmConfItFailsAtOnceWithoutRunningScontrol(self):
    # Outside a task, scontrol without a configuration would look for a
    # controller in DNS.
    del os.environ['SLURM_CONF']
    with mock.patch.object(os.path, 'exists',
                           return_value=False):
      self.assertResolverFails(RuntimeError, r'SLURM_CONF is not set',
                               gpus_per_node=0, hostlist_expansion='scontrol')
    self.run.assert_not_called()

  def testWithoutSlurmConfASiteSlurmConfIsEnough(self):
    del os.environ['SLURM_CONF']
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    site_conf = self.use_slurm_conf('ClusterName=lab\n')
    with mock.patch.object(util, '_SLURM_CONF_PATHS',
                           ('/nonexistent/slurm.conf', site_conf)):
      resolver = SlurmClusterResolver(gpus_per_node=0,
                                      hostlist_expansion='scontrol')
    self.assertWorkers(['n1:8888', 'n2:8888'], resolver)

  def testExpansionIsTheEighthPositionalArgumentAsBefore(self):
    # jobs, port_base, gpus_per_node, gpus_per_task, tasks_per_node,
    # auto_set_gpu, rpc_layer, hostlist_expansion, het_jobs, node_host.
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    resolver = SlurmClusterResolver(None, 8888, 0, None, None, True, 'grpc',
                                    'scontrol', None, '{node}-ib')
    self.assertWorkers(['n1-ib:8888', 'n2-ib:8888'], resolver)
    self.run.assert_called_once_with(
        ['scontrol', '--', 'show', 'hostnames', 'n[1-2]'])

  def testScontrolIsRunWithTheHostlistAfterTheEndOfOptions(self):
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    SlurmClusterResolver(gpus_per_node=0, hostlist_expansion='scontrol')
    self.run.assert_called_once_with(
        ['scontrol', '--', 'show', 'hostnames', 'n[1-2]'])

  @parameterized.named_parameters(
      ('_missing_binary', None,
       RuntimeError, r"'n\[1-2\]': `scontrol .*` cannot run: scontrol is not "
       r'on PATH'),
      ('_non_zero_exit',
       slurm_test_util.completed(returncode=1,
                                 stderr='scontrol: error: too many arguments'),
       RuntimeError, r'exit status 1\): scontrol: error'),
      ('_invalid_hostlist_with_exit_zero',
       slurm_test_util.completed(stderr='Invalid hostlist: n[1-2]\n'),
       ValueError, r"'n\[1-2\]': scontrol says Invalid hostlist"),
      ('_timeout', RuntimeError('`scontrol` did not finish within 10 s'),
       RuntimeError, r'did not finish'),
  )
  def testScontrolFailureIsClearError(self, result, error, regex):
    self.set_run_result(result)
    self.assertResolverFails(error, regex, gpus_per_node=0,
                             hostlist_expansion='scontrol')


class HostlistCheckTest(slurm_resolver_test_util.ResolverTestCase):
  """hostlist_expansion='check': the built-in expansion, checked by scontrol."""

  def use_step(self, nodelist='n[1-2]', rank_hosts='n1 n2'):
    """Uses a two-task step."""
    self.use_env(slurm_test_util.step_env(nodelist, '1(x2)', rank_hosts, 1))

  def resolve(self, hostlist_expansion='check'):
    # gpus_per_node: without nvidia-smi, scontrol is the only command run.
    return SlurmClusterResolver(gpus_per_node=0,
                                hostlist_expansion=hostlist_expansion)

  def testScontrolGivingTheSameNamesResolves(self):
    self.use_step()
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve())
    self.run.assert_called_once()
    self.assertEqual(['scontrol', '--', 'show', 'hostnames', 'n[1-2]'],
                     self.run.call_args[0][0])

  @parameterized.named_parameters(
      ('_other_name', 'n1\nn3\n', r"\['n1', 'n3'\]"),
      ('_other_order', 'n2\nn1\n', r"\['n2', 'n1'\]"),
      ('_fewer_names', 'n1\n', r"\['n1'\]"),
  )
  def testScontrolGivingOtherNamesIsRuntimeErrorShowingBoth(
      self, stdout, scontrol_regex):
    self.use_step()
    self.set_run_result(slurm_test_util.completed(stdout=stdout))
    self.assertResolverFails(
        RuntimeError, r"Hostlist 'n\[1-2\]': the built-in expansion gives "
        r"\['n1', 'n2'\] but `scontrol show hostnames` gives %s" %
        scontrol_regex, gpus_per_node=0, hostlist_expansion='check')

  def testScontrolRejectingWhatTheModuleAcceptsIsRuntimeError(self):
    # Slurm 22.05 rejects text after a bracket; the module accepts it, as
    # Slurm 23.11 does.
    self.use_step('gpu[1-2]-ib', 'gpu1-ib gpu2-ib')
    self.set_run_result(
        slurm_test_util.completed(stderr='Invalid hostlist: gpu[1-2]-ib\n'))
    self.assertResolverFails(
        RuntimeError, r"the built-in expansion gives \['gpu1-ib', 'gpu2-ib'\] "
        r'but `scontrol show hostnames` gives an error \(.*Invalid hostlist',
        gpus_per_node=0, hostlist_expansion='check')

  def testModuleRejectingWhatScontrolAcceptsIsRuntimeError(self):
    # Slurm's parser accepts an unclosed bracket; the module does not.
    self.use_step('n[1-2', 'n1 n2')
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertResolverFails(
        RuntimeError, r"the built-in expansion gives an error \(.*\) but "
        r"`scontrol show hostnames` gives \['n1', 'n2'\]", gpus_per_node=0,
        hostlist_expansion='check')

  def testBothRejectingIsValueErrorNamingTheVariable(self):
    self.use_step('n[2-1]', 'n1 n2')
    self.set_run_result(
        slurm_test_util.completed(stderr='Invalid hostlist: n[2-1]\n'))
    self.assertResolverFails(
        ValueError, r"SLURM_STEP_NODELIST='n\[2-1\]': .*goes down",
        gpus_per_node=0, hostlist_expansion='check')

  def testCheckWithoutScontrolIsRuntimeError(self):
    self.use_step()
    self.assertResolverFails(RuntimeError, r'scontrol is not on PATH',
                             gpus_per_node=0, hostlist_expansion='check')

  def testScontrolAloneExpandsWhatOnlyItAccepts(self):
    self.use_step('n[1-2', 'n1 n2')
    self.set_run_result(slurm_test_util.completed(stdout='n1\nn2\n'))
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve('scontrol'))
    self.assertEqual(['scontrol', '--', 'show', 'hostnames', 'n[1-2'],
                     self.run.call_args[0][0])

  def testBuiltinRunsNoScontrol(self):
    self.use_step()
    self.assertWorkers(['n1:8888', 'n2:8888'], self.resolve('builtin'))
    self.run.assert_not_called()

  @parameterized.named_parameters(('_unknown', 'shell'), ('_empty', ''),
                                  ('_capitalized', 'Check'),
                                  ('_list', ['builtin']), ('_none', None),
                                  ('_int', 5))
  def testUnknownExpansionIsValueErrorNamingTheArgument(self, value):
    self.use_step()
    self.assertResolverFails(
        ValueError, r'hostlist_expansion=%s: expected one of' %
        re.escape(repr(value)), hostlist_expansion=value)


class ExpanderTest(parameterized.TestCase):
  """The choice of expander, and the built-in one checked by scontrol."""

  @parameterized.named_parameters(
      ('_builtin', 'builtin', slurm_hostlist.expand_hostlist),
      ('_scontrol', 'scontrol', scontrol.expand_hostlist_with_scontrol),
      ('_check', 'check', scontrol.expand_hostlist_checked),
  )
  def testGetExpanderReturnsTheNamedExpander(self, name, expander):
    self.assertIs(expander, scontrol.get_expander(name))

  def testUnknownExpanderIsValueErrorListingTheChoices(self):
    with self.assertRaisesRegex(
        ValueError, r"hostlist_expansion='slurm': expected one of "
        r"\['builtin', 'check', 'scontrol'\]"):
      scontrol.get_expander('slurm')

  def use_scontrol(self, result):
    """Makes `expand_hostlist_with_scontrol` return or raise `result`."""
    self.enter_context(mock.patch.object(
        scontrol, 'expand_hostlist_with_scontrol',
        side_effect=result if isinstance(result, Exception) else None,
        return_value=result))

  def testCheckedExpanderGivesTheNamesBothAgreeOn(self):
    self.use_scontrol(['n1', 'n2'])
    self.assertEqual(['n1', 'n2'], scontrol.expand_hostlist_checked(
        'n[1-2]'))

  def testCheckedExpanderShowsBothWhenTheyDiffer(self):
    self.use_scontrol(['n%d' % i for i in range(1, 11)])
    with self.assertRaisesRegex(
        RuntimeError, r"Hostlist 'n\[1-9\]': the built-in expansion gives "
        r"\['n1', .*, 'n8'\]\.\.\. \(9 in all\) but `scontrol show hostnames` "
        r"gives \['n1', .*, 'n8'\]\.\.\. \(10 in all\)"):
      scontrol.expand_hostlist_checked('n[1-9]')

  def testCheckedExpanderShowsTheErrorOfOne(self):
    self.use_scontrol(['n1', 'n2'])
    with self.assertRaisesRegex(
        RuntimeError, r"gives an error \(Invalid hostlist 'n\[1-2\]x\]'.*\) "
        r"but `scontrol show hostnames` gives \['n1', 'n2'\]"):
      scontrol.expand_hostlist_checked('n[1-2]x]')

  def testCheckedExpanderRaisesTheBuiltinErrorWhenBothRefuse(self):
    self.use_scontrol(ValueError('scontrol says no'))
    with self.assertRaisesRegex(ValueError, re.escape("Invalid hostlist 'n['")):
      scontrol.expand_hostlist_checked('n[')


if __name__ == '__main__':
  absltest.main()
