"""Device side of the explorer: Numba CUDA kernels and device functions only.

Nothing in this package imports `explorer`, and importing it changes nothing. Under Numba's CUDA
simulator the warp intrinsics, clusters and grid barrier the kernels use come from
`kernels.cudasim`, which `explorer.backend` installs when it selects the simulator (code that
runs the simulator without `explorer` calls `kernels.cudasim.install()` itself).
"""
