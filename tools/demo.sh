#!/usr/bin/env bash
# Shows the resolver at work without Slurm: resolves recorded real Slurm steps
# (tests/fixtures/slurm-env) for every task and prints each task's role,
# address and GPUs (tools/show_layout.py). Extra arguments are fixture folders,
# e.g. tests/fixtures/slurm-env/N3-n7, or --all for every one.
#
# Needs only the repository's .venv (TensorFlow from requirements.txt): an
# existing one is used as it is; a missing one is created as tools/setup.sh
# does, from requirements.txt and requirements-nodeps.txt (which needs
# python3 with venv and access to PyPI). Installs no system package.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
if ! .venv/bin/python3 -c 'import tensorflow' >/dev/null 2>&1; then
  if [[ -e .venv ]]; then
    echo "error: ${root}/.venv exists but cannot import tensorflow;" \
         "rebuild it with tools/setup.sh (or remove it)" >&2
    exit 1
  fi
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "error: python3 with venv (Debian: python3-venv) is needed to" \
         "create .venv" >&2
    exit 1
  fi
  echo "== creating .venv from requirements.txt and requirements-nodeps.txt"
  python3 -m venv .venv
  .venv/bin/python3 -m pip install -q -r requirements.txt
  .venv/bin/python3 -m pip install -q --no-deps -r requirements-nodeps.txt
  # The stamp tools/setup.sh uses, so that it does not rebuild this venv.
  cat requirements.txt requirements-nodeps.txt | sha256sum | cut -d' ' -f1 \
    > .venv/requirements.sha256
fi
export TF_CPP_MIN_LOG_LEVEL=2
PYTHONPATH="${root}" exec "${root}/.venv/bin/python3" \
  "${root}/tools/show_layout.py" "$@"
