#!/bin/sh
# TASK_PYTHON, started PAUSE_SECONDS after the task on the job's first run
# only: a task that gets the early warning before its Python has created
# the SlurmTerminationConfig (tests/integration/termination_test.py).
if [ -z "${SLURM_RESTART_COUNT:-}" ]; then
  echo "PAUSE task ${SLURM_PROCID}"
  sleep "${PAUSE_SECONDS}"
fi
exec "${TASK_PYTHON}" "$@"
