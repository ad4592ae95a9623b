#!/usr/bin/env bash
# Demo on a real Slurm cluster (root): sets up the machine (tools/setup.sh:
# Bazel, .venv with TensorFlow; slow the first time), starts the Slurm lab
# (tools/slurm_lab: nodes n9 n10 n11 ... in network namespaces), runs the
# multi-worker example with
#   srun -N3 --ntasks-per-node=2 python examples/train_mwms.py
# (six MultiWorkerMirroredStrategy workers found by SlurmClusterResolver()),
# prints each task's role, address and GPUs and the training result (loss,
# identical weights), and stops the lab again, also on failure or Ctrl-C.
# Uses its own lab folder, network and namespace prefix (below), so that a
# lab started by hand or by the tests keeps running.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$(id -u)" != 0 ]]; then
  echo "demo_slurm.sh: needs root (the Slurm lab creates network namespaces" \
       "and runs slurmd as root)" >&2
  exit 1
fi

export SLURM_LAB_DIR="${DEMO_SLURM_LAB_DIR:-/tmp/tfslurm-lab-demo}"
export SLURM_LAB_NET="${DEMO_SLURM_LAB_NET:-10.213.30}"
export SLURM_LAB_NS="${DEMO_SLURM_LAB_NS:-tfsdemo-}"

bash "${root}/tools/setup.sh"

work="$(mktemp -d /tmp/tfslurm-demo.XXXXXX)"
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  echo "== stopping the Slurm lab"
  # The lab folder (logs) is kept only if something failed.
  SLURM_LAB_PURGE=$(( status == 0 )) timeout 300 \
      bash "${root}/tools/slurm_lab/down.sh" || status=1
  rm -rf "${work}"
  exit "${status}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== starting the Slurm lab in ${SLURM_LAB_DIR}"
timeout 1200 bash "${root}/tools/slurm_lab/up.sh"
# shellcheck source=/dev/null
. "${SLURM_LAB_DIR}/env.sh"   # SLURM_CONF and the lab's srun first on PATH
sinfo -o '%P %D %N'

echo
echo "== srun -N3 --ntasks-per-node=2 python examples/train_mwms.py"
start=$(date +%s)
cd "${work}"
status=0
timeout 600 srun -N3 --ntasks-per-node=2 -w 'n[9-11]' --kill-on-bad-exit=1 \
    --time=10 --job-name=tf-mwms-demo \
    env PYTHONPATH="${root}" TF_CPP_MIN_LOG_LEVEL=2 TF_ENABLE_ONEDNN_OPTS=0 \
    "${root}/.venv/bin/python3" "${root}/examples/train_mwms.py" \
    --out "${work}/results" > "${work}/stdout" 2> "${work}/stderr" || status=$?
echo "(srun exit status ${status}, $(( $(date +%s) - start )) s)"
if (( status != 0 )); then
  echo "--- last lines of the tasks' stderr:" >&2
  grep -v -e oneDNN -e 'absl::InitializeLog' "${work}/stderr" | tail -n 30 >&2
fi

"${root}/.venv/bin/python3" - "${work}/results" <<'EOF'
import glob, json, os, sys

results = []
for path in glob.glob(os.path.join(sys.argv[1], '*.json')):
  with open(path) as f:
    results.append(json.load(f))
results.sort(key=lambda r: r['procid'])
print('%-4s %-5s %-9s %-9s %-11s %-22s %s' % (
    'rank', 'node', 'TF task', 'address', 'GPUs', 'loss (epoch 1 -> last)',
    'weights sha256'))
for r in results:
  print('%-4s %-5s %-9s %-9s %-11s %-22s %.16s' % (
      r['procid'], r['node'], r['task'], r['address'],
      r['gpus'] if r['gpus'] is not None else 'none (CPU)',
      '%.4f -> %.4f' % (r['loss'][0], r['loss'][-1]), r['weights_sha256']))
hashes = {r['weights_sha256'] for r in results}
workers = results[0]['workers'] if results else 0
ok = len(results) == 6 == workers and len(hashes) == 1
print()
print('%d of 6 workers finished (the strategy saw %d workers); identical '
      'weights in all of them: %s' % (
          len(results), workers, 'yes' if len(hashes) == 1 and results
          else 'NO'))
if results:
  print('weights sha256 %s, sum %.6f' % (sorted(hashes)[0],
                                         results[0]['weights_sum']))
sys.exit(0 if ok else 1)
EOF
