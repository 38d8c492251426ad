"""Thread-block clusters (compute capability 9.0, Hopper, and later): the hardware barrier of a
cluster's blocks and their distributed shared memory. Numba has neither: on the GPU these are
inline PTX; under the simulator the Python bodies of ``kernels.cudasim.cluster`` run, on the blocks
that ``kernels.cudasim.run_cluster`` runs side by side (one cluster at a time).

A kernel that uses them must be launched with a cluster dimension (``Launcher.cluster``); its
shared memory is then addressed by 32-bit shared-window addresses:

``cluster_rank()``                   this block's rank in its cluster (int32)
``cluster_sync()``                   every thread of the cluster's blocks arrives; writes before
                                     it (any block's shared memory, global memory) are seen after
                                     it. Collective: every thread of every block, uniformly.
``smem_addr(array, i)``              address of element i of a 1-D shared int32 or int64 array
                                     (uint32); ``+ 4 * k`` (``+ 8 * k``) moves k elements
``cluster_map(addr, rank)``          the same location in block ``rank`` of the cluster
``cluster_load(addr)``               the int32 there (never moved across a barrier)
``cluster_or(addr, bits)``           atomic OR into it; the old value (int32)
``cluster_add(addr, x)``             atomic add into it; the old value (int32)
``cluster_store(addr, x)``           write the int32 x there
``cluster_load64(addr)``, ``cluster_add64(addr, x)``   the same for an int64 there (8-byte aligned)
``counter_add(counter, at, x)``      atomic add of x to int64 counter ``at``, the old value: counter
                                     is a global (or shared) array, or the cluster address of an int64
                                     shared array (element ``at`` is 8 * at further on): one kernel's
                                     code counts into either, its type choosing at compile time
``counter_load(counter, at)``        counter ``at``'s value, either kind

Only shared memory laid out alike in every block (the same arrays, in the same order) maps
meaningfully between blocks: that is the case for one kernel's blocks.
"""

# The Python bodies are what the simulator runs (kernels.cudasim.cluster); on a GPU each name gets
# the inline-PTX overload below.
from .cudasim import simulator_enabled as _simulator_enabled
from .cudasim.cluster import (cluster_add, cluster_add64, cluster_load, cluster_load64, cluster_map, cluster_or,
                              cluster_rank, cluster_store, cluster_sync, counter_add, counter_load, smem_addr)

__all__ = ["cluster_add", "cluster_add64", "cluster_load", "cluster_load64", "cluster_map", "cluster_or",
           "cluster_rank", "cluster_store", "cluster_sync", "counter_add", "counter_load", "smem_addr"]

