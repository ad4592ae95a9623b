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
"""Tests of node_host: the host in the addresses of a node's tasks."""

from absl.testing import absltest

from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver


class NodeHostTest(slurm_resolver_test_util.ResolverTestCase):
  """srun -N2 -n3 -m cyclic: ranks 0 and 2 on n1 (tasks 0, 1), rank 1 on n2.

  Rank 1 is task 2: the cluster lists the tasks node by node.
  """

  def setUp(self):
    super().setUp()
    self.envs = slurm_test_util.step_envs('n[1-2]', '2,1', 'n1 n2 n1',
                                          SLURM_DISTRIBUTION='cyclic')

  def testFormatGivesEveryTaskTheMappedHostOfItsNode(self):
    self.assertEveryTask(
        self.envs, {'worker': ['n1-ib:8888', 'n1-ib:8889', 'n2-ib:8888']},
        node_host='{node}-ib')

  def testCallableGivesEveryTaskTheMappedHostOfItsNode(self):
    hosts = {'n1': '10.1.0.1', 'n2': '10.1.0.2'}
    self.assertEveryTask(
        self.envs, {'worker': ['10.1.0.1:8888', '10.1.0.1:8889',
                               '10.1.0.2:8888']},
        node_host=hosts.get)

  def testDomainFormatGivesFullyQualifiedHosts(self):
    self.use_env(self.envs[1])
    resolver = SlurmClusterResolver(node_host='{node}.ib.example.org')
    self.assertEqual('grpc://n2.ib.example.org:8888', resolver.master())

  def testTaskIsCheckedAgainstItsNodeByNameNotByHost(self):
    # Rank 1 says it runs on n3, which is not in the step: the error names
    # the nodes, not the hosts.
    self.use_env(slurm_test_util.step_env('n[1-2]', '2,1', 'n1 n2 n1', 1,
                                          SLURMD_NODENAME='n3'))
    self.assertResolverFails(
        RuntimeError, r"SLURMD_NODENAME='n3' is not in the step node list "
        r"\['n1', 'n2'\]", node_host='{node}-ib')

  def testFormatWithoutTheNodeIsValueErrorNamingTheArgument(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(ValueError, r"node_host='ib0': expected a format "
                             r"with '\{node\}'", node_host='ib0')

  def testFormatWithAnotherFieldIsValueErrorNamingTheArgument(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(ValueError,
                             r"node_host='\{node\}-\{rack\}': not a format "
                             r"of '\{node\}' alone",
                             node_host='{node}-{rack}')

  def testHostThatIsNoHostNameIsValueErrorNamingTheNode(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(ValueError,
                             r"maps node 'n1' to 'n1 ib'; expected a host",
                             node_host='{node} ib')

  def testCallableGivingNoStringIsValueErrorNamingTheNode(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(ValueError, r"maps node 'n2' to None",
                             node_host={'n1': 'a'}.get)

  def testTwoNodesMappedToOneHostIsValueErrorNamingBoth(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(
        ValueError, r"maps nodes 'n1' and 'n2' to the same host 'gateway'",
        node_host=lambda node: 'gateway')

  def testNeitherFormatNorCallableIsValueError(self):
    self.use_env(self.envs[0])
    self.assertResolverFails(ValueError, r'node_host=5: expected a format',
                             node_host=5)


if __name__ == '__main__':
  absltest.main()
