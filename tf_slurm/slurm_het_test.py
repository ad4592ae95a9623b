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
"""SlurmClusterResolver in heterogeneous steps (`srun A : B`).

Tasks are numbered node by node in SLURM_STEP_NODELIST order, as in every
step, whatever the components' order; with het_jobs each component is a job,
and the nodes are ordered by the job of their component (in list order within
a job). GPUs are dealt within each component; ports are not reserved.
"""

import os
import re

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util
from tf_slurm.resolver import SlurmClusterResolver

step_env = slurm_test_util.step_env
step_envs = slurm_test_util.step_envs
het_gpu_env = slurm_test_util.het_gpu_env
het_later_node_env = slurm_test_util.het_later_node_env


class HeterogeneousLayoutTest(slurm_resolver_test_util.ResolverTestCase):
  """Without het_jobs, one worker job numbered node by node."""

  @parameterized.named_parameters(
      ('_slurm_22_05',
       slurm_test_util.het_variables('slurm_22_05', 'n3', 'n1')),
      ('_pack_names_only',
       {'SLURM_PACK_SIZE': '2', 'SLURM_JOB_NODELIST_PACK_GROUP_0': 'n3',
        'SLURM_JOB_NODELIST_PACK_GROUP_1': 'n1'}),
      ('_het_names_only',
       slurm_test_util.het_variables('het_group', 'n3', 'n1')),
  )
  def testComponentZeroOnTheLaterListedNodeIsNumberedLast(self, het):
    # srun -w n3 -n2 : -w n1 -n1: the step node list is sorted (n[1,3], tasks
    # 1,2); ranks 0-1 run on n3 (SLURM_NODEID 0) and rank 2 on n1
    # (SLURM_NODEID 1). Rank 2 is worker 0, ranks 0-1 workers 1-2.
    self.assertEveryTask(
        slurm_test_util.step_envs('n[1,3]', '1,2', 'n3 n3 n1',
                                  node_ids='n3 n1', SLURM_DISTRIBUTION='block',
                                  **het),
        {'worker': ['n1:8888', 'n3:8888', 'n3:8889']},
        tasks=[('worker', 1), ('worker', 2), ('worker', 0)])

  def testCyclicComponentNumbersItsTasksNodeByNode(self):
    # srun -w n9 -n1 : -w n10,n11 -N2 -n4 -m cyclic, as Slurm ran it:
    # component 1 deals ranks 1-4 over n10, n11 cyclically (3 and 1 tasks);
    # the workers are numbered node by node: rank 2, on n11, is the last.
    self.assertEveryTask(
        slurm_test_util.step_envs(
            'n[9-11]', '1,3,1', 'n9 n10 n11 n10 n10',
            SLURM_DISTRIBUTION='cyclic',
            **slurm_test_util.het_variables('slurm_22_05', 'n9', 'n[10-11]')),
        {'worker': ['n9:8888', 'n10:8888', 'n10:8889', 'n10:8890',
                    'n11:8888']},
        tasks=[('worker', 0), ('worker', 1), ('worker', 4), ('worker', 2),
               ('worker', 3)])


# The allocation's variables in every step of `salloc -n1 : -N2 -n4` (or an
# sbatch script of two components, `#SBATCH hetjob`), as Slurm 22.05 and
# 26.05 set them: component 0 on n9, component 1 on n10 and n11. Slurm 20.11
# names the lists ..._PACK_GROUP_<n> only.
_ALLOCATION_SCHEMES = slurm_test_util.HET_SCHEMES + (
    ('_pack_names_only', 'pack_only'),)


def _allocation(scheme, *component_nodelists):
  """The variables a heterogeneous allocation gives all of its steps."""
  if scheme != 'pack_only':
    return slurm_test_util.het_variables(scheme, *component_nodelists)
  env = {'SLURM_PACK_SIZE': str(len(component_nodelists))}
  for component, nodelist in enumerate(component_nodelists):
    env['SLURM_JOB_NODELIST_PACK_GROUP_%d' % component] = nodelist
  return env


