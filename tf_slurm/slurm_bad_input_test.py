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
"""Bad input to SlurmClusterResolver: an error naming it, and no change.

Every bad Slurm variable or argument is a ValueError or RuntimeError that
names the variable or argument and its value, and leaves os.environ as it
was (CUDA_VISIBLE_DEVICES included).
"""

from absl.testing import absltest
from absl.testing import parameterized

from tf_slurm import resolver_test_util as slurm_resolver_test_util
from tf_slurm import slurm_test_util


class BadInputTest(slurm_resolver_test_util.ResolverTestCase):
  """Every bad input is an error naming it, and changes nothing."""

  def setUp(self):
    super().setUp()
    # srun -N2 --ntasks-per-node=2 --gres=gpu:4, rank 1: resolving would set
    # CUDA_VISIBLE_DEVICES to 2,3.
    self.base_env = slurm_test_util.step_env(
        'n[1-2]', '2(x2)', 'n1 n1 n2 n2', 1, CUDA_VISIBLE_DEVICES='0,1,2,3',
        SLURM_STEP_GPUS='0,1,2,3', SLURM_GPUS_ON_NODE='4')

  @parameterized.named_parameters(
      ('_procid_not_a_number', {'SLURM_PROCID': 'abc'}, ValueError,
       r"SLURM_PROCID='abc'"),
      ('_procid_negative', {'SLURM_PROCID': '-1'}, ValueError,
       r"SLURM_PROCID='-1'"),
      ('_procid_empty', {'SLURM_PROCID': ''}, ValueError, r"SLURM_PROCID=''"),
      ('_procid_non_ascii_digit', {'SLURM_PROCID': '\u00b2'}, ValueError,
       "SLURM_PROCID='\u00b2'"),
      ('_procid_past_last_task', {'SLURM_PROCID': '4'}, RuntimeError,
       r'SLURM_PROCID=4 .* 4 tasks'),
      ('_procid_missing', {'SLURM_PROCID': None}, RuntimeError,
       r'SLURM_PROCID is not set.*srun'),
      ('_tasks_per_node_letter', {'SLURM_STEP_TASKS_PER_NODE': 'x'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='x'"),
      ('_tasks_per_node_zero_repeats', {'SLURM_STEP_TASKS_PER_NODE': '2(x0)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2\(x0\)'"),
      ('_tasks_per_node_empty', {'SLURM_STEP_TASKS_PER_NODE': ''}, ValueError,
       r"SLURM_STEP_TASKS_PER_NODE=''"),
      ('_tasks_per_node_empty_entry', {'SLURM_STEP_TASKS_PER_NODE': '2,,2'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2,,2'"),
      ('_tasks_per_node_zero_tasks', {'SLURM_STEP_TASKS_PER_NODE': '0(x2)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='0\(x2\)'"),
      ('_tasks_per_node_too_short', {'SLURM_STEP_TASKS_PER_NODE': '4'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='4' has 1 entries but "
       r"SLURM_STEP_NODELIST='n\[1-2\]' has 2 nodes"),
      ('_tasks_per_node_too_long', {'SLURM_STEP_TASKS_PER_NODE': '2(x3)'},
       ValueError, r"SLURM_STEP_TASKS_PER_NODE='2\(x3\)' has 3 entries"),
      ('_tasks_per_node_missing', {'SLURM_STEP_TASKS_PER_NODE': None},
       RuntimeError, r'SLURM_STEP_TASKS_PER_NODE is not set'),
      ('_nodelist_descending', {'SLURM_STEP_NODELIST': 'n[2-1]'}, ValueError,
       r"SLURM_STEP_NODELIST='n\[2-1\]'"),
      ('_nodelist_unbalanced', {'SLURM_STEP_NODELIST': 'n[1-2'}, ValueError,
       r"SLURM_STEP_NODELIST='n\[1-2'"),
      ('_nodelist_duplicate', {'SLURM_STEP_NODELIST': 'n1,n1'}, ValueError,
       r"SLURM_STEP_NODELIST='n1,n1' names node 'n1' twice"),
      ('_nodelist_duplicate_after_range', {
          'SLURM_STEP_NODELIST': 'n[1-2],n1',
          'SLURM_STEP_TASKS_PER_NODE': '1,1,2'
      }, ValueError,
       r"SLURM_STEP_NODELIST='n\[1-2\],n1' names node 'n1' twice"),
      ('_nodelist_missing', {
          'SLURM_STEP_NODELIST': None,
          'SLURM_JOB_ID': None
      }, RuntimeError, r'SLURM_STEP_NODELIST is not set'),
      # In a job of several tasks, a process without it is outside any step.
      ('_nodelist_missing_in_a_job', {'SLURM_STEP_NODELIST': None},
       RuntimeError, r'This process runs in Slurm job 42 outside an srun step '
       r'\(in its batch script or salloc shell: SLURM_STEP_NODELIST is not '
       r'set\), and the job has 4 tasks \(SLURM_NTASKS=4\): start the program '
       r'with srun'),
      ('_num_tasks_not_a_number', {'SLURM_STEP_NUM_TASKS': 'four'}, ValueError,
       r"SLURM_STEP_NUM_TASKS='four'"),
      ('_gpus_on_node_not_a_number', {'SLURM_GPUS_ON_NODE': 'four'},
       ValueError, r"SLURM_GPUS_ON_NODE='four'"),
  )
  def testBadSlurmVariable(self, overrides, error, regex):
    env = dict(self.base_env, **overrides)
    self.use_env({k: v for k, v in env.items() if v is not None})
    self.assertResolverFails(error, regex)

  @parameterized.named_parameters(
      ('_jobs_not_a_dict', {'jobs': ['worker']}, ValueError,
       r"jobs=\['worker'\]"),
      ('_jobs_empty', {'jobs': {}}, ValueError, r'jobs=\{\}'),
      ('_job_name_with_dash', {'jobs': {'my-job': 4}}, ValueError,
       r"job name 'my-job'"),
      ('_job_name_empty', {'jobs': {'': 4}}, ValueError, r"job name ''"),
      ('_job_name_not_a_string', {'jobs': {1: 4}}, ValueError,
       r'job name 1 '),
      ('_job_count_negative', {'jobs': {'ps': 5, 'worker': -1}}, ValueError,
       r"jobs\['worker'\]=-1"),
      ('_job_count_bool', {'jobs': {'worker': True}}, ValueError,
       r"jobs\['worker'\]=True"),
      ('_job_count_float', {'jobs': {'worker': 4.0}}, ValueError,
       r"jobs\['worker'\]=4\.0"),
      ('_job_count_string', {'jobs': {'worker': '4'}}, ValueError,
       r"jobs\['worker'\]='4'"),
      ('_job_count_none', {'jobs': {'worker': None}}, ValueError,
       r"jobs\['worker'\]=None"),
      ('_jobs_total_too_large', {'jobs': {'ps': 1, 'worker': 4}}, RuntimeError,
       r'Requested 5 tasks .* assigned 4'),
      ('_jobs_total_too_small', {'jobs': {'ps': 1, 'worker': 2}}, RuntimeError,
       r'Requested 3 tasks .* assigned 4'),
      ('_port_zero', {'port_base': 0}, ValueError, r'port_base=0:'),
      ('_port_negative', {'port_base': -1}, ValueError, r'port_base=-1:'),
      ('_port_overflow_with_two_local_tasks', {'port_base': 65535}, ValueError,
       r'port_base=65535: .*65535\.\.65536'),
      ('_port_above_range', {'port_base': 65536}, ValueError,
       r'port_base=65536:'),
      ('_port_string', {'port_base': '8888'}, ValueError,
       r"port_base='8888'"),
      ('_port_bool', {'port_base': True}, ValueError, r'port_base=True'),
      ('_port_float', {'port_base': 8888.0}, ValueError,
       r'port_base=8888\.0'),
      ('_port_none', {'port_base': None}, ValueError, r'port_base=None'),
      ('_gpus_per_node_negative', {'gpus_per_node': -1}, ValueError,
       r'gpus_per_node=-1'),
      ('_gpus_per_node_bool', {'gpus_per_node': True}, ValueError,
       r'gpus_per_node=True'),
      ('_gpus_per_node_string', {'gpus_per_node': '4'}, ValueError,
       r"gpus_per_node='4'"),
      ('_gpus_per_node_float', {'gpus_per_node': 2.5}, ValueError,
       r'gpus_per_node=2\.5'),
      ('_gpus_per_node_more_than_visible', {'gpus_per_node': 5}, RuntimeError,
       r'gpus_per_node=5 but this node has 4'),
      ('_gpus_per_task_negative', {'gpus_per_task': -1}, ValueError,
       r'gpus_per_task=-1'),
      ('_gpus_per_task_bool', {'gpus_per_task': True}, ValueError,
       r'gpus_per_task=True'),
      ('_gpus_per_task_string', {'gpus_per_task': '1'}, ValueError,
       r"gpus_per_task='1'"),
      ('_gpus_per_task_float', {'gpus_per_task': 1.5}, ValueError,
       r'gpus_per_task=1\.5'),
      ('_gpus_per_task_oversubscribing_node', {'gpus_per_task': 3},
       RuntimeError, r'2 tasks .* 3 GPUs per task \(gpus_per_task\) > 4'),
      ('_tasks_per_node_contradicting_slurm', {'tasks_per_node': 3},
       RuntimeError, r"tasks_per_node=3 .*SLURM_STEP_TASKS_PER_NODE='2\(x2\)'"),
      ('_tasks_per_node_dict_other_hosts', {
          'tasks_per_node': {'n1': 2, 'n3': 2}
      }, RuntimeError, r"tasks_per_node names hosts \['n1', 'n3'\]"),
      ('_tasks_per_node_dict_contradicting_slurm', {
          'tasks_per_node': {'n1': 3, 'n2': 1}
      }, RuntimeError, r"tasks_per_node=\{'n1': 3, 'n2': 1\}"),
      ('_tasks_per_node_string', {'tasks_per_node': '2'}, ValueError,
       r"tasks_per_node='2'"),
      ('_tasks_per_node_negative', {'tasks_per_node': -1}, ValueError,
       r'tasks_per_node=-1'),
      ('_tasks_per_node_bool', {'tasks_per_node': True}, ValueError,
       r'tasks_per_node=True'),
      ('_tasks_per_node_zero', {'tasks_per_node': 0}, ValueError,
       r'tasks_per_node=0'),
      ('_gpus_per_node_above_maximum', {'gpus_per_node': 10**12}, ValueError,
       r'gpus_per_node=1000000000000: expected None or an integer in '
       r'0..1024'),
      ('_gpus_per_task_above_maximum', {'gpus_per_task': 10**12}, ValueError,
       r'gpus_per_task=1000000000000: expected None or an integer in '
       r'0..1024'),
      ('_tasks_per_node_above_maximum', {'tasks_per_node': 10**9},
       ValueError, r'tasks_per_node=1000000000: expected None or an integer '
       r'in 1..65533'),
      ('_job_count_above_maximum', {'jobs': {'worker': 10**12}}, ValueError,
       r"jobs\['worker'\]=1000000000000: expected an integer in"),
      ('_rpc_layer_not_a_string', {'rpc_layer': 5}, ValueError,
       r'rpc_layer=5: expected a string or None'),
      ('_auto_set_gpu_string', {'auto_set_gpu': 'no'}, ValueError,
       r"auto_set_gpu='no': expected True or False"),
  )
  def testBadArgument(self, kwargs, error, regex):
    self.use_env(self.base_env)
    self.assertResolverFails(error, regex, **kwargs)

  def testHugeGpusPerNodeWithoutGpuVariablesBuildsNoDeviceList(self):
    # Refused before a device name is made for each of 10**12 GPUs.
    self.use_env(slurm_test_util.step_env('n[1-2]', '1,1', 'n1 n2', 0))
    self.assertResolverFails(ValueError, r'gpus_per_node=1000000000000',
                             gpus_per_node=10**12)

  @parameterized.named_parameters(
      ('_node_name', 'SLURMD_NODENAME', 'n9',
       r"SLURMD_NODENAME='n9' is not in the step node list \['n1', 'n2'\] "
       r"\(SLURM_STEP_NODELIST='n\[1-2\]'\)"),
      ('_local_id', 'SLURM_LOCALID', '0',
       r"SLURM_GTIDS: Slurm says '0,1', expected .* SLURM_PROCID 1, at its "
       r"SLURM_LOCALID 0"),
      ('_global_task_ids', 'SLURM_GTIDS', '1,3',
       r"SLURM_GTIDS: Slurm says '1,3', expected the ranks of the 2 tasks of "
       r"this node with this task's, SLURM_PROCID 1, at its SLURM_LOCALID 1"),
  )
  def testTaskVariableContradictingTheLayoutIsErrorShowingBoth(
      self, name, value, regex):
    self.use_env(dict(self.base_env, **{name: value}))
    self.assertResolverFails(RuntimeError, regex)

  def testSallocShellIsErrorSayingToUseSrun(self):
    self.use_env(slurm_test_util.SALLOC_ENV)
    self.assertResolverFails(
        RuntimeError, r'^This process runs in Slurm job 26 outside an srun '
        r'step \(in its batch script or salloc shell: SLURM_STEP_NODELIST is '
        r'not set\), and the job has 5 tasks \(SLURM_NTASKS=5\): start the '
        r'program with srun')

  def testBatchScriptOfAJobOfSeveralTasksIsErrorSayingToUseSrun(self):
    # CUDA_VISIBLE_DEVICES=0,1 stays as it is.
    self.use_env(slurm_test_util.BATCH_ENV)
    self.assertResolverFails(
        RuntimeError, r'^This process runs in Slurm job 25 outside an srun '
        r'step \(in its batch script or salloc shell: SLURM_STEP_NODELIST is '
        r'not set\), and the job has 4 tasks \(SLURM_NTASKS=4\): start the '
        r'program with srun')


if __name__ == '__main__':
  absltest.main()
