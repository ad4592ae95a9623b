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
"""One rank requeues the job under a real mpirun on the lab.

Under `mpirun` a rank's `SLURM_PROCID` is that of Open MPI's daemon on its
node, or the batch script's 0 on the first node, so that several ranks see
0. In `sbatch -N3 -n5 --requeue` on n9, n10, n11, `mpirun -n 5` starts a
task on every rank that creates `SlurmTerminationConfig`, gets the early
warning (SIGUSR1, sent to itself) and calls its `exit_fn`, with an
`scontrol` on PATH that logs who ran what: `show job` runs the real one,
`requeue` only logs, so that the job ends. Exactly MPI rank 0 must run
`scontrol`, and every rank must exit with 42. Each rank writes its exit code
to a file of its own: lines forwarded by mpirun from five ranks into one
output file are not a reliable record.

Needs root; run with pytest (the lab is a session fixture in conftest.py):
  SLURM_LAB_SLURM=22.05 .venv/bin/python -m pytest \
      tests/integration/launcher_requeue_test.py
"""

import os

from absl.testing import absltest
import pytest

from launcher_placement_test import _mpi_exports
from launcher_placement_test import mpi  # pylint: disable=unused-import

_TASK = '''\
import os, signal
from tf_slurm import termination as stc
config = stc.SlurmTerminationConfig()
os.kill(os.getpid(), signal.SIGUSR1)
try:
  config.exit_fn()
except SystemExit as e:
  rank = os.environ['OMPI_COMM_WORLD_RANK']
  with open(os.path.join(os.path.dirname(__file__), 'rank%s.exit' % rank),
            'w') as f:
    f.write(str(e.code))
'''
# Logs `<MPI rank> <arguments>`; the real scontrol shows the job.
_SCONTROL = '''\
#!/bin/sh
echo "$OMPI_COMM_WORLD_RANK $*" >> {log}
[ "$1" = requeue ] && exit 0
exec "$REAL_SCONTROL" "$@"
'''


class LauncherRequeueTest(absltest.TestCase):

  @pytest.fixture(autouse=True)
  def _lab(self, mpi, tmp_path):  # pylint: disable=redefined-outer-name
    self.lab = mpi
    self.tmp = str(tmp_path)

  def _write(self, name, text, mode=0o644):
    path = os.path.join(self.tmp, name)
    with open(path, 'w', encoding='utf-8') as f:
      f.write(text)
    os.chmod(path, mode)
    return path

  def _read(self, name):
    with open(os.path.join(self.tmp, name), encoding='utf-8') as f:
      return f.read()

  def test_only_mpi_rank_0_requeues_under_mpirun(self):
    calls = os.path.join(self.tmp, 'scontrol.log')
    os.mkdir(os.path.join(self.tmp, 'bin'))
    self._write('bin/scontrol', _SCONTROL.format(log=calls), 0o755)
    task = self._write('task.py', _TASK)
    output = os.path.join(self.tmp, 'job.out')
    script = self._write('job.sh', (
        '#!/bin/sh\n%s\nexport REAL_SCONTROL=$(command -v scontrol)\n'
        'export PATH=%s/bin:$PATH\nmpirun --bind-to none -n 5 %s %s\n') %
                         (_mpi_exports(self.lab), self.tmp, self.lab.python,
                          task))
    submitted, job_id, fields = self.lab.sbatch(
        'requeue-mpirun', script, timeout=180, cwd=self.tmp,
        sbatch_args=['-w', 'n[9-11]', '-N3', '-n5', '--requeue', '--time=5',
                     '--output', output])
    self.assertEqual(submitted.returncode, 0, submitted.describe())
    with open(output, encoding='utf-8') as f:
      text = f.read()
    self.assertEqual((fields.get('JobState'), fields.get('ExitCode')),
                     ('COMPLETED', '0:0'), text[-4000:])
    self.assertEqual(
        {name: self._read(name) for name in os.listdir(self.tmp)
         if name.endswith('.exit')},
        {'rank%d.exit' % rank: '42' for rank in range(5)}, text[-4000:])
    with open(calls, encoding='utf-8') as f:
      self.assertEqual(f.read().splitlines(),
                       ['0 -o show job %s' % job_id, '0 requeue %s' % job_id])


if __name__ == '__main__':
  absltest.main()
