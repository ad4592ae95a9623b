#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (root) for this repository; idempotent:
#   1. Debian's bazel-bootstrap (Bazel 4.2.3), if `bazel` is missing, and
#      slurm-client (Slurm 22.05), if `scontrol` is missing: the hostlist
#      test compares the grammar with `scontrol show hostnames`;
#   2. .venv from requirements.txt (+ requirements-nodeps.txt, without their
#      dependencies), if missing or if either changed; and for each release
#      X.Y given as an argument (`tools/setup.sh 2.15 2.22`; tools/test.sh
#      gives the TensorFlow releases it tests besides .venv's), .venvs/tfX.Y
#      from requirements-tfX.Y.txt alike;
#   3. this checkout installed into each of them in development mode (`pip
#      install -e`): the package's .pth switches the overlay on in every
#      Python of the venv (pytest, Bazel's tests, tools), serving this
#      checkout's tensorflow/.
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

# 2. venv_from VENV PINS [NODEPS]: VENV from the pins file PINS (and NODEPS,
#    installed without their declared dependencies: see
#    requirements-nodeps.txt), rebuilt whenever they change (stamp: their
#    hash).
venv_from() {
  local venv="$1" stamp="$1/requirements.sha256" want
  want="$(cat "${@:2}" | sha256sum | cut -d' ' -f1)"
  if [[ -x "${venv}/bin/python3" &&
        "$(cat "${stamp}" 2>/dev/null)" == "${want}" ]]; then
    return
  fi
  echo "== creating ${venv} from ${*:2}"
  rm -f "${stamp}"
  python3 -m venv --clear "${venv}"
  timeout 1800 "${venv}/bin/python3" -m pip install -q -r "$2"
  if (( $# > 2 )); then
    timeout 900 "${venv}/bin/python3" -m pip install -q --no-deps -r "$3"
  fi
  echo "${want}" > "${stamp}"
}

# 3. editable_install VENV: redone if it serves another checkout (a copied
#    venv), is missing, or is broken (its package not importable).
#    pip_package/tf_slurm_resolver.pth is the one switch.
editable_install() {
  local python="$1/bin/python3" site
  site="$("${python}" -c \
    'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [[ ! -f "${site}/tf_slurm_resolver.pth" ||
        "$("${python}" -c 'import tf_slurm_resolver; print(1)' \
             2>/dev/null)" != 1 ||
        "$(cat "${site}"/__editable__.tf_slurm_resolver-*.pth 2>/dev/null)" \
          != "${root}/pip_package" ]]; then
    echo "== pip install -e . into $1 (the overlay's .pth, serving ${root})"
    timeout 300 "${python}" -m pip install -q --no-deps \
      --no-build-isolation --no-index -e .
  fi
}

venv_from .venv requirements.txt requirements-nodeps.txt
editable_install .venv
for release in "$@"; do
  venv_from ".venvs/tf${release}" "requirements-tf${release}.txt"
  editable_install ".venvs/tf${release}"
done
