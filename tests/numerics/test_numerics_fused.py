"""Cheap mode's fused check (triage/worker/numerics_fused.py): every local gradient of a backward in a
few calls at its end, whatever the number of parameters; a hit still names the parameter, its dtype,
shape and counts."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

from tests.numerics.test_numerics_api import _run
from triage.worker.numerics_fused import abs_sums


def _tensors() -> list[object]:
    import torch

    return [torch.ones(3), torch.tensor([1.0, float("nan")]), torch.full((4,), 60000.0, dtype=torch.float16),
            torch.tensor([float("-inf")], dtype=torch.float64), torch.full((2, 2), 2.0, dtype=torch.bfloat16)]


def _check(values: object, plain: bool = False) -> None:
    import torch

    assert isinstance(values, torch.Tensor) and values.dtype == torch.float32 and values.shape == (5,)
    got = values.tolist()
    assert got[0] == 3.0 and math.isnan(got[1]) and got[4] == 8.0
    assert got[3] == float("-inf") if plain else abs(got[3]) == float("inf")    # plain sums: the sign kept
    assert got[2] == 240000.0                 # a finite float16 gradient summed past its own range: finite


def test_abs_sums_propagates_nan_and_inf_and_sums_half_tensors_in_float32() -> None:
    import torch

    _check(abs_sums(torch, _tensors()))


def test_abs_sums_without_a_fused_kernel_sums_each_tensor() -> None:
    import torch

    no_foreach = types.SimpleNamespace(stack=torch.stack, float32=torch.float32, float64=torch.float64)
    _check(abs_sums(no_foreach, _tensors()), plain=True)          # a torch without _foreach_norm
    _check(abs_sums(torch, _tensors(), fuse=False), plain=True)   # the caller's choice (CPU)


FUSED = """
import collections, json, sys
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
import triage.api
from triage.worker import numerics
torch.manual_seed(0)
layers = []
for i in range(int(sys.argv[1])):
    layers += [nn.Linear(8, 8), nn.Tanh()]
model = nn.Sequential(*layers, nn.Linear(8, 1))
path = triage.api.watch(model, mode="cheap")
numerics.current().fuse_on_cpu = True      # the path of CUDA gradients (CPU ones are summed in their hooks)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(4, 8), torch.randn(4, 1)

def step(bad=False):
    opt.zero_grad()
    out = model(x)
    if bad:
        out = out + torch.log(-torch.ones_like(out))          # NaN made in the loss: every gradient NaN,
    #                                                          the last layer's bias first
    nn.functional.mse_loss(out, y).backward()
    opt.step()

def ops():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return collections.Counter(e.name for e in prof.events())

for _ in range(3):
    step()
watched = ops()
numerics.stop()
bare = ops()
triage.api.watch(model, out_dir=sys.argv[2], mode="cheap")
numerics.current().fuse_on_cpu = True
for _ in range(2):
    step()
step(bad=True)
numerics.stop()
print(json.dumps({k: watched[k] - bare[k] for k in ("aten::_foreach_norm", "aten::sum", "aten::stack")}))
"""


def _fused(tmp_path: Path, layers: int) -> tuple[dict[str, int], dict[str, object]]:
    out = tmp_path / f"w{layers}"
    program = FUSED.replace("sys.argv[1]", repr(str(layers))).replace("sys.argv[2]", repr(str(out)))
    proc = _run(program, tmp_path)
    extra: dict[str, int] = json.loads(proc.stdout.splitlines()[-1])
    record: dict[str, object] = json.loads((out / "numerics.json").read_text())
    return extra, record


def test_a_cheap_step_checks_every_gradient_in_two_calls_whatever_the_parameter_count(tmp_path: Path) -> None:
    for layers in (2, 12):                         # 5 and 25 parameters
        extra, record = _fused(tmp_path, layers)
        # one fused norm, one stack, and the one sum of the stacked values that says all are finite
        assert extra == {"aten::_foreach_norm": 1, "aten::sum": 1, "aten::stack": 1}, (layers, extra)
        first = record["first"]
        assert isinstance(first, dict)
        assert (first["where"], first["step"], first["module"]) == ("local_gradient", 2, f"{2 * layers}.bias")
        assert first["dtype"] == "float32" and first["shape"] == [1] and first["nan"] == 1 and first["inf"] == 0


REFUSED = """
import torch
from torch import nn
import triage.api
from triage.worker import numerics
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="cheap")
watch = numerics.current()
watch.fuse_on_cpu = True
def refuse(callback):
    raise RuntimeError("Final callbacks can only be installed during backward pass.")
watch.fuse = refuse                          # an engine that will not queue the end-of-backward check
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    x = torch.ones(2, 4)
    if step == 4:
        x[0, 0] = float("nan")
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
assert watch.fuse is None and not watch.skipped, watch.skipped
print(path)
"""


def test_an_engine_that_refuses_the_callback_turns_the_fused_check_off(tmp_path: Path) -> None:
    proc = _run(REFUSED, tmp_path)
    record = json.loads((tmp_path / proc.stdout.splitlines()[-1]).read_text())
    first = record["first"]
    assert (first["where"], first["module"], first["step"]) == ("local_gradient", "2.weight", 4)
    assert first["nan"] == 4 and record["unhooked"] == []       # each gradient in its hook: nothing lost


IN_HOOK = """
import json
import torch
from torch import nn
import triage.api
from triage.worker import numerics
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="cheap")
watch = numerics.current()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(2, 4)
for _ in range(3):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
assert watch.local and watch.first is None
opt.zero_grad()
out = model(x).sum()
(out - out.detach()).abs().sqrt().backward()     # a finite loss (0) whose gradients are NaN: sqrt'(0) * 0
assert watch.pending == [] and watch.first is not None, (watch.pending, watch.first)   # read in the hook
first = dict(watch.first)
opt.step()
numerics.stop()
print(json.dumps({k: first[k] for k in ("where", "module", "step", "nan", "inf", "numel")}))
print(path)
"""


def test_a_cpu_gradient_is_read_in_its_hook_before_the_step(tmp_path: Path) -> None:
    """On CPU a gradient's sum is read in its hook: the hit is known before optimizer.step(), nothing is
    left pending for the step, and its counts are this rank's own gradient's."""
    proc = _run(IN_HOOK, tmp_path)
    lines = proc.stdout.splitlines()
    seen = json.loads(lines[-2])
    assert seen == {"where": "local_gradient", "module": "2.bias", "step": 3, "nan": 1, "inf": 0, "numel": 1}
    record = json.loads((tmp_path / lines[-1]).read_text())
    assert record["first"]["module"] == "2.bias" and record["first"]["step"] == 3
