"""The layout search that runs (``layout.search``: plain numbers, layouts that cannot win skipped)
gives exactly the answer of brute force (``perf.grid.search_grid``: every layout evaluated as NumPy
arrays), over presets, cluster sizes, contexts, fixed fields and memory limits, including clusters
where nothing fits. The reference is the brute force: the least step time among the layouts that fit,
then the least memory, then the first layout; none fitting, the least memory one."""
from __future__ import annotations

import math

import pytest

from depthwidth.arch.hardware import accelerator
from depthwidth.arch.presets import preset
from depthwidth.cost.perf import grid as G
from depthwidth.cost.perf import layout as L
from depthwidth.core.num import Scalars, lib

SHAPES = [("vanilla", 20, 2048), ("vanilla", 6, 512), ("gpt2", 48, 1600), ("llama", 32, 4096), ("llama", 80, 8192),
          ("mistral", 24, 3072), ("qwen2", 28, 1536), ("gemma", 18, 2048), ("mixtral", 16, 2048), ("deepseek", 12, 1120)]
CLUSTERS = [("h100", 8), ("h100", 64), ("a100-40gb", 24), ("mi300x", 16), ("h100", 512), ("tpu-v5p", 12)]


def _same(fast, slow):
    assert (fast is None) == (slow is None)
    if fast is None:
        return
    assert fast[0] == slow[0]  # the chosen layout, fits flag included
    assert fast[2] == pytest.approx(slow[2], rel=1e-12)  # its memory
    assert fast[3:] == slow[3:]  # layouts tried, layouts that fit
    assert fast[1].keys() == slow[1].keys()
    for k in fast[1]:
        assert fast[1][k] == pytest.approx(slow[1][k], rel=1e-12), k


@pytest.mark.parametrize("family,depth,width", SHAPES)
@pytest.mark.parametrize("gpu,gpus", CLUSTERS)
def test_search_equals_brute_force(family, depth, width, gpu, gpus):
    arch = preset(family).architecture(depth, width)
    hw = accelerator(gpu)
    batch = L.default_global_batch(1e9, 4096)
    _same(L.search(arch, hw, gpus, 4096, batch), G.search_grid(arch, hw, gpus, 4096, batch))


@pytest.mark.parametrize("fixed", [{"tp": 2}, {"pp": 4}, {"zero": 1}, {"zero": 0}, {"recompute": "full"},
                                   {"micro_batch": 2, "recompute": "selective"}, {"tp": 4, "pp": 2, "interleave": 2}])
def test_search_equals_brute_force_with_fixed_fields(fixed):
    arch = preset("llama").architecture(32, 4096)
    hw = accelerator("h100")
    _same(L.search(arch, hw, 64, 4096, 512, fixed), G.search_grid(arch, hw, 64, 4096, 512, fixed))


@pytest.mark.parametrize("limit", [1e9, 8e9, 30e9, math.inf])
def test_search_equals_brute_force_at_memory_limits(limit):
    """Tight limits leave few layouts (or none: then the least memory one, fits False)."""
    arch = preset("vanilla").architecture(40, 5120)
    hw = accelerator("a100-80gb")
    fast = L.search(arch, hw, 32, 2048, 1024, memory_limit=limit, attention="unfused")
    _same(fast, G.search_grid(arch, hw, 32, 2048, 1024, memory_limit=limit, attention="unfused"))
    if limit == 1e9:
        assert fast[0]["fits"] is False and fast[4] == 0


def test_long_context_searches_context_parallelism_alike():
    arch = preset("llama").architecture(32, 4096, context=131072)
    hw = accelerator("h100")
    _same(L.search(arch, hw, 128, 131072, 16), G.search_grid(arch, hw, 128, 131072, 16))


def test_no_layout_divides_the_gpus():
    arch = preset("llama").architecture(32, 4096)
    hw = accelerator("h100")
    assert L.search(arch, hw, 6, 4096, 64, {"tp": 4}) is None
    assert G.search_grid(arch, hw, 6, 4096, 64, {"tp": 4}) is None


def test_scalars_round_like_numpy():
    """The plain-number stand-ins give NumPy's float64 results (so both searches agree bit for bit)."""
    np = pytest.importorskip("numpy")
    assert lib(1, 2.0, True) is Scalars and lib(1, np.ones(2)) is np
    for x, y in [(3.7, 2.0), (1e-300, 5e-301), (7.0, 7.0), (-2.5, 0.0)]:
        assert Scalars.maximum(x, y) == float(np.maximum(x, y))
        assert Scalars.ceil(x) == float(np.ceil(x))
        assert Scalars.where(x > y, x, y) == float(np.where(x > y, x, y))
        assert Scalars.power(abs(x) + 1, 0.3) == float(np.power(abs(x) + 1, 0.3))
    assert Scalars.select([False, True, True], [1.0, 2.0, 3.0]) == float(np.select([False, True, True], [1.0, 2.0, 3.0]))


def test_shapes_of_one_width_share_layer_costs_without_changing_answers():
    """The search memoizes a layer's costs per width (they do not depend on depth): searching depths
    one after the other gives each depth brute force's answer, for a dense block and for a mixture
    of experts (whose dense layers' share of the depth enters the layer)."""
    hw = accelerator("h100")
    for family, width in (("llama", 2048), ("mixtral", 2048)):
        for depth in (8, 24, 9, 40, 16):
            arch = preset(family).architecture(depth, width)
            _same(L.search(arch, hw, 16, 4096, 256), G.search_grid(arch, hw, 16, 4096, 256))


