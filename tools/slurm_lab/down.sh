#!/usr/bin/env bash
# Stop the Slurm lab that up.sh started in $SLURM_LAB_DIR [/tmp/tfslurm-lab]:
#   1. cancels the lab's jobs (scancel through the lab's wrappers / SLURM_CONF),
#   2. stops exactly the daemons recorded in run/pids (PID + start time checked),
#   3. stops what is left inside the lab's namespaces (slurmstepd, tasks),
#   4. deletes the namespaces recorded in run/netns,
#   5. removes the guard route recorded in run/route (only when 1-4 succeeded).
# Safe to run when nothing is up. Logs stay; SLURM_LAB_PURGE=1 also deletes the
# lab folder. Exit status 1 if something could not be stopped or removed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

T0=$(date +%s%N)
[ "$(id -u)" = 0 ] || die "run as root"
lab_check_dir
if [ ! -d "$LAB_DIR" ]; then log "nothing to do: no $LAB_DIR"; exit 0; fi
[ -e "$LAB_MARK" ] || die "$LAB_DIR is not a lab folder (no .tfslurm-lab)"
lab_lock

rc=0
lab_stop || rc=1
if [ $rc = 0 ]; then
    log "down in $(( ($(date +%s%N) - T0) / 1000000 ))ms ($LAB_DIR)"
    if [ "${SLURM_LAB_PURGE:-0}" = 1 ]; then
        rm -rf "${LAB_DIR:?}" && log "removed $LAB_DIR"
    fi
else
    log "ERROR: some parts of the lab in $LAB_DIR are still there (see above)"
fi
exit $rc
