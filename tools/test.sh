#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine (root, see tools/setup.sh),
# then runs every test of the repository once, each where it can fail (the
# docs/development.md, "Tests: what runs where", says why):
#   1. `bazel test //...` (offline): every test that needs neither root nor
#      Slurm: the carried unit tests, the recorded real steps, the fuzz
#      suite, the API goldens, lint, the overlay and the TensorFlow-tree
#      patch check;
#   2. pytest over each other TensorFlow release CI tests (TF_RELEASES), in
#      its venv .venvs/tfX.Y: the unit tests, the recorded steps, the overlay
#      and pip's install; on the oldest and the newest also the lab's
#      MultiWorkerMirroredStrategy training (on Slurm 22.05);
#   3. pytest, on the lab of Slurm 22.05 (Debian 12's, this machine's): the
#      tests that need root, a real Slurm or pip (PYTEST_ONLY);
#   4. pytest, on the lab of each other Slurm series (20.11, 24.11, 26.05,
#      from the Debian roots of tools/slurm_lab/root.sh, built in the
#      background while Bazel runs): the tests whose outcome can differ
#      between Slurm versions (tests_on).
# Every *_test.py file must belong to exactly one of 1 and 3: a test
# file that neither runs fails the run. The time of each phase is printed at
# the end.
# Usable from any clone location and any cwd. Exits non-zero if any runner
# fails. Extra pytest arguments go in PYTEST_ADDOPTS (read by pytest itself),
# e.g. PYTEST_ADDOPTS='-k Overlay'.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

# JUnit XML reports of the pytest runs, summed up at the end.
reports="$(mktemp -d /tmp/tfslurm-test-reports.XXXXXX)"
PHASES=()
phase_started=0
# phase_end NAME STATUS: records how long the phase that began at
# phase_started took.
phase_end() {
  PHASES+=("$(printf '%6d s  %-58s %s' $((SECONDS - phase_started)) "$1" \
    "$([[ $2 == 0 ]] && echo ok || echo "FAILED ($2)")")")
  phase_started=${SECONDS}
}

setup_status=0
bash tools/setup.sh || setup_status=$?
phase_end 'set-up (tools/setup.sh)' "${setup_status}"
(( setup_status == 0 )) || exit "${setup_status}"

# The Debian roots of the other Slurm series: built once (a few minutes each)
# and cached; here in the background, one after the other, while Bazel and
# the 22.05 tests run. Each run below calls root.sh again, which waits for
# that root's build (its lock) and says why if it failed.
ROOT_SERIES=(26.05 24.11 20.11)
if [[ "$(id -u)" == 0 ]]; then
  (for series in "${ROOT_SERIES[@]}"; do
     SLURM_LAB_SLURM="${series}" timeout 1800 bash tools/slurm_lab/root.sh \
       || true
   done) > /tmp/tfslurm-roots.log 2>&1 < /dev/null &
fi

# The tests that only pytest runs: they need root and network namespaces
# (the lab), a real scontrol, or pip. Every other test is a Bazel target.
PYTEST_ONLY=(tests/integration tests/hostlist_scontrol_test.py
             tests/wheel_install_test.py)

