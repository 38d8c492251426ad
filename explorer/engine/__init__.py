"""The engine: the enactor (the one step loop of single-source and multi-search runs), sessions
(a graph's device arrays and buffers) and runtimes (GPU, simulator, CPU). `explorer.api.run_bfs`
and `run_many` are the entry points."""
from .enactor import BFSRun, Enactor, level_shares  # noqa: F401
from .runtime import DeviceLimits  # noqa: F401
from .session import Session  # noqa: F401
