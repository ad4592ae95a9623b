#!/usr/bin/env bash
# Start a real multi-node Slurm cluster on this machine, for integration tests.
#
# Every emulated host runs in a network namespace of its own on a private /24
# that exists only inside those namespaces (controller "ctl" = .1, nodes .11,
# .12, ...), with its own hostname (UTS namespace) and the lab's /etc/hosts
# (bind-mounted in a private mount namespace), so a task on n10 reaches
# n9:8888 while n10 listens on 8888 itself. The namespaces are joined by a
# bridge inside one more namespace (<prefix>sw); nothing is attached to the
# calling namespace, where a guard route makes the lab /24 unreachable.
#
#   sudo tools/slurm_lab/up.sh && . /tmp/tfslurm-lab/env.sh && srun -N3 -n7 hostname
#   tools/slurm_lab/down.sh
#
# Settings (environment variables; down.sh needs only SLURM_LAB_DIR):
#   SLURM_LAB_DIR    the lab folder, holds everything            [/tmp/tfslurm-lab]
#   SLURM_LAB_NODES  node groups "PARTITION:NODE,NODE,...:CPUS:GPUS", space
#                    separated; the first partition is the default one
#                    [debug:n9,n10,n11:4:4 mixed:c09,c10,c11:4:0
#                     mixed:gpu1-ib,gpu2-ib:4:2 mixed:rack1-node01:2:0]
#   SLURM_LAB_MAX_NODES  refuse more slurmd than this (2-core machines)      [10]
#   SLURM_LAB_NET    first three octets of the lab /24                 [10.213.0]
#   SLURM_LAB_NS     prefix of the namespace names                         [tfsl-]
#   SLURM_LAB_WAIT   seconds to wait for all nodes to be idle                [60]
#   SLURM_LAB_REUSE  1: keep a healthy lab started with the same settings
#                    (default: a running lab in the folder is stopped first) [0]
#   SLURM_LAB_TASK_PLUGIN  slurm.conf's TaskPlugin: task/none, or task/affinity
#                    (tasks bound to the CPUs Slurm gives them)    [task/none]
#   SLURM_LAB_TOPOLOGY  a network topology: "tree GROUP GROUP..." (switches
#                    s1, s2, ... of the groups' nodes under a top switch s0)
#                    or "block GROUP GROUP..." (blocks b1, b2, ..., of equal
#                    size, BlockSizes=that size); a GROUP is NODE,NODE,...,
#                    e.g. "tree n11,n12 n9,n10"; written to topology.conf
#                    in the given order                         [no topology]
#   SLURM_LAB_TOPOLOGY_PARAM  slurm.conf's TopologyParam, e.g. SwitchAsNodeRank
#                    (with SLURM_LAB_TOPOLOGY)                           [unset]
#   SLURM_LAB_SELECT_PARAMS  slurm.conf's SelectTypeParameters, e.g.
#                    CR_Core,CR_NO_DIST_TOPO_BLOCK (Slurm 26.05)      [CR_Core]
#   SLURM_LAB_SLURM  22.05: Debian 12's Slurm, installed on this machine;
#                    20.11, 24.11, 26.05: Debian 11's, 13's, forky's Slurm:
#                    daemons and clients run from a Debian root of that
#                    suite (root.sh builds and caches it), tasks go back to
#                    this machine's root (host_root.c)               [22.05]
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

T0=$(date +%s%N)
APT_LOG=$LAB_DIR/apt.log
NODESPEC=${SLURM_LAB_NODES:-debug:n9,n10,n11:4:4 mixed:c09,c10,c11:4:0 mixed:gpu1-ib,gpu2-ib:4:2 mixed:rack1-node01:2:0}
MAXNODES=${SLURM_LAB_MAX_NODES:-10}
NET=${SLURM_LAB_NET:-10.213.0}
NSP=${SLURM_LAB_NS:-tfsl-}
WAIT=${SLURM_LAB_WAIT:-60}
REUSE=${SLURM_LAB_REUSE:-0}
SLURM_SERIES=${SLURM_LAB_SLURM:-22.05}
TASK_PLUGIN=${SLURM_LAB_TASK_PLUGIN:-task/none}
TOPOLOGY=${SLURM_LAB_TOPOLOGY:-}
TOPOLOGY_PARAM=${SLURM_LAB_TOPOLOGY_PARAM:-}
SELECT_PARAMS=${SLURM_LAB_SELECT_PARAMS:-CR_Core}
CTLD_PORT=6817    # ports are per namespace: no clash with anything outside the lab
SLURMD_PORT=6818
SUBNET=$NET.0/24