bazel_status=0
echo "== bazel test //..."
timeout 1800 bazel test //... || bazel_status=$?
# Every test file runs under one runner: a py_test's source, or in
# PYTEST_ONLY.
if (( bazel_status == 0 )); then
  bazel_tests="$(timeout 300 bazel query --output=label \
    'labels(srcs, kind(py_test, //...))' | sed -e 's|^//||' -e 's|:|/|' \
    -e 's|^/||')" || bazel_status=$?
  while IFS= read -r file; do
    case "${file}" in tests/integration/*) continue ;; esac
    if ! grep -qxF "${file}" <<< "${bazel_tests}" &&
       [[ " ${PYTEST_ONLY[*]} " != *" ${file} "* ]]; then
      echo "FAILED: ${file} is neither a Bazel py_test nor in PYTEST_ONLY" >&2
      bazel_status=1
    fi
  done < <(git ls-files '*_test.py')
fi
if [[ "${CI:-}" == "true" ]]; then
  # Leave no Bazel server behind on CI.
  timeout 120 bazel shutdown || true
fi
phase_end 'bazel test //... (all tests without root or Slurm)' \
  "${bazel_status}"

pytest_status=0
# The TensorFlow releases tested besides .venv's (requirements.txt), each in
# .venvs/tfX.Y from requirements-tfX.Y.txt (tools/setup.sh X.Y): the oldest
# and the newest release the overlay serves (overlay.TESTED_RELEASES) and
# every second one between them; on the oldest and the newest also the lab's
# training.
TF_RELEASES=(2.15 2.17 2.19 2.22)
TF_RELEASE_TESTS=(tensorflow/python/distribute tf_slurm tests/fixture_layouts_test.py
                  tests/launcher_fixtures_test.py tests/overlay_test.py
                  tests/wheel_install_test.py)
for release in "${TF_RELEASES[@]}"; do
  tests=("${TF_RELEASE_TESTS[@]}")
  if [[ ${release} == "${TF_RELEASES[0]}" ||
        ${release} == "${TF_RELEASES[-1]}" ]]; then
    tests+=(tests/integration/mwms_training_test.py)
  fi
  status=0
  echo "== pytest over TensorFlow ${release}: ${tests[*]}"
  timeout 900 bash tools/setup.sh "${release}" || status=$?
  if (( status == 0 )); then
    SLURM_LAB_SLURM=22.05 timeout 900 ".venvs/tf${release}/bin/python3" -m \
      pytest --junitxml="${reports}/tf-${release}.xml" "${tests[@]}" \
      || status=$?
  fi
  phase_end "pytest over TensorFlow ${release} (its own venv)" "${status}"
  (( status == 0 )) || pytest_status=${status}
done

status=0
echo "== pytest on Slurm 22.05: ${PYTEST_ONLY[*]}"
SLURM_LAB_SLURM=22.05 timeout 2400 .venv/bin/python3 -m pytest \
  --junitxml="${reports}/slurm-22.05.xml" "${PYTEST_ONLY[@]}" || status=$?
phase_end "pytest on Slurm 22.05 (lab, scontrol, pip)" "${status}"
(( status == 0 )) || pytest_status=${status}

# tests_on SERIES: the tests that run on that Slurm series besides 22.05:
# those whose outcome can differ between Slurm versions (the README's test
# plan says which difference each one covers). On every series: the
# variables and versions each lab really runs, and the grammar against its
# scontrol.
tests_on() {
  local it=tests/integration
  echo "${it}/lab_versions_test.py tests/hostlist_scontrol_test.py"
  case "$1" in
    # Tasks spread evenly, GPUs numbered by device file, MPI launchers over
    # that allocation, --gres=none keeps the job's GPUs, GPUs held but not
    # bound without --gpu-bind=none, heterogeneous allocations.
    20.11) echo "${it}/slurm_layouts_test.py ${it}/launcher_placement_test.py" \
             "${it}/withheld_gpus_test.py ${it}/gpu_sharing_test.py" \
             "${it}/het_component_steps_test.py" ;;
    # Topology files that never reorder a step; SwitchAsNodeRank.
    24.11) echo "${it}/topology_order_test.py" ;;
    # The newest: topology order, gres/gpu binding variables, the batch
    # script's step id, CPU binding as 20.11 and 24.11, the job's end,
    # heterogeneous allocations, GPUs Slurm shares, and one training run.
    26.05) echo "${it}/slurm_layouts_test.py ${it}/topology_order_test.py" \
             "${it}/withheld_gpus_test.py ${it}/gpu_sharing_test.py" \
             "${it}/het_component_steps_test.py ${it}/cpu_binding_test.py" \
             "${it}/termination_test.py ${it}/mwms_training_test.py" ;;
  esac
}

for series in "${ROOT_SERIES[@]}"; do
  read -r -a tests <<< "$(tests_on "${series}" | tr '\n' ' ')"
  status=0
  echo "== pytest on Slurm ${series}: ${tests[*]}"
  if [[ "$(id -u)" == 0 ]]; then
    # (up.sh and the hostlist test would build the root too; here its log is
    # plain.)
    SLURM_LAB_SLURM="${series}" timeout 1800 bash tools/slurm_lab/root.sh \
      || status=$?
  fi
  if (( status == 0 )); then
    SLURM_LAB_SLURM="${series}" timeout 1800 .venv/bin/python3 -m pytest \
      --junitxml="${reports}/slurm-${series}.xml" "${tests[@]}" \
      || status=$?
  fi
  phase_end "pytest on Slurm ${series} (what can differ there)" "${status}"
  (( status == 0 )) || pytest_status=${status}
done

echo "== time of each phase (total $((SECONDS / 60)) min $((SECONDS % 60)) s)"
printf '%s\n' "${PHASES[@]}"
# The test cases of both runners (Bazel's from the targets' test.xml).
python3 - "${reports}" bazel-testlogs <<'EOF' || true
import pathlib, sys, xml.etree.ElementTree as ET
counts = dict(passed=0, failed=0, skipped=0)
for folder in sys.argv[1:]:
  for report in sorted(pathlib.Path(folder).rglob('*.xml')):
    for case in ET.parse(report).iter('testcase'):
      kinds = {child.tag for child in case}
      skipped = 'skipped' in kinds or case.get('result') == 'suppressed'
      counts['failed' if kinds & {'failure', 'error'} else
             'skipped' if skipped else 'passed'] += 1
print('all runners: %(passed)d passed, %(failed)d failed, %(skipped)d skipped'
      % counts)
EOF
rm -rf "${reports}"
if (( bazel_status != 0 )); then
  echo "FAILED: bazel test //... exited ${bazel_status}" >&2
  exit "${bazel_status}"
fi
exit "${pytest_status}"
