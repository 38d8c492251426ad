"""The environment record and the one writer of results.

Results are kept as one current set per GPU kind: `write_results(out, "table", ...)` writes
OUT/<GPU kind>/table.json (the environment, the settings, every row) and table.md (the same as
tables), e.g. benchmarks/results/NVIDIA_H100_80GB_HBM3/table.md. A new run of the same benchmark
on the same kind of GPU replaces them; older numbers live in git history.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"

#: The fields every environment record has (tests/test_bench_harness.py checks them).
FIELDS = ("backend", "gpu", "compute_capability", "gpu_memory", "driver", "cuda", "python", "numpy", "numba",
          "numba_cuda", "cpu", "cpu_cores", "host", "date")


def _nvidia_smi() -> dict:
    """GPU name, driver version and memory from nvidia-smi ({} where there is none)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    parts = [p.strip() for p in out[0].split(",")] if out else []
    return dict(zip(("name", "driver", "memory"), parts)) if len(parts) == 3 else {}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def environment() -> dict:
    """Where the numbers come from: the GPU (name, compute capability, memory), the NVIDIA driver,
    the CUDA version the driver provides, Python, numpy, numba and numba-cuda, the CPU, the host
    and the date (UTC). Under the simulator the GPU fields say so."""
    from explorer import backend

    info = backend.current()
    smi = _nvidia_smi() if not info.is_simulator else {}
    v = info.versions
    return {
        "backend": info.kind,
        "gpu": info.device_name,
        "compute_capability": info.compute_capability or None,
        "gpu_memory": smi.get("memory"),
        "driver": smi.get("driver"),
        "cuda": info.driver or None,  # the CUDA version of the driver's API (cuDriverGetVersion)
        "python": v.get("python", platform.python_version()),
        "numpy": v.get("numpy"),
        "numba": v.get("numba"),
        "numba_cuda": v.get("numba-cuda"),
        "cpu": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "host": platform.node(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def describe(env: dict) -> str:
    """One line: 'NVIDIA H100 80GB HBM3 (compute 9.0, 81559 MiB), driver 580.159.04, CUDA 13.0, ...'."""
    gpu = env["gpu"] + (f" (compute {env['compute_capability']}, {env['gpu_memory']})" if env.get("gpu_memory") else "")
    return (f"{gpu}, driver {env.get('driver') or '-'}, CUDA {env.get('cuda') or '-'}, Python {env['python']}, "
            f"numpy {env['numpy']}, numba {env['numba']}, numba-cuda {env['numba_cuda']}; "
            f"{env['cpu_cores']} CPU cores ({env['cpu']}); {env['date']}")


def gpu_kind(env: dict) -> str:
    """The results folder of a GPU kind: its name in letters, digits, '.', '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", env["gpu"]).strip("_") or "unknown_GPU"


def markdown_table(headers: list[str], rows: list[list], right: set[int] | None = None) -> list[str]:
    """A Markdown table; columns in `right` (by index) right-aligned (numbers)."""
    right = right or set()
    cell = lambda x: "" if x is None else str(x).replace("|", "\\|")  # noqa: E731
    return ["| " + " | ".join(headers) + " |",
            "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|",
            *["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]]


def write_results(out: Path | str | None, name: str, env: dict, settings: dict, rows: list[dict],
                  markdown: list[str], title: str) -> tuple[Path, Path] | None:
    """OUT/<GPU kind>/NAME.json ({"environment", "settings", "results": rows}) and NAME.md (title,
    environment, then `markdown`). None, and nothing written, for simulator runs into the default
    folder: their times are not results."""
    if out is None:
        out = RESULTS
    out = Path(out)
    if env["backend"] == "simulator" and out.resolve() == RESULTS.resolve():
        print(f"{name}: simulator times are not results; nothing written to {RESULTS} (give --out to keep them)")
        return None
    folder = out / gpu_kind(env)
    folder.mkdir(parents=True, exist_ok=True)
    js, md = folder / f"{name}.json", folder / f"{name}.md"
    js.write_text(json.dumps({"environment": env, "settings": settings, "results": rows}, indent=1,
                             default=str) + "\n")
    md.write_text("\n".join([f"# {title}", "", describe(env), "", *markdown]).rstrip() + "\n")
    print(f"wrote {js} and {md.name}")
    return js, md