class StepsOfAHeterogeneousAllocationTest(
    slurm_resolver_test_util.ResolverTestCase):
  """Inside `salloc A : B`, a step of one component is an ordinary step."""

  @parameterized.named_parameters(*_ALLOCATION_SCHEMES)
  def testPlainSrunRunsComponentZeroAlone(self, scheme):
    # srun: one task on n9, though SLURM_HET_SIZE=2 is still set.
    self.assertEveryTask(
        step_envs('n9', '1', 'n9', SLURM_DISTRIBUTION='cyclic',
                  **_allocation(scheme, 'n9', 'n[10-11]')),
        {'worker': ['n9:8888']})

  @parameterized.named_parameters(*_ALLOCATION_SCHEMES)
  def testOneTaskOfComponentOneRunsAlone(self, scheme):
    # srun --het-group=1 -n1: one task on n10, the first node of component 1.
    self.assertEveryTask(
        step_envs('n10', '1', 'n10', SLURM_DISTRIBUTION='cyclic',
                  **_allocation(scheme, 'n9', 'n[10-11]')),
        {'worker': ['n10:8888']})

  def testComponentOneOnOneNodeRunsAlone(self):
    # srun --het-group=1 -N1 -n2: both tasks on n10.
    self.assertEveryTask(
        step_envs('n10', '2', 'n10 n10', SLURM_DISTRIBUTION='block',
                  **_allocation('het_group', 'n9', 'n[10-11]')),
        {'worker': ['n10:8888', 'n10:8889']})

  def testComponentOneOverItsNodesIsBlockWise(self):
    # srun --het-group=1: 3,1 tasks on n10, n11 in rank order.
    self.assertEveryTask(
        step_envs('n[10-11]', '3,1', 'n10 n10 n10 n11',
                  SLURM_DISTRIBUTION='block',
                  **_allocation('het_group', 'n9', 'n[10-11]')),
        {'worker': ['n10:8888', 'n10:8889', 'n10:8890', 'n11:8888']})

  @parameterized.named_parameters(*_ALLOCATION_SCHEMES)
  def testCyclicStepOfComponentOneIsNumberedNodeByNode(self, scheme):
    # srun --het-group=1 -n3 -m cyclic: ranks 0, 2 on n10 and 1 on n11
    # (SLURM_GTIDS 0,2 and 1): ranks 0, 2 are workers 0, 1; rank 1 worker 2.
    self.assertEveryTask(
        step_envs('n[10-11]', '2,1', 'n10 n11 n10',
                  SLURM_DISTRIBUTION='cyclic',
                  **_allocation(scheme, 'n9', 'n[10-11]')),
        {'worker': ['n10:8888', 'n10:8889', 'n11:8888']},
        tasks=[('worker', 0), ('worker', 2), ('worker', 1)])

  def testBothComponentsAreAHeterogeneousStep(self):
    # srun --het-group=0,1: n9's rank 0, then component 1's ranks 1-4.
    self.assertEveryTask(
        step_envs('n[9-11]', '1,3,1', 'n9 n10 n10 n10 n11',
                  SLURM_DISTRIBUTION='block',
                  **_allocation('het_group', 'n9', 'n[10-11]')),
        {'ps': ['n9:8888'],
         'worker': ['n10:8888', 'n10:8889', 'n10:8890', 'n11:8888']},
        tasks=[('ps', 0), ('worker', 0), ('worker', 1), ('worker', 2),
               ('worker', 3)],
        het_jobs=['ps', 'worker'])

  def testBothComponentsCyclicAreNumberedNodeByNode(self):
    # srun --het-group=0,1 -m cyclic: component 1 deals ranks 1-4 over n10,
    # n11 (3 and 1 tasks) cyclically. Every task sees the last component's
    # SLURM_DISTRIBUTION (srun -n3 -m cyclic : -n3 gives component 0's
    # block tasks 'cyclic' too), so no task knows the other components'
    # layouts: tasks are numbered node by node, as in any step.
    self.assertEveryTask(
        step_envs('n[9-11]', '1,3,1', 'n9 n10 n11 n10 n10',
                  SLURM_DISTRIBUTION='cyclic',
                  **_allocation('het_group', 'n9', 'n[10-11]')),
        {'worker': ['n9:8888', 'n10:8888', 'n10:8889', 'n10:8890',
                    'n11:8888']},
        tasks=[('worker', 0), ('worker', 1), ('worker', 4), ('worker', 2),
               ('worker', 3)])

  def testComponentsOfTheStepAreNumberedInOrder(self):
    # salloc -n1 : -n1 : -n1, srun --het-group=0,2: components 0 and 2 of
    # the allocation are the step's first and second.
    self.assertEveryTask(
        step_envs('n[9,11]', '1,1', 'n9 n11', SLURM_DISTRIBUTION='cyclic',
                  **_allocation('het_group', 'n9', 'n10', 'n11')),
        {'ps': ['n9:8888'], 'worker': ['n11:8888']},
        tasks=[('ps', 0), ('worker', 0)], het_jobs=['ps', 'worker'])

  def testHetJobsInAStepOfOneComponentIsRuntimeError(self):
    self.use_env(step_env('n10', '1', 'n10', 0,
                          **_allocation('het_group', 'n9', 'n[10-11]')))
    self.assertResolverFails(
        RuntimeError, r"het_jobs=\['ps', 'worker'\] needs a heterogeneous "
        r'step .*this step runs one component', het_jobs=['ps', 'worker'])


