#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (root) for this repository; idempotent:
#   1. Debian's bazel-bootstrap (Bazel 4.2.3), if `bazel` is missing, and
#      slurm-client (Slurm 22.05), if `scontrol` is missing: the hostlist
#      test compares the grammar with `scontrol show hostnames`;
#   2. .venv from requirements.txt (+ requirements-nodeps.txt, without their
#      dependencies), if missing or if either changed;
#   3. this checkout installed into .venv in development mode (`pip install
#      -e`): the package's .pth switches the overlay on in every .venv Python
#      (pytest, Bazel's tests, tools), serving this checkout's tensorflow/.
# Usable from any clone location and any cwd.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

# 1. System packages: Bazel, scontrol, and venv support for the system python3.
apt_packages=()
command -v bazel >/dev/null 2>&1 || apt_packages+=(bazel-bootstrap)
command -v scontrol >/dev/null 2>&1 || apt_packages+=(slurm-client)
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

# 2. The venv, rebuilt whenever the pins change (stamp: the pins' hash).
#    requirements-nodeps.txt holds packages whose declared dependencies must
#    not be installed (see its comment).
stamp=.venv/requirements.sha256
want="$(cat requirements.txt requirements-nodeps.txt | sha256sum | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python3 || "$(cat "${stamp}" 2>/dev/null)" != "${want}" ]]; then
  echo "== creating .venv from requirements.txt and requirements-nodeps.txt"
  rm -f "${stamp}"
  python3 -m venv --clear .venv
  timeout 1800 .venv/bin/python3 -m pip install -q -r requirements.txt
  timeout 900 .venv/bin/python3 -m pip install -q --no-deps \
    -r requirements-nodeps.txt
  echo "${want}" > "${stamp}"
fi

# 3. The editable install, redone if it serves another checkout (a copied
#    .venv), is missing, or is broken (its package not importable).
#    pip_package/tf_slurm_resolver.pth is the one switch.
site="$(.venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if [[ ! -f "${site}/tf_slurm_resolver.pth" ||
      "$(.venv/bin/python3 -c 'import tf_slurm_resolver; print(1)' \
           2>/dev/null)" != 1 ||
      "$(cat "${site}"/__editable__.tf_slurm_resolver-*.pth 2>/dev/null)" \
        != "${root}/pip_package" ]]; then
  echo "== pip install -e . (the overlay's .pth, serving ${root})"
  timeout 300 .venv/bin/python3 -m pip install -q --no-deps \
    --no-build-isolation --no-index -e .
fi
