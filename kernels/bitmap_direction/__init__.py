"""bitmap-direction's kernels: direction-optimizing BFS on bitmaps, the whole search in one
cooperative launch (explorer/techniques/bitmap_direction.py is the technique).

  layout.py   the argument groups (GraphArrays, SearchArrays, Params), count slots, the block
              state, the level log and the rule that chooses each level's direction
  device.py   one level's phases: top-down over the grid (edge-discover warps, heavy vertices'
              edges as one flat range), top-down in one block (the narrow levels), bottom-up on the
              bit-packed in-adjacency, frontier conversions, the level's bookkeeping
  kernel.py   the search kernel (`search_kernel(instrument)`) and its set-up kernels
"""
