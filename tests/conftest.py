"""Test session set-up: choose where kernels run before any test module imports numba.cuda.

A real GPU is used when one is present; otherwise the tests run every kernel under Numba's CUDA
simulator (with kernels.sim's warp intrinsics), and the report header says so.
"""
import os

from explorer import backend

if not backend.simulator_requested() and not backend.gpu_present()[0]:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
BACKEND = backend.select("auto")
os.environ.setdefault("BFS4K_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".cache", "bfs4k-tests"))


def pytest_report_header(config):
    return f"kernels run on: {BACKEND.describe()}"
