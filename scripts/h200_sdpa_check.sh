#!/usr/bin/env bash
# GPU experiment behind docs/verification.md: why the migrated fixture (SDPA) decodes slower than
# the original (hand-written attention) on an NVIDIA GPU, and whether fp32 outputs agree once TF32
# is off. Runs the fixture's smoke test directly (no verify wrapper) on copies of the tree.
# Usage (on the GPU machine, with migrate importable): bash scripts/h200_sdpa_check.sh OUT_DIR
set -uo pipefail
out=${1:-/tmp/sdpa-check}; mkdir -p "$out"
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf /tmp/orig /tmp/migr
cp -r "$repo/fixtures/llm_app" /tmp/orig
cp -r "$repo/fixtures/llm_app" /tmp/migr
(cd /tmp && python3 -P -m migrator.cli fix --unsafe-fixes /tmp/migr > "$out/fix.txt" 2>&1)
smoke() {  # tree label [python prelude] [env...]
  local tree=$1 label=$2 prelude=$3; shift 3
  (cd "$tree" && env "$@" MIGRATE_SMOKE_OUTPUT="$out/$label.json" python3 -c "
import torch, runpy
$prelude
runpy.run_path('smoke.py', run_name='__main__')
print('cudnn_sdp_enabled', torch.backends.cuda.cudnn_sdp_enabled())" > "$out/$label.log" 2>&1)
  python3 -c "import json,sys; r=json.load(open('$out/$label.json')); print('$label', round(r['tokens_per_second'],1), 'tok/s', r['dtype'], 'checksum', r['logits_checksum'], 'tokens', r['tokens'][:8])"
}
for rep in 1 2; do
  smoke /tmp/orig "orig-bf16-$rep" ""
  smoke /tmp/migr "migr-bf16-$rep" ""
  smoke /tmp/migr "migr-bf16-nocudnn-$rep" "torch.backends.cuda.enable_cudnn_sdp(False)"
done
smoke /tmp/orig orig-fp32-notf32 "" SMOKE_DTYPE=float32 SMOKE_NEW_TOKENS=128 NVIDIA_TF32_OVERRIDE=0
smoke /tmp/migr migr-fp32-notf32 "" SMOKE_DTYPE=float32 SMOKE_NEW_TOKENS=128 NVIDIA_TF32_OVERRIDE=0
smoke /tmp/orig orig-fp32-tf32 "" SMOKE_DTYPE=float32 SMOKE_NEW_TOKENS=128
smoke /tmp/migr migr-fp32-tf32 "" SMOKE_DTYPE=float32 SMOKE_NEW_TOKENS=128
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
for a, b in [("orig-fp32-notf32", "migr-fp32-notf32"), ("orig-fp32-tf32", "migr-fp32-tf32"), ("orig-bf16-1", "migr-bf16-1")]:
    x, y = (json.load(open(f"{out}/{n}.json")) for n in (a, b))
    diff = max(abs(p - q) for p, q in zip(x["logits"], y["logits"]))
    print(f"{a} vs {b}: tokens equal {x['tokens'] == y['tokens']}, max |logit diff| {diff:.3g}")
PY
