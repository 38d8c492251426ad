"""Host cost of one kernel launch, three ways (GPU only).

    python benchmarks/launch_cost.py [--launches 2000]

A BFS level costs its kernels plus the host's launches; on small levels the launches dominate.
This times an empty kernel with BFS-4K's argument count (25: arrays and scalars) launched through
Numba's dispatcher, through explorer.launcher.Launcher with one scalar changing per launch (as a
level number does), and through cuLaunchKernel alone on the Launcher's kept parameter array.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=2000)
    args = ap.parse_args(argv)

    import numpy as np
    from numba import cuda

    from explorer import backend
    from explorer.engine.launcher import Launcher

    backend.select("gpu")

    @cuda.jit
    def empty(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9,
              b0, b1, b2, b3, s10):
        if s0 < 0:  # never: keeps every argument live
            a0[0] = s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + a1[0] + a2[0] + a3[0] \
                + a4[0] + a5[0] + a6[0] + a7[0] + a8[0] + a9[0] + b0 + b1 + b2 + b3

    arrays = [cuda.device_array(16, np.int64) for _ in range(10)]

    def argv_for(i):
        return (*arrays, i, 1, 2, 3, 4, 5, 6, 7, 8, 9, True, False, True, False, 10)

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
    print(f"{n} launches of an empty 25-argument kernel, host time per launch:")
    print(f"  Numba dispatcher          {numba_us:7.1f} us")
    print(f"  explorer Launcher         {launcher_us:7.1f} us")
    print(f"  cuLaunchKernel alone      {raw_us:7.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
