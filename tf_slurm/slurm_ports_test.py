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
"""The ports of SlurmClusterResolver's tasks: port_base.

A number (8888 by default): a task's port is port_base + its index on its
node (SLURM_LOCALID), and the cluster lists the tasks node by node.
'reserved': the reserved port of that index (`srun --resv-ports`).
'derived': a base in 20000..32767 derived from the job and step ids.
Heterogeneous steps: slurm_het_test.
"""

import re

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs


class PortTest(slurm_resolver_test_util.ResolverTestCase):
  """port_base: a number, Slurm's reserved ports, or derived from the ids."""

  @parameterized.named_parameters(
      ('_range', '12000-12003', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {},
       ['n1:12000', 'n1:12001', 'n2:12000', 'n2:12001']),
      ('_range_and_single_port', '12000-12001,12005', 'n[1-2]', '3,1',
       'n1 n1 n1 n2', {}, ['n1:12000', 'n1:12001', 'n1:12005', 'n2:12000']),
      ('_more_than_needed', '12000-12009', 'n1', '2', 'n1 n1', {},
       ['n1:12000', 'n1:12001']),
      # srun -n5 -N2 -m cyclic: rank 1 alone on n2 is task 4.
      ('_cyclic', '12000-12003', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'},
       ['n1:12000', 'n1:12001', 'n1:12002', 'n1:12003', 'n2:12000']),
  )
  def testReservedPortOfATaskIsItsIndexOnItsNode(self, reserved, nodelist,
                                                 tasks_per_node, rank_hosts,
                                                 more, spec):
    self.assertEveryTask(
        step_envs(nodelist, tasks_per_node, rank_hosts,
                  SLURM_STEP_RESV_PORTS=reserved, **more), {'worker': spec},
        port_base='reserved')

  def testReservedWithoutResvPortsIsRuntimeErrorSayingToUseSrunResvPorts(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        RuntimeError, r'SLURM_STEP_RESV_PORTS.*srun --resv-ports',
        port_base='reserved')

  def testReservedUnderMpirunIsValueErrorSayingToUseSrunResvPorts(self):
    # Rank 3 of mpirun -n5 in sbatch -N3 -n5: SLURM_STEP_RESV_PORTS there
    # are the ports of the daemon step mpirun started, not of the ranks.
    self.use_env(slurm_test_util.ompi_env(
        3, 0, 1, 'n10', SLURM_STEP_RESV_PORTS='12000-12001'))
    self.assertResolverFails(
        ValueError, r"port_base='reserved' under mpirun \(Open MPI 4\): "
        r'.*srun --resv-ports', port_base='reserved')

  @parameterized.named_parameters(('_on_the_busiest_node', 1, '12000'),
                                  ('_on_another_node', 3, '12000-12001'))
  def testFewerReservedPortsThanTasksOnTheBusiestNodeIsRuntimeError(
      self, rank, reserved):
    # srun -N2 -n4 lays out 3,1: the task alone on n2 must fail too.
    self.use_env(
        step_env('n[1-2]', '3,1', 'n1 n1 n1 n2', rank,
                 SLURM_STEP_RESV_PORTS=reserved))
    self.assertResolverFails(
        RuntimeError, r'SLURM_STEP_RESV_PORTS has \d ports .* busiest node '
        r'runs 3 tasks', port_base='reserved')

  @parameterized.named_parameters(
      ('_letters', 'abc'),
      ('_descending', '12003-12000'),
      ('_empty', ''),
      ('_empty_item', '12000,,12001'),
      ('_space_separated', '12000 12001'),
      ('_brackets', '[12000-12001]'),
      ('_negative', '-12000'),
  )
  def testMalformedResvPortsIsValueErrorNamingIt(self, value):
    self.use_env(step_env('n1', '2', 'n1 n1', 1, SLURM_STEP_RESV_PORTS=value))
    self.assertResolverFails(
        ValueError, r'SLURM_STEP_RESV_PORTS=%s' % re.escape(repr(value)),
        port_base='reserved')

  @parameterized.named_parameters(('_zero', '0-1'),
                                  ('_above_65535', '65535-65536'))
  def testReservedPortOutsideOneTo65535IsValueErrorNamingIt(self, value):
    # A port outside 1..65535 is a ValueError (SlurmClusterResolver's
    # port_base), and a malformed Slurm variable is one.
    self.use_env(step_env('n1', '2', 'n1 n1', 1, SLURM_STEP_RESV_PORTS=value))
    self.assertResolverFails(ValueError, r'SLURM_STEP_RESV_PORTS',
                             port_base='reserved')

  def testDefaultPortBaseIs8888EvenWithReservedPorts(self):
    self.use_env(
        step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1,
                 SLURM_STEP_RESV_PORTS='12000-12001'))
    self.assertWorkers(['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889'],
                       SlurmClusterResolver())

  def derived(self, job_id='42', step_id='0', rank=0, nodelist='n[1-2]',
              tasks_per_node='2(x2)', rank_hosts='n1 n1 n2 n2'):
    """Returns the workers' addresses with port_base='derived'."""
    self.use_env(
        step_env(nodelist, tasks_per_node, rank_hosts, rank,
                 SLURM_JOB_ID=job_id, SLURM_STEP_ID=step_id))
    resolver = SlurmClusterResolver(port_base='derived')
    return resolver.cluster_spec().as_dict()['worker']

  @parameterized.named_parameters(
      ('_small_ids', '1', '0'),
      ('_typical_ids', '4242', '3'),
      ('_large_ids', '4294967294', '4294967293'),
      ('_ids_unset', None, None),
  )
  def testDerivedPortsLieIn20000To32767(self, job_id, step_id):
    for port in slurm_test_util.ports(self.derived(job_id, step_id)):
      self.assertBetween(port, 20000, 32767)

  def testDerivedPortsForManyTasksOnANodeLieIn20000To32767(self):
    ports = slurm_test_util.ports(
        self.derived('4242', '3', nodelist='n1', tasks_per_node='70',
                     rank_hosts=' '.join(['n1'] * 70)))
    self.assertBetween(min(ports), 20000, 32767)
    self.assertBetween(max(ports), 20000, 32767)

  @parameterized.named_parameters(
      ('_block', 'n[1-2]', '2(x2)', 'n1 n1 n2 n2', {}),
      ('_cyclic', 'n[1-2]', '4,1', 'n1 n2 n1 n1 n1',
       {'SLURM_DISTRIBUTION': 'cyclic'}),
  )
  def testDerivedPortsAreTheSameInEveryTask(self, nodelist, tasks_per_node,
                                            rank_hosts, more):
    specs = []
    for rank in (0, len(rank_hosts.split()) - 1):
      self.use_env(
          step_env(nodelist, tasks_per_node, rank_hosts, rank,
                   SLURM_JOB_ID='4242', SLURM_STEP_ID='3', **more))
      specs.append(
          SlurmClusterResolver(port_base='derived').cluster_spec().as_dict())
    self.assertEqual(specs[0], specs[1])

  @parameterized.named_parameters(
      ('_next_step', ('42', '0'), ('42', '1')),
      ('_later_step', ('42', '0'), ('42', '5')),
      ('_next_job', ('42', '0'), ('43', '0')),
      ('_next_job_earlier_step', ('42', '1'), ('43', '0')),
      ('_large_job_ids', ('1000000', '0'), ('1000001', '0')),
  )
  def testDerivedPortsDifferForAnotherStep(self, ids, other_ids):
    ports = slurm_test_util.ports(self.derived(*ids))
    other_ports = slurm_test_util.ports(self.derived(*other_ids))
    self.assertEmpty(set(ports) & set(other_ports))

  def testDerivedPortsOfARequeuedJobAreTheSame(self):
    # A requeued job keeps its id, restarts its step ids at 0 and may land
    # on other nodes.
    first = self.derived('4242', '0', nodelist='n[1-2]',
                         rank_hosts='n1 n1 n2 n2')
    requeued = self.derived('4242', '0', nodelist='n[3-4]',
                            rank_hosts='n3 n3 n4 n4')
    self.assertEqual(slurm_test_util.ports(first),
                     slurm_test_util.ports(requeued))

  def testDerivedPortsAreConsecutiveOnANode(self):
    ports = slurm_test_util.ports(self.derived(tasks_per_node='3,1',
                                               rank_hosts='n1 n1 n1 n2'))
    base = ports[0]
    self.assertEqual([base, base + 1, base + 2, base], ports)

  @parameterized.named_parameters(('_auto', 'auto'), ('_empty', ''),
                                  ('_capitalized', 'Derived'))
  def testUnknownPortBaseStringIsValueError(self, port_base):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        ValueError, r"port_base=%s: expected an integer port, 'reserved' or "
        r"'derived'" % re.escape(repr(port_base)), port_base=port_base)


if __name__ == '__main__':
  absltest.main()
