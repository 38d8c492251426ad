"""Registers, spills and shared memory of the BFS-4K kernels, without a GPU.

Compiles each kernel to PTX with Numba for a compute capability (default 9.0) and assembles it
with the CUDA toolkit's `ptxas -v` (needs a CUDA toolkit: CUDA_HOME or /usr/local/cuda; with
CUOBJDUMP=path/to/cuobjdump it also counts the SASS instructions). Spills
in the single-block kernel are what its level loop pays for on every level, so check this after
touching kernels/bfs4k/ or kernels/frontier_ops.py, for the static knobs you changed code for
(the default compiles no duplicate filter and no instrumentation):

    python3 -m benchmarks.tools.kernel_resources [--cc 9.0] [--dedup hash64] [--race] [--instrument]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def _ptxas() -> str:
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    if not path.exists():
        sys.exit(f"kernel_resources: no ptxas at {path}; set CUDA_HOME to a CUDA toolkit")
    return str(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 9.0 (H100/H200)")
    ap.add_argument("--single-block-threads", type=int, default=1024,
                    help="the single block's size (it sets that kernel's register budget)")
    ap.add_argument("--shared-visited", action="store_true", help="the single block with knob visited='shared'")
    ap.add_argument("--cluster", type=int, default=1, help="the single block's cluster form of this many blocks "
                    "(implies --shared-visited)")
    ap.add_argument("--dedup", choices=("none", "hash64", "warp-culling"), default="none",
                    help="the duplicate filter compiled in (knob dedup)")
    ap.add_argument("--race", action="store_true", help="the paper's racy claim (knob claim='race'; "
                    "not with --shared-visited or --cluster)")
    ap.add_argument("--instrument", action="store_true", help="with the duplicates' ground truth (instrument=True)")
    args = ap.parse_args(argv)
    cc = tuple(int(x) for x in args.cc.split("."))

    from types import SimpleNamespace

    from numba import cuda
    from numba.cuda import dispatcher

    # Device functions are compiled for the current device's compute capability; there is none.
    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
    from kernels import bfs4k
    ptxas = _ptxas()
    dedup = bfs4k.DEDUP_CODES[args.dedup]
    try:
        signatures = bfs4k.kernel_signatures(args.instrument, not args.race, dedup, args.single_block_threads,
                                             args.shared_visited or args.cluster > 1, args.cluster)
    except ValueError as e:
        sys.exit(f"kernel_resources: {e}")
    for name, kernel, sig, maxreg in signatures:
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, lineinfo=False)
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / f"{name}.ptx"
            src.write_text(ptx)
            cmd = [ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-v", "-o", str(Path(tmp) / "out.cubin"), str(src)]
            if maxreg:
                cmd.append(f"--maxrregcount={maxreg}")
            res = subprocess.run(cmd, capture_output=True, text=True)
            sass = ""
            if os.environ.get("CUOBJDUMP") and not res.returncode:
                dump = subprocess.run([os.environ["CUOBJDUMP"], "-sass", str(Path(tmp) / "out.cubin")],
                                      capture_output=True, text=True).stdout
                count = len(re.findall(r"/\*[0-9a-f]{4,}\*/", dump))
                sass = f"  SASS {count}"
        info = " ".join(res.stderr.split())
        if res.returncode:
            print(f"{name}: ptxas failed: {info}")
            return 1
        regs = re.search(r"Used (\d+) registers", info)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", info)
        stack = re.search(r"(\d+) bytes stack frame", info)
        smem = re.search(r"(\d+) bytes smem", info)
        print(f"{name:40s} registers {regs.group(1) if regs else '?':>3}  "
              f"stack {stack.group(1) if stack else '?':>5} B  "
              f"spill st/ld {spill.group(1) if spill else '?'}/{spill.group(2) if spill else '?'} B  "
              f"static smem {smem.group(1) if smem else '0'} B  "
              f"PTX lines {ptx.count(chr(10))}{sass}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
