# shellcheck shell=bash disable=SC2034
# Shared by up.sh and down.sh (sourced, never run). Bash only.
#
# Layout of the lab folder ($LAB_DIR, default /tmp/tfslurm-lab):
#   .tfslurm-lab   marker: this folder belongs to the lab (nothing else is wiped)
#   .lock          flock(1) lock held by up.sh / down.sh
#   env.sh         source it: SLURM_CONF + the client wrappers first on PATH
#   bin/           srun, sbatch, ... wrappers and lab-on (run a command on a node)
#   etc/           slurm.conf, gres.conf, hosts (the lab's /etc/hosts)
#   dev/           fake GPU device files nvidiaN (character devices)
#   munge/         munge key, socket, seed
#   state/ spool/  slurmctld state, per-node slurmd spool (spool/<node>)
#   tmp/           per-node TmpFS (tmp/<node>; srun --mpi=pmix keeps its files there)
#   log/           daemon logs (*.log) and their stdout/stderr (*.out)
#   run/           pids   "PID STARTTIME NAME" of every process up.sh started
#                  netns  the network namespaces up.sh created, one per line
#                  route  the guard route up.sh added in the calling namespace
#                  settings  the settings the lab was started with

LAB_DIR=${SLURM_LAB_DIR:-/tmp/tfslurm-lab}
LAB_DIR=${LAB_DIR%/}
LAB_CONF=$LAB_DIR/etc/slurm.conf
LAB_RUN=$LAB_DIR/run
LAB_PIDS=$LAB_RUN/pids
LAB_NSFILE=$LAB_RUN/netns
LAB_ROUTEFILE=$LAB_RUN/route
LAB_MARK=$LAB_DIR/.tfslurm-lab
LAB_SOCK=$LAB_DIR/munge/munge.socket.2
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf 'slurm_lab: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# apt-get, retried while another apt/dpkg holds the lock (at most ~5 min of waiting)
apt_retry() {
    local deadline=$(( $(date +%s) + 300 )) out rc
    while :; do
        rc=0
        out=$(DEBIAN_FRONTEND=noninteractive timeout 900 apt-get -q -o DPkg::Lock::Timeout=30 "$@" 2>&1) || rc=$?
        printf '%s\n' "$out" >> "${APT_LOG:-/dev/null}"
        [ $rc = 0 ] && return 0
        if grep -qiE 'could not get lock|unable to (acquire|lock)|is (held|locked) by|lock-frontend' <<< "$out" &&
            [ "$(date +%s)" -lt "$deadline" ]; then
            log "apt/dpkg is busy (another apt-get?), waiting ..."; sleep 10; continue
        fi
        printf '%s\n' "$out" | tail -n 20 >&2
        return 1
    done
}

