#!/usr/bin/env bash
# Everything that needs a real GPU, in parts that each fit one device call (10 minutes):
#   bash benchmarks/run_on_gpu.sh OUTDIR PART...
# PART: suite (the whole test suite), nxtests (the networkx backend's tests, networkx's own suites
# among them), bench (bench_bfs: the targets), roots (direction-optimizing's random roots and a
# small graph level by level), luo, direction, multi, nx, table2, coldstart, yardsticks, floors
# (what a level of the 1000² grid costs at best on one SM and on a cluster), fuzz,
# levelcost (a BFS-4K level's cost), notebooks (every notebook through nbclient: needs nbclient,
# ipykernel, ipywidgets and bokeh, carried as wheels where the machine lacks them).
# Each part writes its log (and its results) under OUTDIR, under a time limit of its own, so a
# part that hangs (a barrier some thread misses) cannot hold up the rest.
# Bokeh and ipywidgets may be missing on a GPU machine: their tests skip themselves.
set -uo pipefail
out=${1:-benchmarks/results}
shift || true
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
export PYTHONUNBUFFERED=1
export BFS4K_NX_PROCESSES=${BFS4K_NX_PROCESSES:-5}  # networkx's suites in 5 processes side by side
# networkx finds the bfs4k backend through the package's entry points, so the checkout is installed
# (editable, offline, no dependencies) where it is not yet.
python3 -c "import importlib.metadata as m; m.distribution('bfs4k-explorer')" 2>/dev/null ||
    python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . > "$out/pip-install.log" 2>&1 ||
    echo "could not install the checkout: the networkx backend tests will fail (see pip-install.log)"
run() {  # run NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s)"
    timeout "$limit" "$@" 2>&1 | tee "$out/$name.log" | tail -40
}
for part in "$@"; do
    case "$part" in
        # pytest-xdist spreads the suite over processes (one CUDA context each); the host's cores
        # compile while the GPU runs, so the whole suite fits one call.
        # networkx's own suites (minutes) are left to nxtests, so that the rest finishes in its limit.
        suite) run pytest-gpu 500 python3 -m pytest -q -p no:cacheprovider -rs --durations=15 \
                   -n "${BFS4K_GPU_WORKERS:-8}" \
                   --deselect tests/test_nx_backend.py::test_networkx_own_tests_pass_with_the_backend ;;
        nxtests) run pytest-nx 300 python3 -m pytest -q -p no:cacheprovider -rs tests/test_nx_backend.py \
                     tests/test_bfs4k.py -n "${BFS4K_GPU_WORKERS:-8}" ;;
        roots)
            run roots 150 python3 benchmarks/profile_levels.py kron22 --technique direction-optimizing --roots 16
            run profile-facebook 90 python3 benchmarks/profile_levels.py facebook_combined \
                --technique direction-optimizing ;;
        bench) run bench 400 python3 benchmarks/bench_bfs.py --out "$out" --graphs kron22 grid1000 --no-ladder \
                   --repeats 11 ;;
        luo) run luo 240 python3 benchmarks/bench_luo.py --json "$out/luo.json" ;;
        direction) run direction 420 python3 benchmarks/bench_direction.py --out "$out" ;;
        multi) run multisearch 540 python3 benchmarks/bench_multisearch.py --out "$out" --graphs kron20 grid1000 \
                   facebook_combined --budget 45 --bc ;;
        nx) run nx 300 python3 benchmarks/bench_nx.py --out "$out" ;;
        table2) run table2 540 python3 benchmarks/bench_table2.py --out "$out" ;;
        levelcost) run level-cost 200 python3 benchmarks/level_cost.py --json "$out/level-cost.json" \
                       --md "$out/level-cost.md" ;;
        notebooks) run notebooks 300 python3 benchmarks/run_notebooks.py --out "$out/notebooks" ;;
        fuzz) run fuzz 420 python3 benchmarks/fuzz.py --runs 1500 --multi 0.2 --seed "$(date +%s)" --json "$out/fuzz.json" ;;
        coldstart) run coldstart 240 python3 benchmarks/cold_start.py ;;
        yardsticks)
            run plain_single_block 120 python3 benchmarks/plain_single_block.py
            run plain_persistent 120 python3 benchmarks/plain_persistent.py
            run plain_cluster 150 python3 benchmarks/plain_cluster.py ;;
        floors) run level-floor 240 python3 benchmarks/level_floor.py ;;
        *) echo "unknown part $part" ;;
    esac
done
