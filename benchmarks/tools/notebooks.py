"""Every notebook top to bottom on this machine's GPU (what tests/test_notebook.py does under the
simulator), headless through nbclient.

    python3 -m benchmarks.tools.notebooks --out OUTDIR [NOTEBOOK ...]

The notebooks pick the GPU themselves (backend.select("auto")) and then their GPU graphs: the
tuning notebook sweeps K1-K7 on Kronecker scale 18, the duplicate analysis runs Kronecker 16 and
delaunay_n16, the quickstart and the classroom their teaching graphs. NUMBA_ENABLE_CUDASIM is
removed from the kernel's environment. Each executed notebook is written to OUTDIR with its
outputs; OUTDIR/notebooks.json says, per notebook, whether it ran without an error output, its wall
time, the device its first cell reported and its first error. Exit status 1 if any failed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def run_one(path: Path, out: Path, timeout: int) -> dict:
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(out)}})
    t0 = time.perf_counter()
    error = None
    try:
        client.execute()
    except Exception as exc:  # CellExecutionError and timeouts: record, keep the partial outputs
        error = f"{type(exc).__name__}: {str(exc)[-2000:]}"
    wall = time.perf_counter() - t0
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.output_type == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    device = next((line for line in text.splitlines() if line.startswith("Kernels run on")), None)
    nbformat.write(nb, out / path.name)
    return {"notebook": path.name, "ok": error is None and not errors, "wall_s": round(wall, 1),
            "device": device, "error": error or (errors[0] if errors else None),
            "simulator_mentioned": "simulator" in text.lower()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--timeout", type=int, default=300, help="seconds a cell may take")
    args = ap.parse_args(argv)
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)  # the kernels inherit the environment
    args.out.mkdir(parents=True, exist_ok=True)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    rows = []
    for path in paths:
        row = run_one(path.resolve(), args.out, args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
        (args.out / "notebooks.json").write_text(json.dumps(rows, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