lab_check_dir() {
    [[ $LAB_DIR =~ ^/[A-Za-z0-9._/-]+$ ]] ||
        die "SLURM_LAB_DIR must be an absolute path of [A-Za-z0-9._/-] characters (got '$LAB_DIR')"
    case $LAB_DIR in /|/bin|/boot|/dev|/etc|/home|/lib*|/proc|/root|/run|/sbin|/sys|/tmp|/usr|/usr/*|/var)
        die "SLURM_LAB_DIR=$LAB_DIR is not a sensible lab folder";;
    esac
}

# Exclusive lock on the lab folder (fd 9) so up.sh and down.sh never overlap.
lab_lock() {
    mkdir -p "$LAB_DIR"
    exec 9>>"$LAB_DIR/.lock"
    flock -w 120 9 || die "another up.sh/down.sh holds $LAB_DIR/.lock for more than 120 s"
}

# Start time (clock ticks since boot) of a process: with the PID it identifies
# the process, so a recycled PID is never signalled. Nothing for a zombie (the
# daemons' parent is init once up.sh is gone, and it may reap them late).
pid_start() {
    local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; s=${s##*) }
    # shellcheck disable=SC2086
    set -- $s; [ "$1" = Z ] || echo "${20}"
}
pid_alive() { [ -n "$1" ] && [ -n "$2" ] && [ "$(pid_start "$1")" = "$2" ]; }

# Any recorded process still running?
lab_any_alive() {
    local pid st name
    [ -s "$LAB_PIDS" ] || return 1
    while read -r pid st name; do pid_alive "$pid" "$st" && return 0; done < "$LAB_PIDS"
    return 1
}

# lab_alive NAME: is the recorded process NAME running?
lab_alive() {
    local pid st name
    [ -s "$LAB_PIDS" ] || return 1
    while read -r pid st name; do [ "$name" = "$1" ] && pid_alive "$pid" "$st" && return 0; done < "$LAB_PIDS"
    return 1
}

# lab_signal SIG GLOB: signal the recorded processes whose name matches GLOB
lab_signal() {
    local pid st name
    [ -s "$LAB_PIDS" ] || return 0
    while read -r pid st name; do
        # shellcheck disable=SC2053
        [[ $name == $2 ]] || continue
        pid_alive "$pid" "$st" && kill "-$1" "$pid" 2>/dev/null
    done < "$LAB_PIDS"
    return 0
}

# lab_wait_gone GLOB TENTHS: wait until no recorded process matching GLOB runs
lab_wait_gone() {
    local i pid st name busy
    for ((i = 0; i < $2; i++)); do
        busy=0
        while read -r pid st name; do
            # shellcheck disable=SC2053
            [[ $name == $1 ]] && pid_alive "$pid" "$st" && busy=1
        done < "$LAB_PIDS"
        [ $busy = 0 ] && return 0
        sleep 0.1
    done
    return 1
}

# lab_wait_reaped TENTHS: give init a moment to reap the stopped daemons, so that
# no zombie "slurmd" is left in ps/pgrep output (cosmetic, never fails)
lab_wait_reaped() {
    local i pid st name z s
    for ((i = 0; i < $1; i++)); do
        z=0
        while read -r pid st name; do
            s=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
            s=${s##*) }; [ "${s%% *}" = Z ] && z=1
        done < "$LAB_PIDS"
        [ $z = 0 ] && return 0
        sleep 0.1
    done
    return 0
}

# PIDs of every process inside the network namespaces this lab created
# (slurmstepd, job tasks, clients run through the wrappers ...).
lab_ns_pids() {
    local ns
    [ -s "$LAB_NSFILE" ] || return 0
    while read -r ns; do
        [ -e "/run/netns/$ns" ] && ip netns pids "$ns" 2>/dev/null
    done < "$LAB_NSFILE"
    return 0
}

# Stop everything a previous up.sh recorded in $LAB_DIR: jobs, daemons, leftover
# processes in the lab namespaces, the namespaces, the guard route (last).
# Returns 1 if something could not be removed (the guard route is then kept).
lab_stop() {
    local rc=0 jobs ns left i p z route
    # 1. cancel the lab's jobs while slurmctld still answers
    if lab_alive slurmctld && lab_alive munged && [ -x "$LAB_DIR/bin/squeue" ] &&
        timeout 5 "$LAB_DIR/bin/scontrol" ping 2>/dev/null | grep -q 'is UP'; then
        jobs=$(timeout 10 "$LAB_DIR/bin/squeue" -h -o %A 2>/dev/null | sort -u | tr '\n' ' ') || true
        if [ -n "${jobs// /}" ]; then
            log "cancelling lab jobs: $jobs"
            # shellcheck disable=SC2086
            timeout 10 "$LAB_DIR/bin/scancel" $jobs 2>/dev/null || true
            for ((i = 0; i < 60; i++)); do
                [ -z "$(timeout 5 "$LAB_DIR/bin/squeue" -h -o %A 2>/dev/null)" ] && break
                sleep 0.25
            done
        fi
    fi
    # 2. the daemons up.sh started: nodes, then controller, then munged
    if [ -s "$LAB_PIDS" ]; then
        lab_signal TERM 'slurmd-*'; lab_wait_gone 'slurmd-*' 50 || lab_signal KILL 'slurmd-*'
        lab_signal TERM slurmctld;  lab_wait_gone slurmctld 100 || lab_signal KILL slurmctld
        lab_signal TERM '*'; lab_wait_gone '*' 50 || lab_signal KILL '*'
        if lab_wait_gone '*' 30; then
            lab_wait_reaped 30
            rm -f "$LAB_PIDS"
        else
            log "still running: $(cat "$LAB_PIDS")"; rc=1
        fi
    fi
    # 3. anything left in the lab's namespaces (slurmstepd outlives slurmd, tasks)
    left=$(lab_ns_pids | tr '\n' ' ')
    if [ -n "${left// /}" ]; then
        log "stopping leftover processes in the lab namespaces: $left"
        for p in $left; do kill -TERM "$p" 2>/dev/null; done
        # short grace: slurmstepd ignores TERM, and the jobs were cancelled if possible
        for ((i = 0; i < 10; i++)); do [ -z "$(lab_ns_pids)" ] && break; sleep 0.1; done
        for p in $(lab_ns_pids); do kill -KILL "$p" 2>/dev/null; done
        for ((i = 0; i < 30; i++)); do [ -z "$(lab_ns_pids)" ] && break; sleep 0.1; done
        [ -z "$(lab_ns_pids)" ] || { log "could not stop: $(lab_ns_pids | tr '\n' ' ')"; rc=1; }
        for ((i = 0; i < 30; i++)); do   # let init reap them (cosmetic, as above)
            z=0; for p in $left; do [ -e "/proc/$p" ] && z=1; done
            [ $z = 0 ] && break; sleep 0.1
        done
    fi
    # 4. the namespaces up.sh created (only those, by the names it recorded)
    if [ -s "$LAB_NSFILE" ] && [ $rc = 0 ]; then
        while read -r ns; do
            [ -e "/run/netns/$ns" ] || continue
            ip netns del "$ns" 2>/dev/null || { log "could not delete netns $ns"; rc=1; }
        done < "$LAB_NSFILE"
        [ $rc = 0 ] && rm -f "$LAB_NSFILE"
    fi
    # 5. the guard route, only once no lab namespace is left
    if [ -s "$LAB_ROUTEFILE" ]; then
        route=$(cat "$LAB_ROUTEFILE")
        if [ $rc != 0 ]; then
            log "keeping the guard route 'unreachable $route' while lab namespaces remain"
        elif [ -n "$(ip -4 route show type unreachable exact "$route" 2>/dev/null)" ]; then
            ip route del unreachable "$route" 2>/dev/null || { log "could not delete route unreachable $route"; rc=1; }
        fi
        [ $rc = 0 ] && rm -f "$LAB_ROUTEFILE"
    fi
    rm -f "$LAB_SOCK" "$LAB_SOCK.lock"
    return $rc
}
