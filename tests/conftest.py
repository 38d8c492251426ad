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


#: Run first: networkx's own suites in subprocesses, in two parts, the longest tests (about 2.5 and
#: 1 minutes of CPU under the simulator); with `-n 2` the other worker runs everything else meanwhile.
FIRST = ("tests/test_nx_backend.py::test_networkx_own_tests_pass_with_the_backend",)
#: Run last: JupyterLab in Chromium, whose timeouts should not race the heaviest tests for the CPU.
LAST = ("tests/test_browser.py::",)


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        node = item.nodeid
        return 0 if node.startswith(FIRST) else 2 if node.startswith(LAST) else 1

    items.sort(key=rank)  # stable: the order within each rank is kept