if not _simulator_enabled():
    from llvmlite import ir as _ir
    from numba import cuda as _cuda
    from numba import uint32 as _uint32
    from numba.cuda import cgutils as _cgutils
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic as _intrinsic
    from numba.cuda.extending import overload as _overload

    _I32 = _ir.IntType(32)

    def _asm(builder, ret, text, constraints, args, side_effect):
        fnty = _ir.FunctionType(ret, [a.type for a in args])
        return builder.call(_ir.InlineAsm(fnty, text, constraints, side_effect=side_effect), args)

    def _u32(builder, value):
        width = value.type.width
        if width > 32:
            return builder.trunc(value, _I32)
        return builder.zext(value, _I32) if width < 32 else value

    def _int_args(*args):
        return all(isinstance(a, _types.Integer) for a in args)

    @_intrinsic
    def _rank(typingctx):
        def codegen(context, builder, sig, args):
            return _asm(builder, _I32, "mov.u32 $0, %cluster_ctarank;", "=r", [], False)

        return _types.int32(), codegen

    @_intrinsic
    def _sync(typingctx):
        def codegen(context, builder, sig, args):
            # Release on arrival, acquire on wait: the barrier orders memory as well as threads.
            _asm(builder, _ir.VoidType(),
                 "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;",
                 "~{memory}", [], True)
            return context.get_dummy_value()

        return _types.void(), codegen

    @_intrinsic
    def _addr(typingctx, array, i):
        if not (isinstance(array, _types.Array) and array.ndim == 1 and array.dtype in (_types.int32, _types.int64)
                and _int_args(i)):
            return None

        def codegen(context, builder, sig, args):
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = _cgutils.get_item_pointer(context, builder, sig.args[0], arr, [args[1]], wraparound=False)
            generic = builder.ptrtoint(ptr, _ir.IntType(64))
            window = _asm(builder, _ir.IntType(64), "cvta.to.shared.u64 $0, $1;", "=l,l", [generic], False)
            return builder.trunc(window, _I32)

        return _types.uint32(array, i), codegen

    @_intrinsic
    def _map(typingctx, addr, rank):
        if not _int_args(addr, rank):
            return None

        def codegen(context, builder, sig, args):
            return _asm(builder, _I32, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r",
                        [_u32(builder, args[0]), _u32(builder, args[1])], False)

        return _types.uint32(addr, rank), codegen

    # A width's LLVM type, PTX register class and Numba type: the 32-bit forms and the 64-bit ones.
    _WIDTH = {32: (_I32, "r", _types.int32), 64: (_ir.IntType(64), "l", _types.int64)}

    def _loader(bits):
        """An intrinsic (addr) -> the int of `bits` bits at a distributed shared-memory address."""
        ir_type, reg, nb_type = _WIDTH[bits]

        @_intrinsic
        def load(typingctx, addr):
            if not _int_args(addr):
                return None

            def codegen(context, builder, sig, args):
                # side_effect and the clobber: a load after a barrier must stay after it.
                return _asm(builder, ir_type, f"ld.shared::cluster.u{bits} $0, [$1];", f"={reg},r,~{{memory}}",
                            [_u32(builder, args[0])], True)

            return nb_type(addr), codegen

        return load

    def _atomic(op, bits=32):
        """An intrinsic (addr, x) -> the old int of `bits` bits for the PTX atomic `op` on distributed
        shared memory."""
        ir_type, reg, nb_type = _WIDTH[bits]

        @_intrinsic
        def atom(typingctx, addr, x):
            if not _int_args(addr, x):
                return None

            def codegen(context, builder, sig, args):
                x = (_u32(builder, args[1]) if bits == 32
                     else context.cast(builder, args[1], sig.args[1], _types.int64))
                return _asm(builder, ir_type, f"atom.shared::cluster.{op} $0, [$1], $2;",
                            f"={reg},r,{reg},~{{memory}}", [_u32(builder, args[0]), x], True)

            return nb_type(addr, x), codegen

        return atom

    _load, _load64 = _loader(32), _loader(64)
    _or = _atomic("or.b32")
    _add = _atomic("add.u32")
    _add64 = _atomic("add.u64", 64)

    @_intrinsic
    def _store(typingctx, addr, x):
        if not _int_args(addr, x):
            return None

        def codegen(context, builder, sig, args):
            _asm(builder, _ir.VoidType(), "st.shared::cluster.u32 [$0], $1;", "r,r,~{memory}",
                 [_u32(builder, args[0]), _u32(builder, args[1])], True)
            return context.get_dummy_value()

        return _types.void(addr, x), codegen

    @_overload(cluster_rank, target="cuda")
    def _cluster_rank_cuda():
        return lambda: _rank()

    @_overload(cluster_sync, target="cuda")
    def _cluster_sync_cuda():
        return lambda: _sync()

    @_overload(smem_addr, target="cuda")
    def _smem_addr_cuda(array, i):
        return lambda array, i: _addr(array, i)

    @_overload(cluster_map, target="cuda")
    def _cluster_map_cuda(addr, rank):
        return lambda addr, rank: _map(addr, rank)

    @_overload(cluster_load, target="cuda")
    def _cluster_load_cuda(addr):
        return lambda addr: _load(addr)

    @_overload(cluster_or, target="cuda")
    def _cluster_or_cuda(addr, bits):
        return lambda addr, bits: _or(addr, bits)

    @_overload(cluster_add, target="cuda")
    def _cluster_add_cuda(addr, x):
        return lambda addr, x: _add(addr, x)

    @_overload(cluster_load64, target="cuda")
    def _cluster_load64_cuda(addr):
        return lambda addr: _load64(addr)

    @_overload(cluster_add64, target="cuda")
    def _cluster_add64_cuda(addr, x):
        return lambda addr, x: _add64(addr, x)

    @_overload(counter_add, target="cuda")
    def _counter_add_cuda(counter, at, x):
        if isinstance(counter, _types.Array):
            return lambda counter, at, x: _cuda.atomic.add(counter, at, x)
        if isinstance(counter, _types.Integer):
            return lambda counter, at, x: _add64(_uint32(counter) + _uint32(8 * at), x)
        return None

    @_overload(counter_load, target="cuda")
    def _counter_load_cuda(counter, at):
        if isinstance(counter, _types.Array):
            return lambda counter, at: counter[at]
        if isinstance(counter, _types.Integer):
            return lambda counter, at: _load64(_uint32(counter) + _uint32(8 * at))
        return None

    @_overload(cluster_store, target="cuda")
    def _cluster_store_cuda(addr, x):
        return lambda addr, x: _store(addr, x)
