"""The one-call check of the local gradients (triage/worker/numerics_backward.py): under DDP with
``gradient_as_bucket_view=False`` cheap mode reads every local gradient in one autograd callback per
backward instead of a hook per parameter; elsewhere the hooks per parameter stay, and the record says
which path the rank used and why. Real DDP (its C++ reducer) on a 1-rank gloo group in a fresh
interpreter; the 4-rank origin tests are in test_numerics_jobs.py."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from tests.numerics.test_numerics_api import _run
from triage.worker.numerics_backward import ONE_CALL, PER_PARAMETER, output_tensors, refusal

JOB = """
import json, sys
import torch, torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
import triage.api
from triage.worker import numerics
case, out = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo", init_method="file://" + out + "/store", rank=0, world_size=1)
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
model = net if case == "plain" else DistributedDataParallel(net, gradient_as_bucket_view=case == "bucket_view",
                                                           find_unused_parameters=case == "bypass_unused")
other = DistributedDataParallel(nn.Linear(4, 1)) if case == "two_models" else None
triage.api.watch(model, out_dir=out, mode="cheap")
watch = numerics.current()
params = list(model.parameters()) + (list(other.parameters()) if other is not None else [])
opt = torch.optim.SGD(params, lr=0.01)
x = torch.randn(2, 4)
hooks = []
for step in range(6):
    opt.zero_grad()
    y = (net if case.startswith("bypass") and step >= 2 else model)(x).sum()
    if other is not None:
        y = y + other(x).sum()
    if step == 4:
        y = (y - y.detach()).abs().sqrt()       # a finite loss (0) whose gradients are NaN: sqrt'(0) * 0
    y.backward()
    hooks.append(len(watch.grad_hooks))
    opt.step()