elapsed() { echo $(( ($(date +%s%N) - T0) / 1000000 ))ms; }

# ------------------------------------------------------------------ checks
[ "$(id -u)" = 0 ] || die "run as root (namespaces, routes, daemons running jobs as root)"
lab_check_dir
[[ $NET =~ ^10\.([0-9]{1,3})\.([0-9]{1,3})$ ]] && [ "${BASH_REMATCH[1]}" -le 255 ] && [ "${BASH_REMATCH[2]}" -le 255 ] ||
    die "SLURM_LAB_NET must be the first three octets of a 10.x.y.0/24 network (got '$NET')"
[[ $NSP =~ ^[A-Za-z0-9_.-]{1,20}$ ]] || die "SLURM_LAB_NS must match [A-Za-z0-9_.-]{1,20}"
[[ $WAIT =~ ^[0-9]+$ ]] || die "SLURM_LAB_WAIT must be a number of seconds"
case $TASK_PLUGIN in
    task/none|task/affinity) ;;
    *) die "SLURM_LAB_TASK_PLUGIN must be task/none or task/affinity (got '$TASK_PLUGIN')";;
esac
[[ $SELECT_PARAMS =~ ^[A-Za-z_]+(,[A-Za-z_]+)*$ ]] ||
    die "SLURM_LAB_SELECT_PARAMS must be comma-separated words such as CR_Core,CR_NO_DIST_TOPO_BLOCK (got '$SELECT_PARAMS')"
[[ -z $TOPOLOGY_PARAM || ( -n $TOPOLOGY && $TOPOLOGY_PARAM =~ ^[A-Za-z_]+(,[A-Za-z_]+)*$ ) ]] ||
    die "SLURM_LAB_TOPOLOGY_PARAM must be comma-separated words such as SwitchAsNodeRank, with SLURM_LAB_TOPOLOGY (got '$TOPOLOGY_PARAM')"
case $SLURM_SERIES in
    20.11|22.05|24.11|26.05) ;;
    *) die "SLURM_LAB_SLURM must be 22.05 (Debian 12's packages, this machine's) or 20.11, 24.11 or 26.05 (a Debian root, root.sh) (got '$SLURM_SERIES')";;
esac

# Node groups -> arrays (index = node number, address .11+index)
NODES=() NODE_PART=() NODE_CPUS=() NODE_GPUS=() NODE_GRES_FILES=() PARTS=()
gpu_next=0
for group in $NODESPEC; do
    IFS=: read -r part names cpus gpus extra <<< "$group"
    [[ -z ${extra:-} && $part =~ ^[A-Za-z][A-Za-z0-9_-]*$ && $cpus =~ ^[1-9][0-9]*$ && $gpus =~ ^[0-9]+$ ]] ||
        die "bad node group '$group' in SLURM_LAB_NODES (want PARTITION:NODE,NODE:CPUS:GPUS)"
    [[ " ${PARTS[*]} " == *" $part "* ]] || PARTS+=("$part")
    files=""
    if [ "$gpus" -gt 0 ]; then   # one set of device files per group; numbering runs on
        files="$LAB_DIR/dev/nvidia[$gpu_next-$((gpu_next + gpus - 1))]"
        [ "$gpus" = 1 ] && files="$LAB_DIR/dev/nvidia$gpu_next"
        gpu_next=$((gpu_next + gpus))
    fi
    IFS=, read -r -a list <<< "$names"
    for n in "${list[@]}"; do
        [[ $n =~ ^[a-z][a-z0-9-]{0,40}$ ]] || die "bad node name '$n' (lower case letters, digits, '-')"
        case $n in ctl|sw) die "node name '$n' is reserved";; esac
        [[ " ${NODES[*]} " == *" $n "* ]] && die "node '$n' listed twice"
        NODES+=("$n") NODE_PART+=("$part") NODE_CPUS+=("$cpus") NODE_GPUS+=("$gpus") NODE_GRES_FILES+=("$files")
    done
