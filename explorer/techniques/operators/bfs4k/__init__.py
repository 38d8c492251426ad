"""BFS-4K's level operator (Busato & Bombieri, TPDS 2015, §5): its knobs (knobs.py), the
per-level policy and shared-memory layout (policy.py) and the level loop (levels.py), which the
bfs4k technique runs whole and direction-optimizing and load-balance in part."""
