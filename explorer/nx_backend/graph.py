"""The backend's graph type: a networkx graph converted once to the explorer's CSR.

Node labels of any hashable type are numbered 0..n-1 in the networkx graph's node order, and each
vertex's CSR row lists its neighbours in the networkx graph's adjacency order (`G._adj[u]`), so
that the host can put the GPU's distances into the exact order networkx's generators use. A
directed graph also keeps the in-arcs in `G._pred` order (ancestors, single-target lengths,
closeness, `bfs_edges(reverse=True)`). Self loops are kept (bfs_labeled_edges reports them); a
multigraph's parallel edges are one arc, as networkx's BFS sees them. The weighted functions'
edge attributes (networkx names them in the conversion) are kept per arc, a multigraph's parallel
edges weighing their least, as networkx's weight functions read them.
"""
from __future__ import annotations

import hashlib
from itertools import chain

import networkx as nx
import numpy as np

from ..graphs import CSRGraph


def _weights_of(adj, labels: list, attr, default, multigraph: bool, m: int) -> np.ndarray:
    """Each arc's weight in _csr_of's order: the edge attribute `attr` (`default` where an edge has
    none, as networkx's weight functions read it), the least over a multigraph's parallel edges."""
    def value(d):
        if multigraph:
            return min(e.get(attr, default) for e in d.values())
        return d.get(attr, default)

    out = np.empty(m, dtype=np.float64)
    k = 0
    for x in labels:
        for y, d in adj[x].items():
            w = value(d)
            try:
                out[k] = w
            except (TypeError, ValueError):
                raise TypeError(f"edge ({x!r}, {y!r}) has {attr}={w!r}: a weight must be a number") from None
            k += 1
    return out


