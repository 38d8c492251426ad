"""Run a module as `python3 -m` would, printing at exit what Numba compiled in this process and how
long each took (Numba's compile events; nested compiles count inside their caller), so a cold
start's time can be split between loading, compiling and running:

    python3 -m benchmarks.tools.compile_log explorer run facebook_combined --technique bfs4k
"""
from __future__ import annotations

import atexit
import runpy
import sys
import time

from numba.core import event

MIN_S = 0.1  # shorter compiles are left out of the list (their sum is still printed)


class _Compiles(event.Listener):
    def __init__(self):
        self.done: list[tuple[float, float, str]] = []  # (start since launch, seconds, function)
        self.depth = 0

    def on_start(self, ev):
        self.depth += 1
        ev.data["_t0"], ev.data["_depth"] = time.perf_counter(), self.depth

    def on_end(self, ev):
        self.depth -= 1
        if ev.data.get("_depth") == 1:  # outermost only: a callee's time is inside its caller's
            f = getattr(ev.data["dispatcher"], "py_func", None)
            name = f"{f.__module__}.{f.__qualname__}" if f is not None else str(ev.data["dispatcher"])
            self.done.append((ev.data["_t0"] - T0, time.perf_counter() - ev.data["_t0"], name))


def _report(log: _Compiles) -> None:
    total = sum(s for _, s, _ in log.done)
    print(f"compile log: {len(log.done)} compiles in this process, {total:.2f} s in all", file=sys.stderr)
    for t, s, name in log.done:
        if s >= MIN_S:
            print(f"compile log: at {t:6.2f} s  {s:6.2f} s  {name}", file=sys.stderr)


T0 = time.perf_counter()


def main() -> None:
    log = _Compiles()
    event.register("numba:compile", log)
    atexit.register(_report, log)
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
