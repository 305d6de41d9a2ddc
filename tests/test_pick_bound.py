"""The pick times only the shapes that can rank first or second (``pick._leading``, from a lower
bound of each shape's step, ``layout.step_floor``): the plan it prints is the plan of timing every
shape of the band, the reference here (the exhaustive ranking), and the bound is one."""
from __future__ import annotations

import json

import pytest

from conftest import run
from depthwidth.advice import pick
from depthwidth.arch.hardware import accelerator
from depthwidth.arch.presets import preset
from depthwidth.cost.perf import grid as G
from depthwidth.cost.perf import layout as L

PLANS = [["--params", "1e9"], ["--params", "1e9", "--prefer", "train"], ["--params", "3e8", "--arch", "llama", "--gpus", "8"],
         ["--params", "7e9", "--arch", "llama", "--tokens", "2e12", "--gpus", "512"], ["--params", "2e10", "--arch", "llama", "--gpus", "64"],
         ["--params", "1e8", "--arch", "gpt2", "--gpus", "16"], ["--params", "5e10", "--arch", "mixtral", "--gpus", "256"],
         ["--params", "3e9", "--gpu", "a100-40gb", "--gpus", "24"], ["--params", "1e9", "--tp", "2", "--gpus", "32"],
         ["--params", "4e9", "--arch", "llama", "--gpus", "16", "--context", "8192"]]


def every_shape(shapes, cost, budget, loss_model, prefer, tolerance, weigh=True):
    return [cost.assess(s.arch, s.params, budget, loss_model, weigh) for s in shapes]


def plan_text(args):
    out = run(["plan", *args, "--format", "json"])
    assert out.code == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("args", PLANS, ids=[" ".join(a) for a in PLANS])
def test_the_plan_is_the_plan_of_timing_every_shape(args, monkeypatch):
    bounded = plan_text(args)
    monkeypatch.setattr(pick, "_leading", every_shape)
    assert bounded == plan_text(args)  # the pick, its why (runner-up, shape count), every candidate


def test_the_bound_leaves_shapes_untimed_at_1e9(monkeypatch):
    seen = []
    leading = pick._leading

    def counted(shapes, *rest):
        timed = leading(shapes, *rest)
        seen.append((len(shapes), len(timed)))
        return timed

    monkeypatch.setattr(pick, "_leading", counted)
    record = json.loads(plan_text(["--params", "1e9"]))[0]
    [(shapes, timed)] = seen
    assert timed < shapes and f"of the {shapes} valid shapes" in record["why"]


@pytest.mark.parametrize("family,depth,width", [("vanilla", 20, 2048), ("llama", 32, 4096), ("mixtral", 16, 2048),
                                                ("deepseek", 12, 1120), ("gpt2", 48, 1600)])
@pytest.mark.parametrize("gpu,gpus,context", [("h100", 8, 2048), ("h100", 64, 4096), ("a100-40gb", 24, 2048), ("h100", 512, 32768)])
def test_step_floor_is_below_the_searched_step(family, depth, width, gpu, gpus, context):
    arch, hw = preset(family).architecture(depth, width), accelerator(gpu)
    batch = L.default_global_batch(1e9, context)
    floor = L.step_floor(arch, hw, gpus, context, batch)
    found = L.search(arch, hw, gpus, context, batch)  # reuses the floor's ordering
    assert floor <= found[1]["step_seconds"] * (1 + 1e-12)
    slow = G.search_grid(arch, hw, gpus, context, batch)  # brute force: the search after a floor is still exact
    assert found[0] == slow[0] and found[3:] == slow[3:] and found[2] == pytest.approx(slow[2], rel=1e-12)
    assert found[1]["step_seconds"] == pytest.approx(slow[1]["step_seconds"], rel=1e-12)