done
[ ${#NODES[@]} -ge 1 ] || die "SLURM_LAB_NODES names no node"
[ ${#NODES[@]} -le "$MAXNODES" ] || die "${#NODES[@]} nodes > SLURM_LAB_MAX_NODES=$MAXNODES"
[ ${#NODES[@]} -le 240 ] || die "at most 240 nodes fit the /24"
addr_of() { local i; [ "$1" = ctl ] && { echo "$NET.1"; return; }
            for i in "${!NODES[@]}"; do [ "${NODES[$i]}" = "$1" ] && { echo "$NET.$((11 + i))"; return; }; done; }
# SLURM_LAB_TOPOLOGY -> the lines of topology.conf (none: no topology plugin)
TOPOLOGY_LINES=()
if [ -n "$TOPOLOGY" ]; then
    read -r -a groups <<< "$TOPOLOGY"
    kind=${groups[0]}; groups=("${groups[@]:1}")
    case $kind in tree|block) ;; *) die "SLURM_LAB_TOPOLOGY must start with tree or block (got '$TOPOLOGY')";; esac
    [ ${#groups[@]} -ge 1 ] || die "SLURM_LAB_TOPOLOGY names no group of nodes (got '$TOPOLOGY')"
    seen=" " size=""
    for k in "${!groups[@]}"; do
        IFS=, read -r -a list <<< "${groups[$k]}"
        for n in "${list[@]}"; do
            [[ " ${NODES[*]} " == *" $n "* ]] || die "SLURM_LAB_TOPOLOGY: '$n' is not a node of SLURM_LAB_NODES"
            [[ $seen == *" $n "* ]] && die "SLURM_LAB_TOPOLOGY: node '$n' is in two groups"
            seen="$seen$n "
        done
        [ -z "$size" ] || [ "$kind" = tree ] || [ "${#list[@]}" = "$size" ] ||
            die "SLURM_LAB_TOPOLOGY: blocks must have as many nodes each (got '$TOPOLOGY')"
        size=${#list[@]}
        if [ "$kind" = tree ]; then
            TOPOLOGY_LINES+=("SwitchName=s$((k + 1)) Nodes=${groups[$k]}")
        else
            TOPOLOGY_LINES+=("BlockName=b$((k + 1)) Nodes=${groups[$k]}")
        fi
    done
    if [ "$kind" = tree ]; then
        TOPOLOGY_LINES+=("SwitchName=s0 Switches=$(seq -s, -f 's%g' 1 ${#groups[@]})")
    else
        TOPOLOGY_LINES+=("BlockSizes=$size")
    fi
fi
RESV_PORTS=12000-12999  # MpiParams=ports: what srun --resv-ports=N reserves from
SETTINGS="nodes=$NODESPEC net=$NET ns=$NSP resv_ports=$RESV_PORTS slurm=$SLURM_SERIES task=$TASK_PLUGIN"
SETTINGS="$SETTINGS select=$SELECT_PARAMS${TOPOLOGY:+ topology=$TOPOLOGY}${TOPOLOGY_PARAM:+ topology_param=$TOPOLOGY_PARAM}"

# ------------------------------------------------------------------ packages
ensure_packages() {
    local missing="" c pkgs="slurmctld slurmd slurm-client munge iproute2 util-linux hostname" policy=0 rc=0
    local cmds="slurmctld slurmd srun sinfo scontrol munged munge unmunge ip nsenter unshare setsid flock hostname mknod timeout"
    if [ "$SLURM_SERIES" != 22.05 ]; then   # Slurm and munge come from the series' Debian root
        pkgs="iproute2 util-linux hostname" cmds="ip nsenter unshare setsid flock hostname mknod timeout findmnt"
    fi
    for c in $cmds; do
        command -v "$c" >/dev/null || missing="$missing $c"
    done
    [ -z "$missing" ] && return 0
    log "missing:$missing -> apt-get install $pkgs (log: $LAB_DIR/apt.log)"
    # Keep the packages from starting system-wide munge/slurm services; only ours are
    # refused, any other package's services are allowed as usual.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        # shellcheck disable=SC2016
        printf '#!/bin/sh\n# tfslurm-lab: temporary, removed by tools/slurm_lab/up.sh\ncase "$1" in munge|slurmctld|slurmd|slurmdbd) exit 101;; esac\nexit 0\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d; policy=1
    fi
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then apt_retry update || rc=$?; fi
    # shellcheck disable=SC2086
    [ $rc = 0 ] && { apt_retry install -y --no-install-recommends $pkgs ||
                     { apt_retry update && apt_retry install -y --no-install-recommends $pkgs; } || rc=1; }
    [ $policy = 1 ] && grep -q tfslurm-lab /usr/sbin/policy-rc.d && rm -f /usr/sbin/policy-rc.d
    [ $rc = 0 ] || die "apt-get install failed (see $LAB_DIR/apt.log)"
    for c in $missing; do command -v "$c" >/dev/null || die "$c still missing after apt-get install"; done
    log "packages installed in $(elapsed)"
}

# ------------------------------------------------------------------ lab folder
if [ -d "$LAB_DIR" ] && [ ! -e "$LAB_MARK" ] && [ -n "$(ls -A "$LAB_DIR")" ]; then
    die "$LAB_DIR exists, is not empty and is not a lab folder (no .tfslurm-lab); choose another SLURM_LAB_DIR"
fi
mkdir -p "$LAB_DIR"; touch "$LAB_MARK"
ensure_packages
# 20.11, 24.11, 26.05: the series' Debian root (built and cached by root.sh on first use; its own lock)
ROOT=""
if [ "$SLURM_SERIES" != 22.05 ]; then
    ROOT=$(bash "$HERE/root.sh") || die "no Debian root with Slurm $SLURM_SERIES (tools/slurm_lab/root.sh failed)"
    SETTINGS="$SETTINGS root=$ROOT"
fi
lab_lock

healthy() {
    [ "$(cat "$LAB_RUN/settings" 2>/dev/null)" = "$SETTINGS" ] || return 1
    local pid st name
    while read -r pid st name; do pid_alive "$pid" "$st" || return 1; done < "$LAB_PIDS"
    local states
    states=$(timeout 10 "$LAB_DIR/bin/sinfo" -h -N -o '%t' 2>/dev/null) || return 1
    ! grep -qvE '^(idle|alloc|mix)$' <<< "$states"
}
if lab_any_alive; then
    if [ "$REUSE" = 1 ] && healthy; then
        log "a healthy lab with these settings is already up in $LAB_DIR (SLURM_LAB_REUSE=1): keeping it"
        exit 0
    fi
    log "a lab is already running in $LAB_DIR: stopping it first"
fi
lab_stop || die "could not stop what an earlier up.sh left in $LAB_DIR; see messages above"

# from here on, any failure prints the logs and tears down what was made
fail() {
    trap - ERR
    log "ERROR: $*"
    local f
    for f in "$LAB_DIR"/log/*.log "$LAB_DIR"/log/*.out; do
        [ -s "$f" ] || continue
        # NAME.out (the daemon's stdout/stderr) mostly repeats NAME.log
        [[ $f == *.out && -s ${f%.out}.log ]] && continue
        log "----- last lines of $f"; tail -n 10 "$f" >&2
    done
    lab_stop || true
    exit 1
}
trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

# ------------------------------------------------------------------ network guard (before creating anything)
for h in sw ctl "${NODES[@]}"; do
    [ -e "/run/netns/$NSP$h" ] && die "network namespace $NSP$h exists and was not made by this lab folder; use another SLURM_LAB_NS (or remove it: ip netns del $NSP$h)"
done
if [ -n "$(ip -4 route show table all root "$SUBNET" 2>/dev/null)" ]; then
    ip -4 route show table all root "$SUBNET" >&2
    die "routes inside $SUBNET already exist in this namespace (another lab?); use another SLURM_LAB_NET"
fi
[ -z "$(ip -4 -o addr show to "$SUBNET" 2>/dev/null)" ] || die "an interface here has an address in $SUBNET; use another SLURM_LAB_NET"
rm -rf "${LAB_DIR:?}"/{etc,state,spool,tmp,run,log,bin,dev,munge} "$LAB_DIR/env.sh"
mkdir -p "$LAB_DIR"/{etc,state,spool,tmp,run,log,bin,dev,munge}
ip route add unreachable "$SUBNET" || die "could not add the guard route 'unreachable $SUBNET'"
echo "$SUBNET" > "$LAB_ROUTEFILE"
for a in "$NET.1" "$NET.5" "$NET.254" $(for n in "${NODES[@]}"; do addr_of "$n"; done); do
    out=$(ip -4 route get "$a" 2>&1) && fail "guard route not effective: 'ip route get $a' says: $out"
    grep -qiE 'unreachable|no route to host' <<< "$out" || fail "guard route not effective: 'ip route get $a' says: $out"
done
log "guard route 'unreachable $SUBNET' installed and verified ($(elapsed))"

# ------------------------------------------------------------------ files
echo "$SETTINGS" > "$LAB_RUN/settings"
dd if=/dev/urandom of="$LAB_DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$LAB_DIR/munge"; chmod 400 "$LAB_DIR/munge/munge.key"
for n in "${NODES[@]}"; do mkdir -p "$LAB_DIR/spool/$n" "$LAB_DIR/tmp/$n"; done
for ((i = 0; i < gpu_next; i++)); do
    # like /dev/null (1,3): harmless if anything ever opens one
    mknod -m 666 "$LAB_DIR/dev/nvidia$i" c 1 3
done
{
    echo "127.0.0.1 localhost"
    echo "::1 ip6-localhost ip6-loopback"
    echo "$NET.1 ctl"
    for n in "${NODES[@]}"; do echo "$(addr_of "$n") $n"; done
} > "$LAB_DIR/etc/hosts"
chmod 644 "$LAB_DIR/etc/hosts"

{
    echo "# generated by tools/slurm_lab/up.sh"
    echo "AutoDetect=off"
    for i in "${!NODES[@]}"; do
        [ -n "${NODE_GRES_FILES[$i]}" ] || continue
        echo "NodeName=${NODES[$i]} Name=gpu File=${NODE_GRES_FILES[$i]}"
    done
} > "$LAB_DIR/etc/gres.conf"

cat > "$LAB_CONF" <<EOF
# generated by tools/slurm_lab/up.sh -- $SETTINGS
ClusterName=tfslurmlab
SlurmctldHost=ctl($NET.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job starts again this many s (+1) after it ended
# (default 120; 5 is the least Slurm takes)
AuthInfo=socket=$LAB_SOCK,cred_expire=5
StateSaveLocation=$LAB_DIR/state
SlurmdSpoolDir=$LAB_DIR/spool/%n
# per node: srun --mpi=pmix makes its step folders here, and the nodes share /tmp
TmpFS=$LAB_DIR/tmp/%n
SlurmctldPidFile=$LAB_RUN/slurmctld.pid
SlurmdPidFile=$LAB_RUN/slurmd-%n.pid
SlurmctldLogFile=$LAB_DIR/log/slurmctld.log
SlurmdLogFile=$LAB_DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=$TASK_PLUGIN
SelectType=select/cons_tres
SelectTypeParameters=$SELECT_PARAMS
SchedulerType=sched/backfill
# heterogeneous jobs start on a backfill pass: the default 30 s makes them slow;
# a requeued job waits for the main scheduler's pass (default every 60 s)
SchedulerParameters=bf_interval=1,sched_interval=2
# declared CPUs may exceed this machine's
SlurmdParameters=config_overrides
MpiDefault=none
# srun --resv-ports=N reserves N ports per node from here (SLURM_STEP_RESV_PORTS)
MpiParams=ports=$RESV_PORTS
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
InactiveLimit=0
KillWait=5
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
MinJobAge=120
SlurmdTimeout=300
GresTypes=gpu
EOF
if [ -n "$TOPOLOGY" ]; then   # slurmctld reads topology.conf beside slurm.conf
    echo "TopologyPlugin=topology/${TOPOLOGY%% *}" >> "$LAB_CONF"
    [ -z "$TOPOLOGY_PARAM" ] || echo "TopologyParam=$TOPOLOGY_PARAM" >> "$LAB_CONF"
    printf '%s\n' "# generated by tools/slurm_lab/up.sh" "${TOPOLOGY_LINES[@]}" > "$LAB_DIR/etc/topology.conf"
fi
if [ -n "$ROOT" ]; then   # a root: tasks go back to this machine's root (host_root.c)
    echo "PlugStackConfig=$LAB_DIR/etc/plugstack.conf" >> "$LAB_CONF"
    echo "required $(sed -n 's/^plugin=//p' "$ROOT/.tfslurm-root") /host" > "$LAB_DIR/etc/plugstack.conf"
fi
for i in "${!NODES[@]}"; do
    n=${NODES[$i]}
    gres=""; [ "${NODE_GPUS[$i]}" -gt 0 ] && gres=" Gres=gpu:${NODE_GPUS[$i]}"
    echo "NodeName=$n NodeHostname=$n NodeAddr=$(addr_of "$n") CPUs=${NODE_CPUS[$i]} RealMemory=1000$gres State=UNKNOWN"
done >> "$LAB_CONF"
first=1
for p in "${PARTS[@]}"; do
    members=()
    for i in "${!NODES[@]}"; do [ "${NODE_PART[$i]}" = "$p" ] && members+=("${NODES[$i]}"); done
    def=NO; [ $first = 1 ] && def=YES; first=0
    echo "PartitionName=$p Nodes=$(IFS=,; echo "${members[*]}") Default=$def MaxTime=INFINITE State=UP"
    # Preemption: a job in "urgent" (the default partition's nodes, a higher
    # tier) requeues the jobs it needs the nodes of; only jobs submitted to
    # "urgent" preempt, so the other partitions behave as without it.
    if [ $def = YES ]; then
        echo "PartitionName=urgent Nodes=$(IFS=,; echo "${members[*]}") Default=NO MaxTime=INFINITE State=UP PriorityTier=2"
    fi
done >> "$LAB_CONF"

# ------------------------------------------------------------------ namespaces and bridge
# Everything below is created inside the new namespaces (veth pairs are made in the
# switch namespace with the peer moved straight into the host's namespace); the
# calling namespace only got the guard route above.
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }
no_ipv6() {  # IPv6 only on lo (::1, so binding "::" works); none on the lab links
    # shellcheck disable=SC2016
    in_ns "$1" sh -c 'f=/proc/sys/net/ipv6/conf/default/disable_ipv6; [ -w $f ] && echo 1 > $f; true'
}
new_ns() {
    ip netns add "$NSP$1" || fail "ip netns add $NSP$1 failed"
    echo "$NSP$1" >> "$LAB_NSFILE"
    no_ipv6 "$NSP$1"
    ip -n "$NSP$1" link set lo up
}
SW=${NSP}sw
new_ns sw
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up
k=0
for h in ctl "${NODES[@]}"; do
    new_ns "$h"
    ip -n "$SW" link add "p$k" type veth peer name eth0 netns "$NSP$h"
    ip -n "$SW" link set "p$k" master br0 up
    ip -n "$NSP$h" addr add "$(addr_of "$h")/24" dev eth0
    ip -n "$NSP$h" link set eth0 up
    k=$((k + 1))
done
log "namespaces and bridge ready ($(elapsed))"

# ------------------------------------------------------------------ wrappers, env.sh
# lab-on HOST CMD...: run CMD in HOST's network namespace, with HOST as hostname
# (new UTS namespace) and the lab's hosts file on /etc/hosts (new mount namespace,
# slave: later host mounts still show up). nsenter, not `ip netns exec`: that one
# remounts /sys, hides /sys/fs/cgroup, and slurmd 22.05 then cannot start. Neither
# nsenter --net nor unshare --uts --mount forks: CMD keeps the PID this was run as.
# With a root (20.11, 24.11, 26.05): CMD then runs from it (bin/enter-root, a copy of
# enter_root.sh; it execs too), with this repository, its .venv and the lab folder
# bound at their own paths even if they are under a system folder.
enter="" bind="" bind_line=""
if [ -n "$ROOT" ]; then
    cp "$HERE/enter_root.sh" "$LAB_DIR/bin/enter-root"
    REPO=$(cd "$HERE/../.." && pwd)
    bind=$REPO:$LAB_DIR
    [ -e "$REPO/.venv" ] && bind=$bind:$(readlink -f "$REPO/.venv")
    enter="$LAB_DIR/bin/enter-root $ROOT"
    bind_line="export SLURM_LAB_BIND=$bind\${SLURM_LAB_BIND:+:\$SLURM_LAB_BIND}"
fi
cat > "$LAB_DIR/bin/lab-on" <<EOF
#!/bin/sh
# generated by tools/slurm_lab/up.sh; usage: lab-on HOST CMD [ARG...]   (HOST: ctl, ${NODES[*]})
[ \$# -ge 2 ] || { echo "usage: lab-on HOST CMD [ARG...]" >&2; exit 2; }
h=\$1; shift
case \$h in ''|*[!A-Za-z0-9-]*) echo "lab-on: bad host name '\$h'" >&2; exit 2;; esac
[ -e "/run/netns/$NSP\$h" ] || { echo "lab-on: no lab host '\$h' (is the lab in $LAB_DIR up?)" >&2; exit 2; }
export SLURM_CONF=$LAB_CONF
$bind_line
exec nsenter --net="/run/netns/$NSP\$h" unshare --uts --mount --propagation slave \\
    sh -c 'mount --bind "\$0" /etc/hosts && hostname "\$1" && shift && exec "\$@"' "$LAB_DIR/etc/hosts" "\$h" $enter "\$@"
EOF
# Client wrappers: inside a lab namespace (a task, a batch script, salloc's shell)
# run the real client; anywhere else run it in the controller's namespace.
# With a root: the clients are the root's; inside the lab a client is called either from
# the root (salloc's command) or from a task back on this machine's root.
inodes=""
while read -r ns; do inodes="$inodes|'$(stat -L -c 'net:[%i]' "/run/netns/$ns")'"; done < "$LAB_NSFILE"
inodes=${inodes#|}
for c in srun sbatch salloc sinfo squeue scontrol scancel sacct sattach sbcast sstat sprio sshare sdiag strigger; do
    if [ -z "$ROOT" ]; then
        real=$(command -v "$c" 2>/dev/null) || continue
        inside="exec $real \"\$@\""
    else
        real=/usr/bin/$c
        [ -x "$ROOT$real" ] || continue
        # shellcheck disable=SC2016
        inside='[ -f /.tfslurm-root ] && exec '"$real"' "$@"; SLURM_LAB_BIND='"$bind"' exec '"$LAB_DIR/bin/enter-root $ROOT $real"' "$@"'
    fi
    cat > "$LAB_DIR/bin/$c" <<EOF
#!/bin/sh
# generated by tools/slurm_lab/up.sh: $c of the lab in $LAB_DIR
export SLURM_CONF=$LAB_CONF
case \$(readlink /proc/self/ns/net) in
    $inodes) $inside ;;
esac
exec $LAB_DIR/bin/lab-on ctl $real "\$@"
EOF
done
chmod 755 "$LAB_DIR"/bin/*
cat > "$LAB_DIR/env.sh" <<EOF
# generated by tools/slurm_lab/up.sh -- source it to use the lab: . $LAB_DIR/env.sh
export SLURM_LAB_DIR=$LAB_DIR
export SLURM_CONF=$LAB_CONF
case ":\$PATH:" in :$LAB_DIR/bin:*) ;; *) export PATH=$LAB_DIR/bin:\$PATH ;; esac
EOF

# ------------------------------------------------------------------ daemons
# start NAME CMD...: detached (own session), clean environment, without the lock fd
# (9: a daemon holding it would block down.sh); the recorded PID is the daemon's
# own (env, setsid, nsenter, unshare and sh all exec without forking).
start() {
    local name=$1 pid; shift
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 SLURM_CONF="$LAB_CONF" \
        setsid "$@" < /dev/null > "$LAB_DIR/log/$name.out" 2>&1 9>&- &
    pid=$!
    echo "$pid $(pid_start "$pid") $name" >> "$LAB_PIDS"
}
# wait_for SECONDS WHAT CMD...: poll CMD every 0.1 s; CMD may explain itself in WHY
wait_for() {
    local t=$1 what=$2 end; shift 2
    end=$(( $(date +%s%N) + t * 1000000000 )); WHY=""
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s%N)" -lt "$end" ] || fail "$what not ready after ${t}s${WHY:+: $WHY}"
        sleep 0.1
    done
}
if [ -n "$ROOT" ]; then   # munged and the munge clients of the root, on this machine's network
    MUNGE_IN=(env SLURM_LAB_BIND="$bind" "$LAB_DIR/bin/enter-root" "$ROOT")
else
    MUNGE_IN=()
fi
start munged "${MUNGE_IN[@]}" munged --foreground --force --socket="$LAB_SOCK" --key-file="$LAB_DIR/munge/munge.key" \
    --pid-file="$LAB_RUN/munged.pid" --log-file="$LAB_DIR/log/munged.log" --seed-file="$LAB_DIR/munge/munged.seed"
munge_ok() { [ -S "$LAB_SOCK" ] && timeout 5 "${MUNGE_IN[@]}" munge -n -S "$LAB_SOCK" | timeout 5 "${MUNGE_IN[@]}" unmunge -S "$LAB_SOCK"; }
wait_for 15 munged munge_ok

start slurmctld "$LAB_DIR/bin/lab-on" ctl slurmctld -D -i -f "$LAB_CONF"
ctld_ok() { timeout 5 "$LAB_DIR/bin/scontrol" ping | grep -q 'is UP'; }
wait_for 30 slurmctld ctld_ok
log "munged and slurmctld up ($(elapsed))"

for n in "${NODES[@]}"; do
    start "slurmd-$n" "$LAB_DIR/bin/lab-on" "$n" slurmd -D -N "$n" -f "$LAB_CONF"
done
all_idle() {
    local states
    states=$(timeout 10 "$LAB_DIR/bin/sinfo" -h -N -o '%N=%t' 2>&1 | sort -u)
    WHY=$(tr '\n' ' ' <<< "$states")
    [ "$(grep -c '=idle$' <<< "$states")" -eq ${#NODES[@]} ]
}
wait_for "$WAIT" "all ${#NODES[@]} nodes idle" all_idle

# the lab runs the Slurm asked for: clients, controller and every slurmd
client_version=$(timeout 10 "$LAB_DIR/bin/sinfo" --version 2>&1) || fail "sinfo --version: $client_version"
[[ $client_version == *" $SLURM_SERIES."* ]] || fail "the clients are '$client_version', not Slurm $SLURM_SERIES"
node_versions=$(timeout 10 "$LAB_DIR/bin/scontrol" -o show node | grep -o ' Version=[^ ]*' | sort | uniq -c | tr -s ' ')
[ "$(grep -c "Version=$SLURM_SERIES\." <<< "$node_versions")" = 1 ] && [[ $node_versions == " ${#NODES[@]} "* ]] ||
    fail "slurmd versions are '$node_versions', not Slurm $SLURM_SERIES on all ${#NODES[@]} nodes"
ctld_version=$(timeout 10 "$LAB_DIR/bin/scontrol" show config 2>&1 | sed -n 's/^SLURM_VERSION *= *//p')
[[ $ctld_version == "$SLURM_SERIES."* ]] || fail "slurmctld is '$ctld_version', not Slurm $SLURM_SERIES"
echo "${client_version#slurm* }" > "$LAB_RUN/version"

# every recorded PID must be the daemon itself (so down.sh stops exactly these)
while read -r pid st name; do
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || fail "$name (pid $pid) is gone"
    [ "$comm" = "${name%%-*}" ] || fail "recorded pid $pid of $name runs '$comm'"
done < "$LAB_PIDS"

log "up in $(elapsed) (Slurm $(cat "$LAB_RUN/version")): $("$LAB_DIR/bin/sinfo" -h -o '%P %D %N' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
log "use it with:  . $LAB_DIR/env.sh   (stop: $HERE/down.sh)"
