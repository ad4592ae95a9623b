#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine (root, see tools/setup.sh),
# then runs `bazel test //...` (offline) and the same tests under pytest.
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
echo "== pytest"
timeout 1800 .venv/bin/python3 -m pytest tensorflow tests || pytest_status=$?

if (( bazel_status != 0 )); then
  echo "FAILED: bazel test //... exited ${bazel_status}" >&2
  exit "${bazel_status}"
fi
exit "${pytest_status}"
