#!/bin/bash
# examples/train_requeue.py in one step over the job, with every sbatch
# option given on the command line (tests/integration/termination_test.py):
# unlike examples/sbatch_requeue.sh, no --signal, so that a time limit comes
# unannounced.
set -uo pipefail
echo "job ${SLURM_JOB_ID}: restart ${SLURM_RESTART_COUNT:-0}"
trap 'echo "job ${SLURM_JOB_ID}: batch script got SIGTERM"' TERM
srun "${PYTHON:-python3}" "${REPO}/examples/train_requeue.py" "$@"
echo "job ${SLURM_JOB_ID}: srun exited with $?"
