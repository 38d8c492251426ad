"""Minimal kernels that bound what a level can cost: complete searches of the 2-D grid with no
statistics and no policy, each self-contained so that what it measures is plain to read.

  plain_single_block  one block runs every level in one launch (BFS-4K's single-block kernel, bare)
  plain_persistent    several SMs with a hand-made grid barrier a level
  plain_cluster       one thread-block cluster (compute capability 9.0+), a hardware barrier a level
  level_floor         what a level costs at best on one SM and on a cluster: barriers, loads, claims

Run each as `python3 -m benchmarks.yardsticks.NAME` (GPU only); tests/test_cluster.py and
tests/test_level_floor.py run their searches on small graphs under the simulator.
"""
