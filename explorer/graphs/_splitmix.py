"""The SplitMix64 finalizer: a cheap bijection of 64-bit words with good avalanche, used for the
Kronecker generator's counter-based random draws and for the cache's checksum."""
import numba
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@numba.njit(cache=True)
def mix64(z):
    """splitmix64 finalizer (a bijection of uint64)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)
