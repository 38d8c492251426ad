#!/usr/bin/env bash
# Everything that needs a real GPU, in parts that each fit one device call (10 minutes):
#   bash benchmarks/run_on_gpu.sh OUTDIR PART...
# Results go to OUTDIR/<GPU kind>/NAME.{json,md}, the layout of benchmarks/results (copy them there
# to make them the current set), each part's log to OUTDIR/PART.log. Each part runs under a time
# limit of its own, so that a part that hangs (a barrier some thread misses) cannot hold up the rest.
# Parts (python3 -m benchmarks.X; benchmarks/README.md says what each measures):
#   suite       the whole test suite (networkx's own suites left to nxtests)
#   nxtests     the networkx backend's tests, networkx's own suites among them
#   table       every technique on every graph               peers      the fastest techniques beside BLEST
#   targets     the headline configurations                               and Gunrock (where .blest/ and
#   ladder      BFS-4K's features one at a time                           .gunrock/ hold their binaries)
#   direction   direction-optimizing, and Graph500's 64 roots
#   luo         Luo's hierarchical kernels on the grids      levels     the cost of a level
#   cpu         the CPU techniques, scipy, networkx          multi      many searches at once, betweenness
#   nx          networkx with backend="bfs4k"                coldstart  a first run in a fresh process
#   yardsticks  the plain single-block, persistent and cluster BFS of the grid
#   floors      what a level of the grid costs at best       launch     the host cost of a launch
#   bitmap      bitmap-direction beside BLEST, Gunrock and this project's best before it, 64 Graph500
#               roots, the counts' cost
#   bitmap-phases  bitmap-direction: the floor, a level's phases (a timing build), streamed levels
#   fuzz        random graphs, roots and knobs, every result checked
#   warp-samples  where the 1000² grid's cluster kernels wait (bitmap-direction's, BFS-4K's): ncu's
#               warp-state samples by stall reason and instruction (benchmarks.tools.warp_samples)
#   sssp        weighted shortest paths beside scipy and Gunrock's SSSP (.gunrock/sssp_bin), Floyd-Warshall
#   scale       many searches and a sweep over 1, 2 and 4 GPUs through Dask (a 4-GPU host; dask and
#               distributed carried as wheels where missing)
#   notebooks   every notebook through nbclient (needs nbclient, ipykernel, ipywidgets and bokeh,
#               carried as wheels where the machine lacks them)
# Bokeh and ipywidgets may be missing on a GPU machine: their tests skip themselves.
set -uo pipefail
out=${1:-benchmarks/results}
shift || true
mkdir -p "$out"
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
bench() {  # bench NAME SECONDS MODULE ARGS...: python3 -m benchmarks.MODULE --out OUTDIR ARGS...
    local name=$1 limit=$2 module=$3
    shift 3
    run "$name" "$limit" python3 -m "benchmarks.$module" --out "$out" "$@"
}
for part in "$@"; do
    case "$part" in
        # pytest-xdist spreads the suite over processes (one CUDA context each); the host's cores
        # compile while the GPU runs, so the whole suite fits one call.
        suite) run pytest-gpu 500 python3 -m pytest -q -p no:cacheprovider -rs --durations=15 \
                   -n "${BFS4K_GPU_WORKERS:-8}" \
                   --deselect tests/test_nx_backend.py::test_networkx_own_tests_pass_with_the_backend ;;
        nxtests) run pytest-nx 300 python3 -m pytest -q -p no:cacheprovider -rs tests/test_nx_backend.py \
                     tests/test_bfs4k.py -n "${BFS4K_GPU_WORKERS:-8}" ;;
        table) bench table 540 table ;;
        peers) bench peers 540 table --techniques direction-optimizing luo-hierarchical bfs4k --peers --name peers ;;
        targets) bench targets 400 bfs targets ;;
        ladder) bench ladder 300 bfs ladder ;;
        direction) bench direction 420 bfs direction roots ;;
        luo) bench luo 240 bfs luo ;;
        levels) bench levels 300 bfs levels ;;
        cpu) bench cpu 300 bfs cpu --repeats 5 ;;
        multi) bench multisearch 540 multisearch --graphs kron20 grid1000 facebook_combined --budget 45 --bc ;;
        nx) bench nx 300 nx_backend ;;
        coldstart) bench coldstart 240 cold_start ;;
        yardsticks)
            bench plain-single-block 120 yardsticks.plain_single_block
            bench plain-persistent 120 yardsticks.plain_persistent
            bench plain-cluster 150 yardsticks.plain_cluster ;;
        floors) bench level-floor 240 yardsticks.level_floor ;;
        launch) run launch-cost 60 python3 -m benchmarks.tools.launch_cost ;;
        bitmap) bench bitmap-direction 540 bitmap_direction table roots instrument --before ;;
        bitmap-phases) bench bitmap-direction-phases 300 bitmap_direction compile floor phases streaming ;;
        sssp) bench sssp 480 sssp ;;
        scale) bench scale-out 570 scale_out --gpus 1 2 4 ;;
        fuzz) run fuzz 420 python3 -m benchmarks.tools.fuzz --runs 1500 --multi 0.2 --seed "$(date +%s)" \
                  --seconds 380 --json "$out/fuzz.json" ;;
        warp-samples)
            run warp-samples-bitmap 240 python3 -m benchmarks.tools.warp_samples --out "$out" --graph grid1000 \
                --source centre --knobs cluster=16 cluster_arcs=1099511627776 one_block_vertices=0 \
                --kernel bitmap_cluster --name warp-samples-grid1000-bitmap-direction-cluster
            # BFS-4K tuned in its cluster form: the knobs as KNOB=VALUE words
            run warp-samples-bfs4k 240 python3 -m benchmarks.tools.warp_samples --out "$out" --graph grid1000 \
                --source centre --technique bfs4k --kernel bfs4k_cluster --name warp-samples-grid1000-bfs4k-cluster \
                --knobs $(python3 -c 'from benchmarks.bfs import TUNED_CLUSTER as k; print(*(f"{n}={v}" for n, v in k.items()))') ;;
        notebooks) run notebooks 300 python3 -m benchmarks.tools.notebooks --out "$out/notebooks" ;;
        *) echo "unknown part $part (see the head of benchmarks/run_on_gpu.sh)" ;;
    esac
done
