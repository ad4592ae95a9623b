#!/bin/sh
# TASK_PYTHON with nothing on PATH, so no scontrol: a task as in a container
# without Slurm's clients (tests/integration/termination_test.py).
PATH=/nonexistent exec "${TASK_PYTHON}" "$@"
