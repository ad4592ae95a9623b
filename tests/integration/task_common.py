"""Helpers shared by the task scripts that srun runs in the lab tests."""

import subprocess
import sys
import time

EXPLAIN_MODULE = 'tf_slurm.explain'


def run_explain(args, timeout=60):
  """Runs the explain command in a child Python; returns what it did."""
  started = time.monotonic()
  try:
    proc = subprocess.run(
        [sys.executable, '-m', EXPLAIN_MODULE] + list(args),
        capture_output=True, text=True, timeout=timeout, check=False)
    status, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
  except subprocess.TimeoutExpired:
    status, stdout, stderr = None, '', 'timed out after %s s' % timeout
  return {'status': status, 'stdout': stdout, 'stderr': stderr[-4000:],
          'seconds': time.monotonic() - started}


def describe(resolver):
  """What a resolver decided for this task, for a task's report."""
  spec = resolver.cluster_spec()
  return dict(
      task_type=resolver.task_type,
      task_id=resolver.task_id,
      cluster=spec.as_dict(),
      address=spec.task_address(resolver.task_type, resolver.task_id),
      rpc_layer=resolver.rpc_layer)
