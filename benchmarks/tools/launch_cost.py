"""Host cost of one kernel launch, three ways (GPU only).

    python3 -m benchmarks.tools.launch_cost [--launches 2000]

A BFS level costs its kernels plus the host's launches; on small levels the launches dominate.
This times an empty kernel with a BFS kernel's arguments (25 arrays, flags and scalars, in five
named groups: graph arrays, search state, queues, flags, scalars) launched through Numba's
dispatcher, through explorer's Launcher with the scalars' group changing every launch (as a level
number does), and through cuLaunchKernel alone on the Launcher's kept parameter array.
"""
from __future__ import annotations

import argparse
from typing import NamedTuple


class Graph(NamedTuple):
    offsets: object
    indices: object
    degrees: object


class State(NamedTuple):
    dist: object
    parent: object
    visited: object
    log: object


class Queues(NamedTuple):
    f_in: object
    f_out: object
    counters: object


class Flags(NamedTuple):
    instrument: bool
    atomic: bool
    dedup: bool
    last: bool


class Scalars(NamedTuple):
    level: int
    n: int
    m: int
    threshold: int
    heavy: int
    warp: int
    k3: int
    k7: int
    slot: int
    blocks: int
    source: int


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=2000)
    args = ap.parse_args(argv)

    import time

    import numpy as np
    from numba import cuda

    from explorer import backend
    from explorer.engine.launcher import Launcher

    backend.select("gpu")

    @cuda.jit
    def empty(graph, state, queues, flags, scalars):
        if scalars.level < 0:  # never: keeps every argument live
            state.dist[0] = (scalars.n + scalars.m + scalars.threshold + scalars.heavy + scalars.warp + scalars.k3
                             + scalars.k7 + scalars.slot + scalars.blocks + scalars.source + graph.offsets[0]
                             + graph.indices[0] + graph.degrees[0] + state.parent[0] + state.visited[0]
                             + state.log[0] + queues.f_in[0] + queues.f_out[0] + queues.counters[0]
                             + flags.instrument + flags.atomic + flags.dedup + flags.last)

    arrays = [cuda.device_array(16, np.int64) for _ in range(10)]
    groups = (Graph(*arrays[:3]), State(*arrays[3:7]), Queues(*arrays[7:]), Flags(True, False, True, False))

    def argv_for(i):
        return (*groups, Scalars(i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))

    n = args.launches
    empty[1, 32](*argv_for(0))
    cuda.synchronize()

    def timed(launch_one):
        cuda.synchronize()
        t = time.perf_counter()
        for i in range(n):
            launch_one(i)
        host = (time.perf_counter() - t) / n
        cuda.synchronize()
        return host * 1e6

    numba_us = timed(lambda i: empty[1, 32](*argv_for(i)))
    launcher = Launcher()
    launcher.prepare(empty, 1, 32, 0, *argv_for(0))
    launcher_us = timed(lambda i: launcher(empty, 1, 32, 0, *argv_for(i)))
    plan = next(iter(launcher._plans.values()))
    addr = plan.params_address()
    raw_us = timed(lambda i: launcher._launch(plan.handle, 1, 1, 1, 32, 1, 1, 0, 0, addr, 0))
    print(f"{n} launches of an empty kernel of 25 arguments in 5 groups, host time per launch:")
    print(f"  Numba dispatcher          {numba_us:7.1f} us")
    print(f"  explorer Launcher         {launcher_us:7.1f} us")
    print(f"  cuLaunchKernel alone      {raw_us:7.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
