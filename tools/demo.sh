#!/usr/bin/env bash
# Shows the resolver at work without Slurm and without root: replays recorded
# real Slurm steps (tests/fixtures/slurm-env, tests/fixtures/launchers) task
# by task, and prints beside each task what this resolver builds (its task,
# address and GPUs) and what stock TensorFlow's resolver builds for the same
# environment, or the exception it raises (tools/demo_replay.py). Extra
# arguments are fixture folders, e.g. tests/fixtures/slurm-env/N3-n7, or
# --all for every folder of tests/fixtures/slurm-env.
#
# Needs only the repository's .venv (TensorFlow from requirements.txt): an
# existing one is used as it is; a missing one is created as tools/setup.sh
# does, from requirements.txt and requirements-nodeps.txt (which needs
# python3 with venv and access to PyPI), showing pip's progress. The
# checkout is then installed into it in development mode (`pip install -e`),
# which switches the package on there. Installs no system package.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
python=.venv/bin/python3

# Runs "$@" (a pip command), printing pip's progress lines (indented,
# shortened) and, every 20 s while it runs, the time so far.
with_progress() {
  local start ticker status=0
  start=$(date +%s)
  ( while sleep 20; do
      echo "   ... still running, $(( $(date +%s) - start )) s so far"
    done ) &
  ticker=$!
  "$@" 2>&1 | awk '/^(Collecting|Processing|Downloading|Installing collected|Successfully installed|ERROR|error)/ {
      line = "   " $0
      if (length(line) > 100) line = substr(line, 1, 97) "..."
      print line; fflush() }' || status=$?
  kill "${ticker}" 2>/dev/null || true
  wait "${ticker}" 2>/dev/null || true
  if (( status == 0 )); then
    echo "   done in $(( $(date +%s) - start )) s"
  else
    echo "   failed (exit status ${status}) after $(( $(date +%s) - start )) s"
  fi
  return "${status}"
}

if ! "${python}" -c 'import tensorflow' >/dev/null 2>&1; then
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
  echo "== creating .venv with $(python3 --version)"
  python3 -m venv .venv
  echo "== pip install -r requirements.txt (TensorFlow and the test tools," \
       "pinned; the longest step on a fresh clone)"
  with_progress "${python}" -m pip install --progress-bar off \
    -r requirements.txt
  echo "== pip install --no-deps -r requirements-nodeps.txt (tf-keras)"
  with_progress "${python}" -m pip install --progress-bar off --no-deps \
    -r requirements-nodeps.txt
  # The stamp tools/setup.sh uses, so that it does not rebuild this venv.
  cat requirements.txt requirements-nodeps.txt | sha256sum | cut -d' ' -f1 \
    > .venv/requirements.sha256
fi

# The package's .pth switches it on; tools/setup.sh installs it the same way.
# Installed again if .venv lacks it or serves another checkout (-I: without
# the current folder on the import path).
site="$("${python}" -c \
  'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
served="$("${python}" -I -c 'import importlib.util as u
print(u.find_spec("tf_slurm").origin)' 2>/dev/null || true)"
if [[ ! -f "${site}/tf_slurm_resolver.pth" ||
      "${served}" != "${root}/tf_slurm/__init__.py" ]]; then
  echo "== pip install -e . into .venv (serves this checkout's resolver)"
  with_progress "${python}" -m pip install --no-deps --no-build-isolation \
    --no-index -e .
fi

echo "== replaying recorded Slurm steps"
export TF_CPP_MIN_LOG_LEVEL=2
# TensorFlow's start-up lines (before its logging starts) left out.
"${python}" tools/demo_replay.py "$@" 2>&1 |
  sed -e '/oneDNN custom operations are on/d' \
      -e '/All log messages before absl::InitializeLog/d'
