#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine (root) and runs all tests:
#   1. Debian's bazel-bootstrap (Bazel 4.2.3), if `bazel` is missing;
#   2. .venv from requirements.txt, if missing or if requirements.txt changed;
#   3. `bazel test //...` (offline), then the same tests under pytest.
# Usable from any clone location and any cwd. Exits non-zero if either runner
# fails; the output ends with pytest's summary line. Extra pytest arguments go
# in PYTEST_ADDOPTS (read by pytest itself), e.g. PYTEST_ADDOPTS='-k Overlay'.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

# 1. System packages: Bazel, and venv support for the system python3.
apt_packages=()
command -v bazel >/dev/null 2>&1 || apt_packages+=(bazel-bootstrap)
if ! command -v python3 >/dev/null 2>&1 \
    || ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt_packages+=(python3-venv)
fi
if (( ${#apt_packages[@]} )); then
  echo "== apt-get install ${apt_packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update -q
  timeout 900 apt-get install -y -q --no-install-recommends "${apt_packages[@]}"
fi

# 2. The venv, rebuilt whenever the pins change (stamp: requirements' hash).
stamp=.venv/requirements.sha256
want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python3 || "$(cat "${stamp}" 2>/dev/null)" != "${want}" ]]; then
  echo "== creating .venv from requirements.txt"
  rm -f "${stamp}"
  python3 -m venv --clear .venv
  timeout 1800 .venv/bin/python3 -m pip install -q -r requirements.txt
  echo "${want}" > "${stamp}"
fi

# 3. Both runners over the same tests; pytest runs even if Bazel failed.
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
