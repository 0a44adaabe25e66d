#!/usr/bin/env bash
# issue #52's nanoGPT check on a GPU: `migrate verify` at its default settings on nanoGPT's
# bench.py (compiled, real_data=False), original against a migrated copy that is identical, 30 %
# slower, or whose loss is 0.5 % higher (docs/verification/nanogpt/variant_bench.py plants the
# change in the copy named `migrated` only).
#
# Usage, on the device machine from the checkout's root, with the ignored folder $CARRY carried:
#   bash scripts/nanogpt_verify_gpu.sh identical slow loss [identical:eager ...]
# $CARRY (default artifacts/nanogpt52) holds whl/ (migrate-rocm's wheel built from this checkout
# and its dependencies' wheels for the device's Python) and nanogpt/ (karpathy/nanoGPT @ 3adf61e:
# bench.py, model.py, configurator.py). A variant `NAME:eager` runs with --compile=False.
# Receipts, summaries and progress logs land in $OUT; recorded in docs/verification.md.
# Preparing $CARRY on the development machine (the device reaches nothing outside it):
#   .venv/bin/python -m pip wheel --no-deps -w artifacts/nanogpt52/whl .
#   .venv/bin/python -m pip download --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
#       -d artifacts/nanogpt52/whl libcst click rich jinja2 packaging pyyaml tree-sitter tree-sitter-cuda pyelftools
#   git --git-dir=<fetched karpathy/nanoGPT> archive 3adf61e154c3fe3fca428ad6bc3818b27a3b8291 \
#       bench.py model.py configurator.py LICENSE | tar -x -C artifacts/nanogpt52/nanogpt
set -u
CARRY=$PWD/${CARRY:-artifacts/nanogpt52}
OUT=${OUT:-/tmp/nanogpt-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$CARRY"/whl/*.whl || exit 9
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
    nproc
} > "$OUT/env.txt" 2>&1
cp docs/verification/nanogpt/variant_bench.py "$CARRY/nanogpt/"
for spec in "$@"; do
    variant=${spec%%:*}
    args="--real_data=False"
    name=$variant
    if [ "$spec" != "$variant" ]; then
        args="$args --compile=False"
        name=$variant-eager
    fi
    start=$(date +%s)
    # From /tmp: `python3 -m` puts the working folder first on sys.path, and the checkout's own
    # migrator/ (without rules/, which the wheel maps to migrator.rules) would shadow the wheel.
    (cd /tmp && timeout "${VERIFY_LIMIT:-580}" python3 -m migrator verify "$CARRY/nanogpt" \
        --smoke "python3 variant_bench.py $args" --targets native --env "NANOGPT_VARIANT=$variant" \
        --timeout 240 --receipt "$OUT/receipt-$name.json" --progress \
        > "$OUT/verify-$name.txt" 2> "$OUT/progress-$name.txt")
    echo "rc=$? wall=$(( $(date +%s) - start ))s" >> "$OUT/verify-$name.txt"
    echo "== $name"
    cat "$OUT/verify-$name.txt"
done
