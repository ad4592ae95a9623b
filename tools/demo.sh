#!/usr/bin/env bash
# Shows the resolver at work: sets up the machine if needed (tools/setup.sh),
# then resolves recorded real Slurm steps for every task and prints each
# task's role, address and GPUs (tools/show_layout.py). Extra arguments are
# step folders, e.g. tests/fixtures/slurm-env/N3-n7.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "${root}/tools/setup.sh"
export TF_CPP_MIN_LOG_LEVEL=2
PYTHONPATH="${root}" exec "${root}/.venv/bin/python3" \
  "${root}/tools/show_layout.py" "$@"
