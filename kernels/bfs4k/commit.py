"""bfs4k_commit: after a single-block launch with the shared visited bitmap, its visit log into
dist and parent over all SMs."""
from numba import cuda

from ..args import QueuePair, Tree
from .args import SingleOut
from .layout import S_IN_A, S_LAST, S_LOGGED


@cuda.jit(cache=True)
def bfs4k_commit(tree: Tree, queues: QueuePair, out: SingleOut):
    """After a single-block launch with the shared bitmap: its visit log (vertex, parent, level;
    state[S_LOGGED] entries) into dist and parent, and the final frontier (the log's last
    state[S_FSIZE] entries) into the queue the next level reads. A grid-stride loop over all
    SMs: the scattered writes one SM would make one by one."""
    dist, parent = tree
    qa, qb = queues.qa, queues.qb
    visits, state = out.visits, out.state
    cap = visits.shape[0] // 3
    logged = state[S_LOGGED]
    last = state[S_LAST]
    dst = qa if state[S_IN_A] else qb
    i = cuda.grid(1)
    while i < logged:
        v = visits[i]
        dist[v] = visits[2 * cap + i]
        parent[v] = visits[cap + i]
        if i >= last:
            dst[i - last] = v
        i += cuda.gridsize(1)

