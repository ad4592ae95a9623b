#!/bin/bash
# Training that survives the end of its Slurm job: 2 nodes x 1 task, one
# MultiWorkerMirroredStrategy worker per task (examples/train_requeue.py).
# Before the time limit every worker saves a checkpoint at the same step, task
# 0 requeues the job, and the requeued job resumes from that checkpoint; see
# docs/slurm_guide.md, "Surviving the end of a job". Submit from the
# repository root:
#   sbatch examples/sbatch_requeue.sh --checkpoint-dir /shared/run1
# (or from elsewhere with REPO=/path/to/repo). PYTHON: a Python with
# TensorFlow and this package installed (pip install /path/to/repo, or the
# repository's .venv; no PYTHONPATH) [python3]. Adapt partition, account
# and time.
#SBATCH --job-name=tf-requeue
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --time=04:00:00
# SIGUSR1 to every task about 120 s (up to 60 s more) before the time limit:
# time to save before Slurm's SIGTERM and, KillWait seconds later, SIGKILL.
#SBATCH --signal=USR1@120
# The job may be requeued (also where the cluster's JobRequeue=0).
#SBATCH --requeue
# A requeued job appends to its output file instead of truncating it.
#SBATCH --open-mode=append
#SBATCH --output=tf-requeue-%j.out
set -uo pipefail

repo="${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}"
echo "job ${SLURM_JOB_ID}: $(date -u +%FT%TZ) restart ${SLURM_RESTART_COUNT:-0}" \
     "on ${SLURM_JOB_NODELIST}"
# At the time limit Slurm sends SIGTERM to this shell too: note it and go on,
# so that the lines after srun still run.
trap 'echo "job ${SLURM_JOB_ID}: batch script got SIGTERM"' TERM
srun "${PYTHON:-python3}" "${repo}/examples/train_requeue.py" "$@"
status=$?
echo "job ${SLURM_JOB_ID}: srun exited with ${status}"
# 43: the job should be requeued, but task 0 could not (no scontrol where it
# runs, e.g. in a container). 138 (128 + SIGUSR1): the early warning ended a
# task before its SlurmTerminationConfig existed, so nothing was saved or
# requeued. Either way, requeue the job from here.
case "${status}" in
  43|138)
    echo "job ${SLURM_JOB_ID}: requeued by the batch script (srun status" \
         "${status}); it resumes from its last checkpoint"
    scontrol requeue "${SLURM_JOB_ID}" ;;
esac
exit "${status}"
