"""luo-hierarchical (Luo, Wong & Hwu, DAC 2010): what the conformance suite does not see - which
layer of §3.3 runs each level and the switches between them both ways, the grid's size, a launch
that runs out of log rows, W-queues that fill up mid-level, the records of a multi-level launch,
and the device checks."""
import numpy as np
import pytest

from explorer import backend, graphs
from explorer.engine.runtime import DeviceLimits
from explorer.knobs import KnobError
from explorer.stats import Kernel
from explorer.techniques import luo as tech
from kernels import cudasim
from kernels import luo as k
from tests._support import checked_run

SIM = backend.current().is_simulator
LUO = "luo-hierarchical"


def diamond(side: int):
    """A side x side grid searched from a corner: the frontier grows by one a level to `side`, then
    shrinks back to one."""
    return graphs.generate("grid2d", rows=side, cols=side)


def star(leaves: int):
    return graphs.from_edges(np.zeros(leaves, np.int64), np.arange(1, leaves + 1), directed=False,
                             name=f"star{leaves}")


def _knobs(**kw):
    return {"block_threads": 32, **kw}


def test_layers_switch_both_ways_as_the_frontier_grows_and_shrinks():
    g = diamond(6)  # frontiers 1 2 3 4 5 6 5 4 3 2 1
    r = checked_run(g, 0, LUO, _knobs(block_threshold=2, grid_threshold=5))
    sizes = [lv.frontier_in for lv in r.levels]
    assert sizes == [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1]
    layers = [lv.layer for lv in r.levels]
    assert layers == ["block"] * 2 + ["grid"] * 3 + ["per-level"] + ["grid"] * 3 + ["block"] * 2
    assert layers == [k.LAYER_NAMES[k.layer_for(s, 2, 5)] for s in sizes]  # the host's rule is the kernels'
    kinds = {lv.layer: lv.kernel for lv in r.levels}
    assert kinds == {"block": Kernel.SINGLE_BLOCK, "grid": Kernel.MULTI_BLOCK, "per-level": Kernel.MULTI_BLOCK}
    # One launch a layer run: its first level counts it, the levels it ran after that count none.
    assert [lv.launches for lv in r.levels] == [1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0]
    grid_blocks = DeviceLimits.simulator().sm_count if SIM else None
    for lv in r.levels:
        if lv.layer == "block":
            assert lv.blocks == 1
        elif lv.layer == "per-level":
            assert lv.blocks == -(-lv.frontier_in // 32)  # a thread per frontier vertex
        elif grid_blocks is not None:
            assert lv.blocks == grid_blocks  # one block per SM (the knob's default)
        assert lv.edges_examined == int(g.degrees()[r.distances == lv.level].sum())
        assert lv.dup_generated == lv.dup_detected == lv.dup_undetected == 0


def test_default_grid_threshold_is_the_grids_threads():
    # 0 = a thread per frontier vertex of the grid: one block of 32 threads per SM here.
    sms = (DeviceLimits.simulator() if SIM else DeviceLimits.from_current_device()).sm_count
    r = checked_run(star(32 * sms + 16), 0, LUO, _knobs(block_threshold=0))
    assert [lv.layer for lv in r.levels] == ["grid", "per-level"]
    r = checked_run(star(32 * sms - 4), 0, LUO, _knobs(block_threshold=0))
    assert [lv.layer for lv in r.levels] == ["grid", "grid"]


@pytest.mark.skipif(not SIM, reason="the cap is the simulator's grid_threads")
def test_grid_capped_at_the_blocks_that_fit_at_once():
    with cudasim.settings(grid_threads=64):
        r = checked_run(diamond(5), 0, LUO, _knobs(block_threshold=0, grid_threshold=1 << 20, grid_blocks_per_sm=8))
    assert {lv.layer for lv in r.levels} == {"grid"}
    assert {lv.blocks for lv in r.levels} == {2}  # 2 SMs x 8 wanted, 64 // 32 fit
    r = checked_run(diamond(5), 0, LUO, _knobs(block_threshold=0, grid_threshold=1 << 20, grid_blocks_per_sm=3))
    assert {lv.blocks for lv in r.levels} == {6}


@pytest.mark.parametrize("knobs", [_knobs(block_threshold=1 << 13, grid_threshold=1 << 20),
                                   _knobs(block_threshold=0, grid_threshold=1 << 20)], ids=["block", "grid"])
def test_a_launch_out_of_log_rows_is_continued_by_the_next(monkeypatch, knobs):
    monkeypatch.setattr(tech, "MAX_LOG", 3)
    r = checked_run(graphs.from_edges(np.arange(7), np.arange(1, 8), directed=False, name="path8"), 0, LUO, knobs)
    assert len({lv.layer for lv in r.levels}) == 1
    assert [lv.launches for lv in r.levels] == [1, 0, 0, 1, 0, 0, 1, 0]


def hub_behind(leaves: int):
    """0 - 1, 0 - 2, and 1 a hub of `leaves` leaves: from 0 the hub is in a frontier of two."""
    src = np.r_[0, 0, np.ones(leaves, np.int64)]
    dst = np.r_[1, 2, np.arange(3, leaves + 3)]
    return graphs.from_edges(src, dst, directed=False, name=f"hub{leaves}-behind")


@pytest.mark.parametrize("knobs,layers", [
    (_knobs(block_threshold=1024), ["block"] * 3),  # the W-queue flushes into the block's next frontier
    (_knobs(block_threshold=100, grid_threshold=1 << 20), ["block", "block", "grid"]),  # past it: spilled
    (_knobs(block_threshold=0, grid_threshold=1 << 20), ["grid"] * 3),
    (_knobs(block_threshold=0, grid_threshold=1), ["grid", "per-level", "per-level"]),
], ids=["block", "block-spills", "grid", "per-level"])
def test_a_hub_overflows_its_warps_w_queue(knobs, layers):
    leaves = k.WQ_ENTRIES + 44  # one lane's claims fill its warp's W-queue, which is flushed mid-level
    r = checked_run(hub_behind(leaves), 0, LUO, knobs)
    assert [lv.layer for lv in r.levels] == layers
    assert [lv.frontier_in for lv in r.levels] == [1, 2, leaves]


def test_uninstrumented_runs_do_not_report_edges():
    r = checked_run(diamond(4), 0, LUO, _knobs(block_threshold=2, grid_threshold=3), instrument=False)
    assert {lv.edges_examined for lv in r.levels} == {None}
    assert [lv.frontier_in for lv in r.levels] == [1, 2, 3, 4, 3, 2, 1]


def test_shared_memory_is_checked_before_anything_runs():
    impl = tech.LuoHierarchical()
    small = DeviceLimits(name="small", sm_count=2, max_threads_per_sm=2048, shared_per_block=48 * 1024)
    g = diamond(3)
    impl.check(g, tech.LuoKnobs(block_threads=512, block_threshold=4096), small)  # 16 + 32 KB fit
    with pytest.raises(KnobError, match=r"block_threshold=8192 with block_threads=1024 needs 98,304 bytes.*49,152"):
        impl.check(g, tech.LuoKnobs(block_threads=1024, block_threshold=8192), small)
    with pytest.raises(KnobError, match="block_threads=1024 exceeds this GPU's 512 threads per block"):
        impl.check(g, tech.LuoKnobs(block_threads=1024),
                   DeviceLimits(name="old", sm_count=2, max_threads_per_sm=1024, max_threads_per_block=512))
    with pytest.raises(KnobError, match=r"grid_blocks_per_sm=9 is out of range"):
        tech.LuoKnobs(grid_blocks_per_sm=9)


def test_layer_rule():
    assert [k.layer_for(s, 4, 10) for s in (0, 4, 5, 10, 11)] == [k.BLOCK, k.BLOCK, k.GRID, k.GRID, k.PER_LEVEL]
    assert k.shared_bytes(64) == 4 * 2 * k.WQ_ENTRIES
    assert k.shared_bytes(64, 100) == 4 * (2 * k.WQ_ENTRIES + 200)


@pytest.mark.skipif(SIM, reason="Numba's compiled overloads exist on a GPU only")
def test_grid_kernel_is_compiled_for_a_cooperative_launch():
    g = diamond(4)
    r = checked_run(g, 0, LUO, {"block_threshold": 0, "grid_threshold": 1 << 20})  # compiles every layer
    assert {lv.layer for lv in r.levels} == {"grid"}
    grid = [ov for ov in k.luo_grid.overloads.values()]
    assert grid and all(ov.cooperative for ov in grid)  # linked with cudadevrt, launched cooperatively
    assert not any(ov.cooperative for ov in k.luo_block.overloads.values())
    assert not any(ov.cooperative for ov in k.luo_level.overloads.values())


def test_a_block_size_with_no_room_for_the_grid_kernel_is_refused(monkeypatch):
    from kernels import common

    monkeypatch.setattr(common, "coresident_blocks", lambda *args: 0)
    with pytest.raises(KnobError, match="block_threads=32: no block of the grid-synchronised kernel fits on an SM"):
        checked_run(diamond(3), 0, LUO, _knobs())
