#!/usr/bin/env bash
# hip-on-nvidia on the device: the fixture, a planted bug, two real extensions.
# Run on the device machine from a folder holding migrator/ (with rules/ copied in as
# migrator/rules), fixtures/quant_kernels, tests/eval/hip_on_nvidia, .whl (migrate's wheels for
# the device's Python 3.12) and .devcarry (hip/: a copy of Debian's /usr/include/hip; proj/:
# ChamferDistancePytorch @ 364c03c, Pointnet2_PyTorch @ b5ceb6d), carried as one ignored folder
# of the checkout the device receives; results land in $OUT. Recorded in docs/verification.md.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MIGRATE_HIP_NVIDIA_HOME=/tmp/hipnv
(nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; python3 -c "import torch;print(torch.__version__,torch.version.cuda)"; nproc) > $OUT/env.txt 2>&1
python3 -m migrator.kernels.hip_nvidia.headers install --source .devcarry >> $OUT/env.txt 2>&1 || exit 8
M="timeout ${STEP:-240} python3 -m migrator kernels"
I=tests/eval/hip_on_nvidia
step() { local out=$1; shift; local s=$(date +%s); "$@" >> $OUT/$out 2>&1; echo "rc=$? s=$(( $(date +%s)-s ))" >> $OUT/$out; }
step fixture.txt $M fixtures/quant_kernels --no-hipify --run hip-on-nvidia --inputs fixtures/quant_kernels/hip-on-nvidia.toml --keep-workspace /tmp/wfx
cp /tmp/wfx/result.json $OUT/fixture-result.json
cp -r /tmp/wfx/translated /tmp/planted
sed -i 's/__half2float(scale\[row\])/__half2float(scale[col])/' /tmp/planted/csrc/dequant.hip
grep -n "scale\[col\]" /tmp/planted/csrc/dequant.hip >> $OUT/planted.txt
step planted.txt $M fixtures/quant_kernels --no-hipify --run hip-on-nvidia --inputs fixtures/quant_kernels/hip-on-nvidia.toml --extension quant_kernels._dequant --translated /tmp/planted
step chamfer.txt $M .devcarry/proj/ChamferDistancePytorch --no-hipify --run hip-on-nvidia --inputs $I/ChamferDistancePytorch.toml --keep-workspace /tmp/wch
cp /tmp/wch/result.json $OUT/chamfer-result.json
step pn.txt $M .devcarry/proj/Pointnet2_PyTorch --no-hipify --run hip-on-nvidia --inputs $I/Pointnet2_PyTorch.toml --keep-workspace /tmp/wpn
cp /tmp/wpn/result.json $OUT/pn-result.json
for f in fixture planted chamfer pn; do echo "== $f"; grep -A60 "^hip-on-nvidia:" $OUT/$f.txt | cut -c1-400 | head -40; tail -2 $OUT/$f.txt; done