first = dict(watch.first)
numerics.stop()
dist.destroy_process_group()
print(json.dumps({"hooks": hooks, "first": {k: first[k] for k in ("where", "module", "step", "nan", "inf")}}))
"""


def _job(tmp_path: Path, case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    out = tmp_path / case
    out.mkdir()
    program = JOB.replace("sys.argv[1]", repr(case)).replace("sys.argv[2]", repr(str(out)))
    proc = _run(program, tmp_path)
    seen: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    record: dict[str, Any] = json.loads((out / "numerics.json").read_text())
    return seen, record


def test_ddp_without_bucket_views_checks_every_local_gradient_in_one_call(tmp_path: Path) -> None:
    seen, record = _job(tmp_path, "default")
    # the hooks per parameter go once local mode begins (after the first step), and stay gone
    assert seen["hooks"][0] == 4 and seen["hooks"][1:4] == [0, 0, 0], seen      # after each backward
    assert seen["first"] == {"where": "local_gradient", "module": "2.bias", "step": 4, "nan": 1, "inf": 0}
    check = record["gradient_check"]
    assert check["path"] == ONE_CALL and check["reason"] is None
    assert check["one_call_backwards"] == 4               # steps 1 to 4: the hit switches to every module
    assert record["unhooked"] == [] and record["switched_to_full"] is True


@pytest.mark.parametrize(("case", "reason"), [
    ("bucket_view", "gradient_as_bucket_view=True"),
    ("plain", "is not DDP"),
    ("two_models", "several models"),
])
def test_elsewhere_the_hooks_per_parameter_stay_and_the_record_says_why(tmp_path: Path, case: str,
                                                                        reason: str) -> None:
    seen, record = _job(tmp_path, case)
    assert all(count >= 4 for count in seen["hooks"]), seen
    assert seen["first"]["where"] == "local_gradient" and seen["first"]["step"] == 4, seen
    check = record["gradient_check"]
    assert check["path"] == PER_PARAMETER and reason in check["reason"] and check["one_call_backwards"] == 0


def test_a_backward_that_skips_the_models_output_is_still_checked_in_one_call(tmp_path: Path) -> None:
    """DDP without find_unused_parameters gives every parameter a gradient in each backward, so the check
    is queued from the hook of one parameter's gradient: from step 2 the job calls the wrapped module
    itself (DDP's output never made), its gradients are still this rank's own, still checked in one
    call, and step 4's NaN is found in this rank's local gradient at step 4."""
    seen, record = _job(tmp_path, "bypass")
    assert seen["hooks"][1:4] == [0, 0, 0], seen
    assert seen["first"] == {"where": "local_gradient", "module": "2.bias", "step": 4, "nan": 1, "inf": 0}
    check = record["gradient_check"]
    assert check["path"] == ONE_CALL and check["reason"] is None and check["one_call_backwards"] == 4
    assert record["unhooked"] == []


def test_a_backward_that_skips_the_models_output_brings_the_hooks_back_for_good(tmp_path: Path) -> None:
    """With find_unused_parameters (a parameter may get no gradient) the check is queued from a hook on DDP's
    output. From step 2 the job calls the wrapped module itself (DDP's output, and its hook, never made):
    that step's gradients are checked at step(), the hooks per parameter come back, and step 4's NaN is
    found in this rank's local gradient at step 4."""
    seen, record = _job(tmp_path, "bypass_unused")
    assert seen["hooks"][1:3] == [0, 0] and all(count == 4 for count in seen["hooks"][3:]), seen
    assert (seen["first"]["where"], seen["first"]["step"]) == ("local_gradient", 4), seen
    check = record["gradient_check"]
    assert check["path"] == PER_PARAMETER and "did not go through the model's output" in check["reason"]
    assert record["unhooked"] == []


STEP_JOB = """
import json, sys
import torch, torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
import triage.api
from triage.worker import numerics
case, out = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo", init_method="file://" + out + "/store", rank=0, world_size=1)
torch.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)))
extra = torch.zeros(3, requires_grad=True)          # in no module: its gradient is set by hand
triage.api.watch(model, out_dir=out, mode="cheap")
watch = numerics.current()
opt = torch.optim.SGD(list(model.parameters()) + ([extra] if case == "extra" else []), lr=0.01)
x = torch.randn(2, 4)
covered = []
for step in range(6):
    opt.zero_grad()
    model(x).sum().backward()
    if case == "added" and step == 3:
        opt.add_param_group({"params": [extra]})
    if step == 4:
        extra.grad = torch.tensor([0.0, float("nan"), 1.0])
    covered.append(watch.covers.get(id(opt)))
    opt.step()
first = dict(watch.first)
numerics.stop()
dist.destroy_process_group()
print(json.dumps({"covered": covered, "first": {k: first[k] for k in ("where", "module", "step", "nan", "inf")}}))
"""


@pytest.mark.parametrize("case", ["extra", "added"])
def test_the_usual_step_skips_no_gradient_the_one_call_check_did_not_read(tmp_path: Path, case: str) -> None:
    """The step pre-hook's usual case trusts what it found once (an optimizer that holds only the parameters
    the one-call check reads): an optimizer with a parameter of its own from the start ("extra") is never
    trusted so, and one given a new parameter group later ("added") is no longer; either way the NaN set
    by hand into that parameter's gradient is found at step() of step 4."""
    out = tmp_path / case
    out.mkdir()
    program = STEP_JOB.replace("sys.argv[1]", repr(case)).replace("sys.argv[2]", repr(str(out)))
    seen = json.loads(_run(program, tmp_path).stdout.splitlines()[-1])
    if case == "extra":
        assert seen["covered"] == [None] * 6, seen
    else:
        # found at step 1's step() (the first in local mode), used at steps 2 and 3, dropped at step 3's step()
        assert seen["covered"] == [None, None, 4, 4, None, None], seen
    assert seen["first"]["where"] == "gradient_before_step" and seen["first"]["step"] == 4, seen
    assert (seen["first"]["nan"], seen["first"]["inf"]) == (1, 0), seen
    assert "param_groups" in seen["first"]["module"], seen


def test_refusal_and_output_tensors() -> None:
    torch = pytest.importorskip("torch")
    ddp = type("DistributedDataParallel", (), {})
    root = ddp()
    root.gradient_as_bucket_view, root.reducer = False, object()
    assert refusal(root, print, False) is None
    assert "queue_callback" in str(refusal(root, None, False))
    assert "several" in str(refusal(root, print, True))
    for attr, value, words in (("gradient_as_bucket_view", True, "bucket"), ("reducer", None, "C++ reducer"),
                               ("_use_python_reducer", True, "C++ reducer"), ("batched_grad_copy", True, "batched"),
                               ("mixed_precision", object(), "mixed_precision")):
        changed = ddp()
        changed.__dict__.update(root.__dict__, **{attr: value})
        assert words in str(refusal(changed, print, False)), attr
    assert "not DDP" in str(refusal(types.SimpleNamespace(), print, False))
    leaf = torch.ones(2, requires_grad=True)
    made = leaf * 2
    assert output_tensors(made, torch.Tensor) == [made] and output_tensors(leaf, torch.Tensor) == []
    assert output_tensors({"a": made, "b": 3}, torch.Tensor) == [made]
    assert output_tensors((made, leaf.detach()), torch.Tensor) == [made] and output_tensors(None, torch.Tensor) == []
