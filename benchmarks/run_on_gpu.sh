#!/usr/bin/env bash
# Everything that needs a real GPU, in one go: the whole test suite, the benchmark, then the plain
# single-block, persistent multi-block and cluster yardsticks for the grid.
#   bash benchmarks/run_on_gpu.sh OUTDIR [benchmark options]
# Bokeh and ipywidgets may be missing on a GPU machine: their tests skip themselves.
set -uo pipefail
out=${1:-benchmarks/results}
shift || true
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
export PYTHONUNBUFFERED=1
# A kernel that never finishes (a cluster barrier some thread misses) must not hold up the rest
# (the suite takes about 25 s on an H100; a device call ends at 10 minutes).
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs --durations=10 2>&1 | tee "$out/pytest-gpu.log"
python3 benchmarks/bench_bfs.py --out "$out" "$@" 2>&1 | tee "$out/bench.log"
python3 benchmarks/plain_single_block.py 2>&1 | tee "$out/plain_single_block.log"
python3 benchmarks/plain_persistent.py 2>&1 | tee "$out/plain_persistent.log"
timeout 150 python3 benchmarks/plain_cluster.py 2>&1 | tee "$out/plain_cluster.log"
