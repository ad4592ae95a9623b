#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine (root, see tools/setup.sh),
# then runs `bazel test //...` (offline) and the same tests under pytest, with
# the Slurm lab and scontrol of Slurm 22.05 (Debian 12), then the tests that
# use Slurm (tests/integration, tests/hostlist_scontrol_test.py) once more on
# Slurm 24.11 (SLURM_LAB_SLURM=24.11: Debian 13's Slurm, see
# tools/slurm_lab/README.md).
# Usable from any clone location and any cwd. Exits non-zero if either runner
# fails; the output ends with pytest's summary line. Extra pytest arguments go
# in PYTEST_ADDOPTS (read by pytest itself), e.g. PYTEST_ADDOPTS='-k Overlay'.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

bash tools/setup.sh

# Both runners over the same tests; pytest runs even if Bazel failed.
bazel_status=0
echo "== bazel test //..."
timeout 1800 bazel test //... || bazel_status=$?
if [[ "${CI:-}" == "true" ]]; then
  # Leave no Bazel server behind on CI.
  timeout 120 bazel shutdown || true
fi

pytest_status=0
echo "== pytest (Slurm 22.05)"
SLURM_LAB_SLURM=22.05 timeout 1800 .venv/bin/python3 -m pytest tensorflow tests \
  || pytest_status=$?

echo "== pytest, the tests that use Slurm, on Slurm 24.11"
if [[ "$(id -u)" == 0 ]]; then
  # The Debian 13 root of Slurm 24.11: built once (a few minutes), then cached.
  # (up.sh and the hostlist test would build it too; here its log is plain.)
  timeout 1800 bash tools/slurm_lab/root.sh || pytest_status=$?
fi
SLURM_LAB_SLURM=24.11 timeout 1800 .venv/bin/python3 -m pytest \
  tests/integration tests/hostlist_scontrol_test.py || pytest_status=$?

if (( bazel_status != 0 )); then
  echo "FAILED: bazel test //... exited ${bazel_status}" >&2
  exit "${bazel_status}"
fi
exit "${pytest_status}"