def _csr_of(adj, labels: list, index: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, indices) of an adjacency mapping (networkx's G._adj or G._pred), row i the
    neighbours of labels[i] in the mapping's order; index maps labels to ids (None when the labels
    are 0..n-1 in order)."""
    n = len(labels)
    rows = [adj[x] for x in labels]
    degrees = np.fromiter(map(len, rows), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degrees, out=offsets[1:])
    m = int(offsets[-1])
    flat = chain.from_iterable(rows)  # iterating a neighbour dict yields its keys
    if index is not None:
        flat = map(index.__getitem__, flat)
    return offsets, np.fromiter(flat, dtype=np.int32, count=m)


class BFS4KGraph:
    """A networkx graph as the bfs4k backend holds it (see the module's docstring).

    labels[i] is vertex i's node; `csr` (out-arcs, or both ways for an undirected graph) and
    `rcsr` (in-arcs; the same object when undirected) are explorer CSRGraphs; `fingerprint`
    identifies the structure (directedness and arcs in order, not the labels), the key under which
    search results are kept (searches.ResultStore).
    """

    __networkx_backend__ = "bfs4k"

    def __init__(self, labels: list, csr: CSRGraph, rcsr: CSRGraph, *, multigraph: bool = False,
                 graph_attrs: dict | None = None, index: dict | None = None, weights: dict | None = None):
        self.labels = labels
        #: edge attribute -> (weights of csr's arcs, of rcsr's arcs), for the weighted functions
        self.weights = dict(weights or {})
        self._weighted: dict = {}
        self.csr = csr
        self.rcsr = rcsr
        self.multigraph = bool(multigraph)
        self.graph = dict(graph_attrs or {})
        self._dense = index is None  # the labels are 0..n-1 in order
        self._index = index
        self._label_array = None
        self._sessions: dict = {}
        h = hashlib.blake2b(digest_size=16)
        h.update(b"directed" if csr.directed else b"undirected")
        h.update(np.int64(len(labels)).tobytes())
        h.update(np.ascontiguousarray(csr.offsets).tobytes())
        h.update(np.ascontiguousarray(csr.indices).tobytes())
        if rcsr is not csr:
            h.update(np.ascontiguousarray(rcsr.indices).tobytes())
        self.fingerprint = h.hexdigest()

    # ------------------------------------------------------------------ conversion
    @classmethod
    def from_networkx(cls, G, name: str | None = None, edge_attrs: dict | None = None) -> "BFS4KGraph":
        """edge_attrs: {attribute: default} (networkx's conversion request) whose values the
        weighted functions read, per arc in the CSR's order (a multigraph: the least)."""
        labels = list(G)
        dense = all(type(x) is int and x == i for i, x in enumerate(labels))
        index = None if dense else {x: i for i, x in enumerate(labels)}
        directed = G.is_directed()
        title = name or (str(G.name) if getattr(G, "name", "") else "networkx")
        off, ind = _csr_of(G._adj, labels, index)
        csr = CSRGraph(off, ind, directed, title, notes={"source": "networkx (bfs4k backend)"})
        rcsr = csr
        if directed:
            roff, rind = _csr_of(G._pred, labels, index)
            rcsr = CSRGraph(roff, rind, True, f"{title} (reversed)",
                            notes={"source": "networkx (bfs4k backend), in-arcs"})
        weights = {}
        for attr, default in (edge_attrs or {}).items():
            out = _weights_of(G._adj, labels, attr, default, G.is_multigraph(), csr.num_arcs)
            weights[attr] = (out, _weights_of(G._pred, labels, attr, default, G.is_multigraph(), rcsr.num_arcs)
                             if directed else out)
        return cls(labels, csr, rcsr, multigraph=G.is_multigraph(), graph_attrs=G.graph, index=index,
                   weights=weights)

    def to_networkx(self):
        """The networkx graph of the same nodes (in order) and arcs; attributes are not kept."""
        cls = {(False, False): nx.Graph, (True, False): nx.DiGraph, (False, True): nx.MultiGraph,
               (True, True): nx.MultiDiGraph}[(self.is_directed(), self.multigraph)]
        G = cls()
        G.graph.update(self.graph)
        G.add_nodes_from(self.labels)
        lab = self.label_array
        src = np.repeat(np.arange(len(self.labels)), np.diff(self.csr.offsets))
        pairs = zip(lab[src].tolist(), lab[self.csr.indices].tolist())
        if not self.is_directed():
            pairs = ((u, v) for (u, v), a, b in zip(pairs, src, self.csr.indices) if a <= b)
        G.add_edges_from(pairs)
        return G

    # ------------------------------------------------------------------ labels
    @property
    def label_array(self) -> np.ndarray:
        """labels as an object array, for gathering many at once (tuples stay whole)."""
        if self._label_array is None:
            self._label_array = np.fromiter(self.labels, dtype=object, count=len(self.labels))
        return self._label_array

    @property
    def index(self) -> dict:
        """node -> vertex id (built on first use when the nodes are 0..n-1)."""
        if self._index is None:
            self._index = {x: i for i, x in enumerate(self.labels)}
        return self._index

    def id_of(self, label) -> int:
        """The vertex id of a node: KeyError when absent, TypeError when unhashable (the lookup
        is a dict's, as networkx's: 1.0 and True find node 1)."""
        if self._dense and type(label) is int:
            if 0 <= label < len(self.labels):
                return label
            raise KeyError(label)
        return self.index[label]

    def names(self, ids) -> list:
        """The nodes of an int array of vertex ids, in its order."""
        ids = np.asarray(ids)
        if self._dense:
            return ids.tolist()
        return self.label_array[ids].tolist()

    # ------------------------------------------------------------------ networkx's graph protocol
    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self):
        return iter(self.labels)

    def __contains__(self, node) -> bool:
        try:
            self.id_of(node)
            return True
        except (KeyError, TypeError):  # TypeError: unhashable, as networkx's `node in G`
            return False

    def is_directed(self) -> bool:
        return self.csr.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    @property
    def num_arcs(self) -> int:
        return self.csr.num_arcs

    def nbunch_iter(self, nbunch=None):
        """networkx's Graph.nbunch_iter: every node, one node, or the nodes of an iterable that are
        in the graph (others skipped), with its errors."""
        if nbunch is None:
            return iter(self.labels)
        if nbunch in self:
            return iter([nbunch])

        index = self.index

        def bunch_iter(nlist):
            try:
                for x in nlist:
                    if x in index:  # raises TypeError for an unhashable x, as networkx's
                        yield x
            except TypeError as err:
                exc, message = err, err.args[0]
                if "iter" in message:
                    exc = nx.NetworkXError("nbunch is not a node or a sequence of nodes.")
                if "object is not iterable" in message:
                    exc = nx.NetworkXError(f"Node {nbunch} is not in the graph.")
                if "hashable" in message:
                    exc = nx.NetworkXError(f"Node {x} in sequence nbunch is not a valid node.")
                raise exc from err

        return bunch_iter(nbunch)

    def weighted(self, attr, reverse: bool = False) -> CSRGraph:
        """The out-arc (in-arc with reverse) CSR with the weights of edge attribute `attr` (None: unit
        weights, every arc 1), kept for later calls."""
        key = (attr, reverse)
        g = self._weighted.get(key)
        if g is None:
            base = self.rcsr if reverse else self.csr
            if attr is None:
                w = np.ones(base.num_arcs)
            elif attr in self.weights:
                w = self.weights[attr][1 if reverse else 0]
            else:
                raise ValueError(f"this bfs4k graph was converted without edge attribute {attr!r}: let networkx "
                                 "convert the networkx graph in the call (it asks for the attribute)")
            g = self._weighted[key] = CSRGraph(base.offsets, base.indices, base.directed, base.name,
                                               notes=base.notes, weights=w)
        return g

    def weights_digest(self, attr, reverse: bool = False) -> str:
        """A digest of the weights `weighted(attr, reverse)` carries: kept results are keyed by it
        (networkx's test mode converts on every call, and weights change in place)."""
        key = ("digest", attr, reverse)
        d = self._weighted.get(key)
        if d is None:
            w = self.weighted(attr, reverse).weights
            h = hashlib.blake2b(w.dtype.str.encode(), digest_size=16)
            h.update(np.ascontiguousarray(w).tobytes())
            d = self._weighted[key] = h.hexdigest()
        return d

    def sessions(self, reverse: bool):
        """The explorer Session (device arrays, buffers) of the out- or in-arc CSR, opened once."""
        from ..engine import Session

        csr = self.rcsr if reverse else self.csr
        s = self._sessions.get(id(csr))
        if s is None:
            s = self._sessions[id(csr)] = Session(csr)
        return s

    def close(self) -> None:
        """Free the device arrays this graph holds (later calls copy them again)."""
        for s in self._sessions.values():
            s.close()
        self._sessions.clear()

    def __repr__(self) -> str:
        kind = "directed" if self.is_directed() else "undirected"
        return f"BFS4KGraph({kind}, {len(self.labels):,} nodes, {self.csr.num_arcs:,} arcs)"
