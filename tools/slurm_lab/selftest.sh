#!/usr/bin/env bash
# shellcheck disable=SC2016  # single quotes on purpose: the tasks expand them
# Smoke test of a running lab (tools/slurm_lab/up.sh first). Prints what each step
# gives and how long it took; exit status 1 if a check failed. Needs python3.
# Assumes the default node set (n9,n10,n11 with 4 GPUs; partition mixed).
set -uo pipefail
LAB_DIR=${SLURM_LAB_DIR:-/tmp/tfslurm-lab}
# shellcheck source=/dev/null
. "$LAB_DIR/env.sh" || exit 1
NET=$(awk '$2 == "ctl" {sub(/\.1$/, "", $1); print $1}' "$LAB_DIR/etc/hosts")
WORK=$(mktemp -d /tmp/tfslurm-selftest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failed=0

# step TITLE EXPECT-REGEX CMD...: run CMD (bounded), show output and time, check output
step() {
    local title=$1 want=$2 t0 out rc ms; shift 2
    printf '\n=== %s\n$ %s\n' "$title" "$*"
    t0=$(date +%s%N)
    out=$(timeout 60 "$@" 2>&1); rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    printf '%s\n' "$out"
    if [ $rc = 0 ] && grep -Eq -- "$want" <<< "$out"; then
        printf -- '--- ok (%d ms)\n' "$ms"
    else
        printf -- '--- FAILED (rc=%d, %d ms, wanted /%s/)\n' "$rc" "$ms" "$want"; failed=1
    fi
}

step "root namespace: the lab /24 is unreachable" 'No route to host|unreachable' \
    sh -c "ip route get $NET.5 2>&1; ip route show $NET.0/24; ! ip route get $NET.5 >/dev/null 2>&1"
step "sinfo" 'idle' sinfo
step "srun -N3 -n7 hostname" '^6: n11$' sh -c 'srun -N3 -n7 -l hostname | sort -n'
step "srun -p mixed -N5 -n5 hostname" '^4: gpu2-ib$' sh -c 'srun -p mixed -N5 -n5 -l hostname | sort -n'
step "names resolve to the lab addresses inside a task" "$NET\\.12 +n10" srun -w n9 getent hosts n9 n10 ctl

# Every task listens on 0.0.0.0:8888 in its own node namespace, then connects to the
# next task's node (n9 -> n10, n10 -> n9) by name and exchanges hostnames.
cat > "$WORK/ring.py" <<'EOF'
import os, socket, sys, threading, time
nodes = os.environ["SLURM_STEP_NODELIST"]
me, rank = socket.gethostname(), int(os.environ["SLURM_PROCID"])
peer = ["n9", "n10"][1 - rank]
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 8888)); srv.listen(4); srv.settimeout(20)
def serve():
    c, addr = srv.accept(); c.settimeout(10)
    c.sendall(("hello from %s, you are %s" % (me, addr[0])).encode()); c.close()
t = threading.Thread(target=serve, daemon=True); t.start()
deadline = time.time() + 15
while True:
    try:
        s = socket.create_connection((peer, 8888), timeout=3); break
    except OSError as e:
        if time.time() > deadline: sys.exit("%s: cannot reach %s:8888: %s" % (me, peer, e))
        time.sleep(0.1)
s.settimeout(10)
msg = s.recv(200).decode(); s.close(); t.join(20)
print("%s (listening on 8888) -> %s:8888 %s: %s" % (me, peer, socket.gethostbyname(peer), msg))
EOF
step "TCP between tasks: both listen on 8888, each connects to the other" \
    'n10 .*-> n9:8888 .*hello from n9' sh -c "srun -w n9,n10 -N2 -n2 python3 $WORK/ring.py | sort"

step "srun --gres=gpu:2 env | grep CUDA" '^CUDA_VISIBLE_DEVICES=0,1$' sh -c 'srun --gres=gpu:2 env | grep CUDA'
step "srun --gpus-per-task=1 -n2 env | grep CUDA" 'CUDA_VISIBLE_DEVICES=1' \
    sh -c 'srun --gpus-per-task=1 -n2 -l env | grep CUDA | sort'
step "srun -N2 --ntasks-per-node=2 --gpus-per-node=4 --gpu-bind=single:1" '^3: n10 4 1$' \
    sh -c 'srun -N2 --ntasks-per-node=2 --gpus-per-node=4 --gpu-bind=single:1 -l sh -c "echo \$(hostname) \$SLURM_GPUS_ON_NODE \$CUDA_VISIBLE_DEVICES" | sort -n'
step "srun --resv-ports=2 (MpiParams=ports=12000-12999)" '^SLURM_STEP_RESV_PORTS=12[0-9]{3}-12[0-9]{3}$' \
    srun -N1 -n1 --resv-ports=2 sh -c 'echo SLURM_STEP_RESV_PORTS=$SLURM_STEP_RESV_PORTS'
step "het step srun -n1 : -n2 hostname" '^2: ' sh -c 'srun -l -n1 : -n2 hostname | sort -n'
step "het step with the mixed partition" 'rack1-node01' \
    sh -c 'srun -l -N1 -n1 : -p mixed -w rack1-node01,c10 -N2 -n2 sh -c "echo \$(hostname) \$SLURM_HET_SIZE \$SLURM_STEP_NODELIST" | sort -n'

cat > "$WORK/job.sh" <<'EOF'
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=2 --gres=gpu:1 -o job.out
echo "batch on $(hostname) nodes=$SLURM_JOB_NODELIST gpus=$CUDA_VISIBLE_DEVICES"
srun -l hostname | sort -n
EOF
step "sbatch -W" '^3: n10$' sh -c 'sbatch -W job.sh && cat job.out'

exit $failed