@pytest.mark.parametrize("family,depth,width", SHAPES[:5])
def test_search_without_counting_gives_the_same_layout(family, depth, width):
    """A plan's candidates skip counting the layouts that fit (``count=False``): the answer is the
    brute force's, with the count null."""
    arch = preset(family).architecture(depth, width)
    hw = accelerator("h100")
    fast, slow = L.search(arch, hw, 64, 4096, 256, count=False), G.search_grid(arch, hw, 64, 4096, 256)
    assert fast[4] is None
    _same(fast[:4] + (slow[4],), slow)


@pytest.mark.parametrize("family,depth,width", [SHAPES[0], SHAPES[3], SHAPES[8]])
@pytest.mark.parametrize("gpu,gpus,overlap", [("h100", 64, True), ("a100-40gb", 24, False), ("h100", 512, True)])
def test_the_step_bound_is_below_every_step_it_may_skip(family, depth, width, gpu, gpus, overlap):
    """A layout the search skips by its bound could not have won: ``_step_bound`` (the pipeline sends,
    full recomputation's extra forward, ZeRO-3's gathers that nothing hides) is at most the step
    ``train_step`` times, for every layout, recomputation and ZeRO stage, with and without overlap."""
    from depthwidth.cost.perf.step import Layout, train_step

    arch, hw, context = preset(family).architecture(depth, width), accelerator(gpu), 4096
    batch = L.default_global_batch(1e9, context)
    rows = L.combinations(arch, hw, gpus, context, batch, {})
    tables = L._tables(arch, hw, context, {}, None, overlap, {})
    _, stages = L._ordered(tables, rows, batch)
    checked = 0
    for row in rows[::3]:
        terms = L._row_terms(tables, stages, row)
        tp, cp, pp, dp, v, mb = row
        for recompute in (0, 1, 2):
            for zero in (0, 1, 2, 3):
                layout = Layout(tp=tp, cp=cp, pp=pp, dp=dp, interleave=v, micro_batch=mb, recompute=recompute, zero=zero,
                                overlap=overlap)
                step = train_step(arch, hw, layout, context, batch)["step_seconds"]
                assert L._step_bound(hw, batch, row, terms, recompute, zero) <= step * (1 + 1e-12), (row, recompute, zero)
                checked += 1
    assert checked >= 12 * 10


# The search orders layouts by a lower bound proportional to the micro-batch (perf.gemm_floor in
# perf.layer_forward); it may skip a layout only if that bound is below its time.

@pytest.mark.parametrize("gpu", ["h100", "a100-40gb", "mi300x", "tpu-v5p"])
def test_gemm_floor_is_below_the_timed_product_and_proportional_to_m_and_batch(gpu):
    from depthwidth.cost.perf.step import gemm_floor, gemm_seconds

    hw = accelerator(gpu)
    for m in (0.5, 1, 7, 100, 128, 129, 2048, 3000, 65536):
        for n, k in ((0.25, 64), (16, 4096), (130, 130), (6144, 2048), (50257, 1600)):
            for batch in (1.0, 3.0, 96.0):
                floor = gemm_floor(float(m), float(n), float(k), hw, batch)
                assert floor <= gemm_seconds(float(m), float(n), float(k), hw, batch)
                # the bound of twice the rows (or twice the batch) is twice the bound
                assert gemm_floor(2.0 * m, float(n), float(k), hw, batch) == pytest.approx(2 * floor, rel=1e-12)
                assert gemm_floor(float(m), float(n), float(k), hw, 2 * batch) == pytest.approx(2 * floor, rel=1e-12)


@pytest.mark.parametrize("family,depth,width", SHAPES)
@pytest.mark.parametrize("tp,cp", [(1, 1), (2, 1), (8, 1), (2, 4)])
def test_the_layer_floor_grows_as_the_micro_batch_and_stays_below_the_layer(family, depth, width, tp, cp):
    from depthwidth.cost.perf.step import Layout, gemm_floor, layer_forward

    arch = preset(family).architecture(depth, width)
    hw, context = accelerator("h100"), 4096
    one = layer_forward(arch, hw, Layout(tp=tp, cp=cp, micro_batch=1), context, gemm_floor)
    for mb in (1, 2, 3, 16, 61):
        floor = layer_forward(arch, hw, Layout(tp=tp, cp=cp, micro_batch=mb), context, gemm_floor)
        timed = layer_forward(arch, hw, Layout(tp=tp, cp=cp, micro_batch=mb), context)
        for part in range(3):  # matrix multiplies, attention core, element-wise
            assert floor[part] == pytest.approx(mb * one[part], rel=1e-12)
            assert floor[part] <= timed[part] * (1 + 1e-12)


@pytest.mark.parametrize("family,depth,width", SHAPES)
def test_fits_is_the_brute_force_searchs_fits(family, depth, width):
    """``layout.fits`` (memory alone: what a plan asks of one node before it ranks its shapes there) against
    the brute-force search's ``fits``, on clusters from one GPU (where the large shapes fit nowhere) to 64."""
    arch = preset(family).architecture(depth, width)
    for (gpu, gpus), fixed in zip((("h100", 1), ("a100-40gb", 8), ("h100", 64), ("h100", 8)),
                                  ({}, {"zero": 0}, {"recompute": "none"}, {"tp": 2})):
        hw = accelerator(gpu)
        found = G.search_grid(arch, hw, gpus, 4096, 256, dict(fixed))
        assert L.fits(arch, hw, gpus, 4096, 256, dict(fixed)) == (None if found is None else found[0]["fits"]), (gpu, gpus, fixed)
