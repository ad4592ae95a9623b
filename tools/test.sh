#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine (root, see tools/setup.sh),
# then runs `bazel test //...` (offline) and the same tests under pytest, with
# the Slurm lab and scontrol of Slurm 22.05 (Debian 12), then the tests that
# use Slurm (tests/integration, tests/hostlist_scontrol_test.py) once more on
# each other Slurm series of the lab: 24.11, all but two training tests on
# 20.11, and those with the job-lifetime tests on 26.05 (SLURM_LAB_SLURM:
# Debian 11's, 13's and forky's Slurm, from the roots of
# tools/slurm_lab/root.sh, built in the background while Bazel runs; see
# tools/slurm_lab/README.md).
# Usable from any clone location and any cwd. Exits non-zero if any runner
# fails; the output ends with pytest's summary line. Extra pytest arguments go
# in PYTEST_ADDOPTS (read by pytest itself), e.g. PYTEST_ADDOPTS='-k Overlay'.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

bash tools/setup.sh

# The Debian roots of the other Slurm series: built once (a few minutes each)
# and cached; here in the background, one after the other, while Bazel and
# the 22.05 tests run. Each run below calls root.sh again, which waits for
# that root's build (its lock) and says why if it failed.
ROOT_SERIES=(20.11 24.11 26.05)
if [[ "$(id -u)" == 0 ]]; then
  (for series in "${ROOT_SERIES[@]}"; do
     SLURM_LAB_SLURM="${series}" timeout 1800 bash tools/slurm_lab/root.sh || true
   done) > /tmp/tfslurm-roots.log 2>&1 < /dev/null &
fi

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

# The full set of tests that use Slurm on 22.05 (above) and 24.11; on 20.11
# and 26.05 all but the ParameterServerStrategy and Keras training tests
# (layouts, versions, CPU binding, containers, MultiWorkerMirroredStrategy
# training, MPI launchers, node hosts, withheld GPUs, the resolver's
# options, the grammar), and on 26.05, the newest, the job-lifetime tests
# too.
MOST_TESTS=(tests/integration/slurm_layouts_test.py
            tests/integration/lab_versions_test.py
            tests/integration/cpu_binding_test.py
            tests/integration/container_env_test.py
            tests/integration/mwms_training_test.py
            tests/integration/launcher_placement_test.py
            tests/integration/node_host_test.py
            tests/integration/withheld_gpus_test.py
            tests/integration/resolver_options_test.py)
for series in "${ROOT_SERIES[@]}"; do
  case "${series}" in
    24.11) tests=(tests/integration) ;;
    26.05) tests=("${MOST_TESTS[@]}" tests/integration/termination_test.py) ;;
    *) tests=("${MOST_TESTS[@]}") ;;
  esac
  echo "== pytest, the tests that use Slurm, on Slurm ${series}: ${tests[*]}"
  if [[ "$(id -u)" == 0 ]]; then
    # (up.sh and the hostlist test would build the root too; here its log is
    # plain.)
    SLURM_LAB_SLURM="${series}" timeout 1800 bash tools/slurm_lab/root.sh \
      || pytest_status=$?
  fi
  SLURM_LAB_SLURM="${series}" timeout 1800 .venv/bin/python3 -m pytest \
    "${tests[@]}" tests/hostlist_scontrol_test.py || pytest_status=$?
done

if (( bazel_status != 0 )); then
  echo "FAILED: bazel test //... exited ${bazel_status}" >&2
  exit "${bazel_status}"
fi
exit "${pytest_status}"
