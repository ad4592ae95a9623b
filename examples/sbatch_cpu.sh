#!/bin/bash
# Multi-worker CPU training on a real Slurm cluster (no GPUs): 3 nodes x 2
# tasks, one TensorFlow worker (MultiWorkerMirroredStrategy) per task, found
# by SlurmClusterResolver() alone: worker i is Slurm rank i, at <node>:8888
# or <node>:8889. Submit from the repository root:
#   sbatch examples/sbatch_cpu.sh [train_mwms.py options, e.g. --epochs 5]
# (or from elsewhere with REPO=/path/to/repo, which sbatch passes on).
# PYTHON: a Python with TensorFlow and this package installed (pip install
# /path/to/repo, or the repository's .venv) [python3]; the package switches
# itself on there (no PYTHONPATH). Adapt partition, account and time; the
# integration tests run this script on the Slurm lab
# (tests/integration/mwms_training_test.py).
#SBATCH --job-name=tf-mwms-cpu
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=2
#SBATCH --time=00:30:00
#SBATCH --output=tf-mwms-cpu-%j.out
set -euo pipefail

repo="${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}"
echo "job ${SLURM_JOB_ID}: nodes ${SLURM_JOB_NODELIST}, tasks per node" \
     "${SLURM_TASKS_PER_NODE}"
# One step over the whole allocation; each task finds its role.
# --cpus-per-task again: srun 22.05 (and 23.02) does not take it from the job,
# so where Slurm binds CPUs a task can get one CPU and TensorFlow sizes its
# thread pools for one; every Slurm version takes the option (guide:
# "CPUs per task").
srun --kill-on-bad-exit=1 --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" \
  "${PYTHON:-python3}" "${repo}/examples/train_mwms.py" "$@"
