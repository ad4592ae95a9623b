#!/bin/bash
# Multi-worker GPU training on a real Slurm cluster: 2 nodes x 4 tasks, one
# TensorFlow worker (MultiWorkerMirroredStrategy) per task. Slurm gives each
# node 4 GPUs and SlurmClusterResolver() gives each of the node's 4 tasks its
# own one (by SLURM_LOCALID); with --gpus-per-task=1 or --gpu-bind instead,
# each task keeps the GPU Slurm bound to it. Submit from the repository root:
#   sbatch examples/sbatch_gpu.sh [train_mwms.py options, e.g. --epochs 5]
# (or from elsewhere with REPO=/path/to/repo, which sbatch passes on).
# PYTHON: a Python with GPU TensorFlow (e.g. pip install 'tensorflow[and-cuda]')
# [python3], with this package installed (pip install /path/to/repo, or the
# repository's .venv): the package switches itself on there (no PYTHONPATH),
# so that pip TensorFlow uses this repository's resolver. Adapt partition,
# account, time and --cpus-per-task (4 tasks x 4 CPUs need 16 CPUs per node;
# on the Slurm lab's 4-CPU nodes: sbatch -p debug --cpus-per-task=1
# examples/sbatch_gpu.sh).
#SBATCH --job-name=tf-mwms-gpu
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=4
#SBATCH --time=00:30:00
#SBATCH --output=tf-mwms-gpu-%j.out
set -euo pipefail

repo="${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}"
echo "job ${SLURM_JOB_ID}: nodes ${SLURM_JOB_NODELIST}, tasks per node" \
     "${SLURM_TASKS_PER_NODE}, GPUs here ${CUDA_VISIBLE_DEVICES:-none}"
# One step over the whole allocation; each task finds its role and GPUs.
# --cpus-per-task again: srun 22.05 (and 23.02) does not take it from the job,
# so where Slurm binds CPUs a task can get one CPU and TensorFlow sizes its
# thread pools for one; every Slurm version takes the option (guide:
# "CPUs per task").
srun --kill-on-bad-exit=1 --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" \
  "${PYTHON:-python3}" "${repo}/examples/train_mwms.py" "$@"
