"""bitmap-direction's kernels: direction-optimizing BFS on bitmaps, the whole search in one launch
(explorer/techniques/bitmap_direction.py is the technique).

  layout.py   the argument groups (GraphArrays, SearchArrays, Params), count slots, the block
              state, the level log and the rule that chooses each level's direction
  device.py   one level's phases: top-down (edge-discover warps, heavy vertices' edges as one flat
              range), bottom-up on the bit-packed in-adjacency, frontier conversions, the counts,
              the level's bookkeeping; over the grid or over one block
  block.py    the block levels: levels run by one block (narrow levels in block 0 of the grid, a
              small graph's whole search), its state in shared memory
  kernel.py   the grid's search kernel (`search_kernel`), the one block's (`block_kernel`) and the
              set-up kernels
"""
