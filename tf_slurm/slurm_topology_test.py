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
"""SlurmClusterResolver in block steps that Slurm numbers in topology order.

Slurm 26.05 with a network topology plugin (topology/tree, topology/block)
deals the ranks of a block step to the nodes in topology order: with switches
s1 = n11,n12 and s2 = n9,n10, `srun -N4 -n8` runs ranks 0,1 on n11, 2,3 on
n12, 4,5 on n9 and 6,7 on n10, while SLURM_STEP_NODELIST stays n[9-12] and
SLURM_NODEID, SLURM_LOCALID and SLURM_GTIDS tell each task only its own node.
The resolver numbers the tasks of every step node by node in list order, as
every task computes alike: a task's index is the number of tasks on the nodes
listed before its own, plus its SLURM_LOCALID.
"""

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util

# srun -N4 -n8 on n[9-12] under switches s1 = n11,n12 and s2 = n9,n10.
_TOPOLOGY_HOSTS = 'n11 n11 n12 n12 n9 n9 n10 n10'
# Its workers, node by node in list order.
_WORKERS = ['n9:8888', 'n9:8889', 'n10:8888', 'n10:8889', 'n11:8888',
            'n11:8889', 'n12:8888', 'n12:8889']


def _topology_envs(rank_hosts=_TOPOLOGY_HOSTS, **overrides):
  """The environment of every task of the step above, in rank order."""
  return slurm_test_util.step_envs('n[9-12]', '2(x4)', rank_hosts,
                                   node_ids='n9 n10 n11 n12', **overrides)


class TopologyOrderTest(slurm_resolver_test_util.ResolverTestCase):
  """Every step is numbered node by node in list order, not by rank."""

  def testTopologyOrderedBlockStepGivesEveryTaskOneClusterOnItsOwnNode(self):
    # Ranks 0,1 (n11) are workers 4,5; ranks 4,5 (n9) are workers 0,1.
    self.assertEveryTask(
        _topology_envs(SLURM_DISTRIBUTION='block'), {'worker': _WORKERS},
        tasks=[('worker', index) for index in (4, 5, 6, 7, 0, 1, 2, 3)])

  def testUnsetDistributionIsNumberedNodeByNodeToo(self):
    self.assertEveryTask(
        _topology_envs(), {'worker': _WORKERS},
        tasks=[('worker', index) for index in (4, 5, 6, 7, 0, 1, 2, 3)])

  def testBlockByCyclicIsNumberedNodeByNode(self):
    self.assertEveryTask(
        _topology_envs(SLURM_DISTRIBUTION='block:cyclic'),
        {'worker': _WORKERS},
        tasks=[('worker', index) for index in (4, 5, 6, 7, 0, 1, 2, 3)])

  def testUnevenTopologyOrderedStepGivesEveryTaskOneCluster(self):
    # srun -N3 -n5 on n[9-11] under the same switches: n11 first.
    self.assertEveryTask(
        slurm_test_util.step_envs('n[9-11]', '2,1,2', 'n11 n11 n9 n9 n10',
                                  node_ids='n9 n10 n11'),
        {'worker': ['n9:8888', 'n9:8889', 'n10:8888', 'n11:8888',
                    'n11:8889']},
        tasks=[('worker', index) for index in (3, 4, 0, 1, 2)])

  def testChiefIsTheFirstTaskOfTheFirstListedNode(self):
    # Rank 4, local task 0 of n9; not rank 0 (on n11).
    self.assertEveryTask(
        _topology_envs(), {'chief': ['n9:8888'], 'worker': _WORKERS[1:]},
        tasks=[('worker', 3), ('worker', 4), ('worker', 5), ('worker', 6),
               ('chief', 0), ('worker', 0), ('worker', 1), ('worker', 2)],
        jobs={'chief': 1, 'worker': 7})

  def testBlockStepInListOrderKeepsSlurmRanks(self):
    self.assertEveryTask(
        _topology_envs('n9 n9 n10 n10 n11 n11 n12 n12'), {'worker': _WORKERS},
        tasks=[('worker', rank) for rank in range(8)])

  @parameterized.parameters('cyclic', 'plane=1')
  def testCyclicOrPlaneStepIsNumberedNodeByNode(self, distribution):
    # Ranks 0-3 are the first tasks of n9-n12, workers 0, 2, 4, 6.
    self.assertEveryTask(
        _topology_envs('n9 n10 n11 n12 n9 n10 n11 n12',
                       SLURM_DISTRIBUTION=distribution), {'worker': _WORKERS},
        tasks=[('worker', index) for index in (0, 2, 4, 6, 1, 3, 5, 7)])

  def testTasksWithoutTheirNodeAndLocalIndexAreNumberedByRank(self):
    # Not as srun sets them: the step is taken to be in list order.
    envs = _topology_envs('n9 n9 n10 n10 n11 n11 n12 n12',
                          SLURMD_NODENAME=None, SLURM_LOCALID=None)
    self.assertEveryTask(envs, {'worker': _WORKERS},
                         tasks=[('worker', rank) for rank in range(8)])

  def testOwnRankMissingFromTheNodesRanksIsRuntimeErrorNamingThem(self):
    # Rank 0 on n11, whose SLURM_GTIDS should be 0,1.
    self.use_env(_topology_envs()[0] | {'SLURM_GTIDS': '2,3'})
    self.assertResolverFails(
        RuntimeError, r"SLURM_GTIDS: Slurm says '2,3', expected the ranks of "
        r"the 2 tasks of this node with this task's, SLURM_PROCID 0, at its "
        r'SLURM_LOCALID 0')

  def testNodesRanksOfAnotherCountIsRuntimeErrorNamingThem(self):
    self.use_env(_topology_envs()[0] | {'SLURM_GTIDS': '0'})
    self.assertResolverFails(RuntimeError,
                             r"SLURM_GTIDS: Slurm says '0', expected the "
                             r'ranks of the 2 tasks of this node')

  def testNonAsciiDigitInTheNodesRanksIsValueErrorNamingThem(self):
    self.use_env(_topology_envs()[0] | {'SLURM_GTIDS': '0,\u00b2'})
    self.assertResolverFails(
        ValueError, "^SLURM_GTIDS='0,\u00b2': rank='\u00b2': expected an "
        'integer in')


if __name__ == '__main__':
  absltest.main()