class HeterogeneousJobsTest(slurm_resolver_test_util.ResolverTestCase):
  """het_jobs: each component of `srun A : B` is a TensorFlow job."""

  @parameterized.named_parameters(*slurm_test_util.HET_SCHEMES)
  def testEachComponentIsAJobNumberedNodeByNode(self, scheme):
    self.assertEveryTask(
        [het_gpu_env(rank, scheme) for rank in range(4)],
        {'ps': ['n1:8888'], 'worker': ['n2:8888', 'n2:8889', 'n3:8888']},
        tasks=[('ps', 0), ('worker', 0), ('worker', 1), ('worker', 2)],
        het_jobs=['ps', 'worker'])

  @parameterized.named_parameters(*slurm_test_util.HET_SCHEMES)
  def testComponentZeroOnTheLaterListedNodeIsTheFirstJob(self, scheme):
    # ps (component 0, on n3) comes before worker (component 1, on n1).
    self.assertEveryTask(
        [het_later_node_env(rank, scheme) for rank in range(3)],
        {'ps': ['n3:8888', 'n3:8889'], 'worker': ['n1:8888']},
        tasks=[('ps', 0), ('ps', 1), ('worker', 0)],
        het_jobs=['ps', 'worker'])

  def testEachComponentIsItsJobThoughTheJobNamesSortOtherwise(self):
    # Component 0 (n1) is the worker, component 1 (n2, n3) the ps: the ps
    # tasks are the ps job, node by node, though 'ps' sorts first.
    self.assertEveryTask(
        [het_gpu_env(rank) for rank in range(4)],
        {'ps': ['n2:8888', 'n2:8889', 'n3:8888'], 'worker': ['n1:8888']},
        tasks=[('worker', 0), ('ps', 0), ('ps', 1), ('ps', 2)],
        het_jobs=['worker', 'ps'])

  def testJobsAgreeingWithTheComponentsAreAccepted(self):
    self.use_env(het_gpu_env(2))
    resolver = SlurmClusterResolver(jobs={'worker': 3, 'ps': 1},
                                    het_jobs=('ps', 'worker'))
    self.assertEqual(('worker', 1), resolver.get_task_info())
    self.assertEqual('grpc://n2:8889', resolver.master())

  @parameterized.named_parameters(
      ('_other_counts', {'ps': 2, 'worker': 2}),
      ('_other_names', {'chief': 1, 'worker': 3}),
      ('_one_job_for_all', {'worker': 4}),
  )
  def testJobsContradictingTheComponentsIsRuntimeErrorNamingBoth(self, jobs):
    self.use_env(het_gpu_env(2))
    self.assertResolverFails(
        RuntimeError, r"jobs=%s .*het_jobs=\['ps', 'worker'\] gives "
        r"\{'ps': 1, 'worker': 3\}" % re.escape(repr(jobs)), jobs=jobs,
        het_jobs=['ps', 'worker'])

  def testHetJobsInAStepThatIsNotHeterogeneousIsRuntimeError(self):
    self.use_env(step_env('n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1))
    self.assertResolverFails(
        RuntimeError, r"het_jobs=\['ps', 'worker'\] needs a heterogeneous "
        r'step.*SLURM_HET_SIZE is not set', het_jobs=['ps', 'worker'])

  @parameterized.named_parameters(
      ('_string', 'ps,worker', r"het_jobs='ps,worker': expected a list"),
      ('_one_name_string', 'worker', r"het_jobs='worker': expected a list"),
      ('_dict', {'ps': 1, 'worker': 3},
       r"het_jobs=\{'ps': 1, 'worker': 3\}: expected a list"),
      ('_int', 2, r'het_jobs=2: expected a list'),
      ('_name_with_dash', ['ps', 'my-worker'],
       r"het_jobs: job name 'my-worker' is not a valid"),
      ('_empty_name', ['', 'worker'], r"het_jobs: job name '' is not a valid"),
      ('_name_not_a_string', ['ps', None],
       r'het_jobs: job name None is not a valid'),
      ('_too_few_names', ['ps'],
       r"het_jobs=\['ps'\] names 1 components, but the step has tasks of "
       r'component 1'),
      ('_no_names', [], r'het_jobs=\[\] names 0 components'),
  )
  def testBadHetJobsIsValueError(self, het_jobs, regex):
    self.use_env(het_gpu_env(1))
    self.assertResolverFails(ValueError, regex, het_jobs=het_jobs)

  @parameterized.named_parameters(
      ('_components_in_node_order', het_gpu_env,
       ['n1:8888', 'n2:8888', 'n2:8889', 'n3:8888'], [0, 1, 2, 3]),
      # Ranks 0-1 on n3, rank 2 on n1.
      ('_component_zero_on_later_node', het_later_node_env,
       ['n1:8888', 'n3:8888', 'n3:8889'], [1, 2, 0]),
  )
  def testSameJobForTwoComponentsKeepsTheNodeListOrder(self, make_env, spec,
                                                       indices):
    self.assertEveryTask([make_env(rank) for rank in range(len(spec))],
                         {'worker': spec},
                         tasks=[('worker', index) for index in indices],
                         het_jobs=['worker', 'worker'])

  @parameterized.named_parameters(
      ('_first_slurm_22_05', 'slurm_22_05', 'SLURM_JOB_NODELIST_PACK_GROUP_0',
       'SLURM_JOB_NODELIST_HET_GROUP_0'),
      ('_second_slurm_22_05', 'slurm_22_05', 'SLURM_JOB_NODELIST_PACK_GROUP_1',
       'SLURM_JOB_NODELIST_HET_GROUP_1'),
      ('_second_het_group', 'het_group', 'SLURM_JOB_NODELIST_HET_GROUP_1',
       'SLURM_JOB_NODELIST_HET_GROUP_1'),
  )
  def testMissingComponentNodeListIsRuntimeErrorNamingIt(self, scheme, missing,
                                                         named):
    # Also without het_jobs: ranks are not numbered by guesswork.
    self.use_env(het_gpu_env(1, scheme, **{missing: None}))
    self.assertResolverFails(RuntimeError, r'%s is not set' % named)

  @parameterized.named_parameters(
      ('_het_size', {'SLURM_HET_SIZE': 'two'}, "SLURM_HET_SIZE='two'"),
      ('_pack_size_alone', {'SLURM_HET_SIZE': None, 'SLURM_PACK_SIZE': 'two'},
       "SLURM_PACK_SIZE='two'"),
  )
  def testBadComponentCountIsValueErrorNamingItsVariable(self, overrides,
                                                         regex):
    self.use_env(het_gpu_env(1, **overrides))
    self.assertResolverFails(ValueError, regex)


class HeterogeneousGpuTest(slurm_resolver_test_util.ResolverTestCase):
  """GPUs are dealt within each component, by its own busiest node."""

  def testEveryTaskKeepsTheGpusOfTheRealStep(self):
    # srun -N1 -n1 : -N2 -n3 --gpus-per-task=1 (as recorded on Slurm 22.05):
    # ps has no GPUs, each worker the one Slurm bound to it.
    self.assertEveryTask([het_gpu_env(rank) for rank in range(4)],
                         gpus=[None, '0', '1', '0'], het_jobs=['ps', 'worker'])

  @parameterized.named_parameters(('_ps', 0, '0,1,2,3'), ('_worker', 2, '1'))
  def testComponentsMayHaveDifferentGpusPerTask(self, rank, cvd):
    # srun -N1 -n1 --gres=gpu:4 : -N2 -n3 --gpus-per-task=1.
    node_gpus = {'CUDA_VISIBLE_DEVICES': '0,1,2,3',
                 'SLURM_STEP_GPUS': '0,1,2,3', 'SLURM_GPUS_ON_NODE': '4'}
    self.use_env(het_gpu_env(rank, **(node_gpus if rank == 0 else {})))
    resolver = SlurmClusterResolver(het_jobs=['ps', 'worker'])
    self.assertEqual({'GPU': len(cvd.split(','))}, resolver.num_accelerators())
    self.assertEqual(cvd, os.environ['CUDA_VISIBLE_DEVICES'])

  def testComponentsCountTheirOwnBusiestNode(self):
    # srun -w n1 -n1 --gres=gpu:2 : -w n[2-3] -n3 --gres=gpu:4 (2,1): the
    # GPU component's tasks get 4 // 2 each; component 0's one task both.
    het = dict(slurm_test_util.het_variables('het_group', 'n1', 'n[2-3]'),
               SLURM_DISTRIBUTION='block')
    node_gpus = ['0,1', '0,1,2,3', '0,1,2,3', '0,1,2,3']
    self.assertEveryTask(
        [step_env('n[1-3]', '1,2,1', 'n1 n2 n2 n3', rank,
                  CUDA_VISIBLE_DEVICES=cvd, **het)
         for rank, cvd in enumerate(node_gpus)],
        gpus=['0,1', '0,1', '2,3', '0,1'])

  def testComponentWithMoreTasksThanGpusShares(self):
    het = dict(slurm_test_util.het_variables('het_group', 'n1', 'n2'),
               SLURM_DISTRIBUTION='block')
    self.use_env(step_env('n[1-2]', '1,3', 'n1 n2 n2 n2', 3,
                          CUDA_VISIBLE_DEVICES='0,1', **het))
    with self.assertLogs(level='WARNING') as logs:
      resolver = SlurmClusterResolver()
    self.assertEqual('0', os.environ['CUDA_VISIBLE_DEVICES'])
    self.assertEqual('true', os.environ['TF_FORCE_GPU_ALLOW_GROWTH'])
    self.assertEqual({'GPU': 1}, resolver.num_accelerators())
    self.assertIn("this task's GPU is used by 2 task(s) of this node (2 GPUs "
                  'for the 3 tasks of the busiest node)',
                  '\n'.join(logs.output))


class HeterogeneousPortTest(slurm_resolver_test_util.ResolverTestCase):
  """Ports of a heterogeneous step: 'derived' works, 'reserved' is refused."""

  def testReservedPortsAreRefusedSayingToUseDerived(self):
    # Slurm reserves each component's ports on its own nodes, yet gives every
    # task the ports of all components: no task can tell which are its own.
    self.use_env(het_later_node_env(0, SLURM_STEP_RESV_PORTS='12000-12002'))
    self.assertResolverFails(RuntimeError, r"heterogeneous step.*'derived'",
                             port_base='reserved')

  def testDerivedPortsAreTheSameInEveryComponent(self):
    # Slurm 22.05 sets component 0's SLURM_JOB_ID in every component's tasks.
    specs = []
    for rank in (0, 3):
      self.use_env(het_gpu_env(rank))
      resolver = SlurmClusterResolver(port_base='derived',
                                      het_jobs=['ps', 'worker'])
      specs.append(resolver.cluster_spec().as_dict())
    self.assertEqual(specs[0], specs[1])


if __name__ == '__main__':
  absltest.main()
