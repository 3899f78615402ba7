"""The exactness of cheap mode's check of the local gradients (triage/worker/numerics_grads.py and
numerics_backward.py): a gradient's sum decides quickly, and a non-finite sum is confirmed against the
gradient itself before it is a hit. Finite values whose sum overflows (float32, or bfloat16 summed in
float32) are no hit; a NaN or an Inf is a hit in every floating dtype, and the first such gradient
is named even after one whose sum only overflowed. The watch's real check, in this process, on plain
tensors (no hook installed: the watch is never started)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from triage.worker.numerics import Watch

DTYPES = ("float16", "bfloat16", "float32", "float64")


class Recorder(Watch):
    """The watch's checks with the hits kept here (no record written, no switch to every module)."""

    def __init__(self, torch: Any, grads: dict[str, Any]) -> None:
        super().__init__("/nonexistent/numerics.json", "cheap", 0)
        self.torch, self.tensor_type, self.wide = torch, torch.Tensor, (torch.float32, torch.float64)
        self.compiling = lambda: False
        self.hits: list[tuple[str, str, dict[str, Any]]] = []
        self.leaves = []
        for name, grad in grads.items():
            leaf = torch.zeros(grad.shape, dtype=grad.dtype, requires_grad=True)
            leaf.grad = grad
            self.params[id(leaf)] = (_Ref(leaf), name)
            self.leaves.append(leaf)
        self.one_call_params = list(self.leaves)
        self.one_call_ids = [id(leaf) for leaf in self.leaves]

    def found(self, where: str, module: str, kind: str | None, value: dict[str, Any], *args: Any,
              **kwargs: Any) -> None:
        self.hits.append((where, module, value))


class _Ref:
    """A strong stand-in for weakref.ref (the leaves live as long as the test)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __call__(self) -> Any:
        return self.obj


def _one_call(torch: Any, grads: dict[str, Any]) -> Recorder:
    watch = Recorder(torch, grads)
    watch.check_local_grads()
    assert watch.fired == {id(leaf) for leaf in watch.leaves}
    return watch


def _in_hooks(torch: Any, grads: dict[str, Any]) -> Recorder:
    """The per-parameter path: each gradient's sum read in its hook (CPU)."""
    watch = Recorder(torch, grads)
    for leaf in watch.leaves:
        watch.on_grad(leaf)
    return watch


@pytest.mark.parametrize("check", [_one_call, _in_hooks])
@pytest.mark.parametrize("dtype", DTYPES)
def test_finite_values_whose_sum_overflows_are_no_hit(check: Any, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    kind = getattr(torch, dtype)
    big = torch.finfo(kind).max
    grads = {"huge": torch.full((64,), big, dtype=kind), "mixed": torch.tensor([big, -big, big], dtype=kind),
             "empty": torch.zeros(0, dtype=kind), "small": torch.ones(3, dtype=kind)}
    if dtype in ("float32", "bfloat16"):
        assert not math.isfinite(grads["huge"].sum(dtype=torch.float32).item())   # the sum overflows indeed
    watch = check(torch, grads)
    assert watch.hits == []


@pytest.mark.parametrize("check", [_one_call, _in_hooks])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_a_nan_or_inf_in_any_dtype_is_a_hit_after_an_overflowing_sum(check: Any, dtype: str, bad: str) -> None:
    torch = pytest.importorskip("torch")
    kind = getattr(torch, dtype)
    big = torch.finfo(kind).max
    broken = torch.ones(5, 3, dtype=kind)
    broken[2, 1] = float(bad)
    grads = {"fc2.weight": torch.full((64,), big, dtype=kind), "fc2.bias": torch.zeros(0, dtype=kind),
             "fc1.weight": broken, "fc1.bias": torch.full((3,), float("nan"), dtype=kind)}
    watch = check(torch, grads)
    assert len(watch.hits) == (1 if check is _one_call else 2), watch.hits   # in hooks, fc1.bias's own hit after
    where, module, value = watch.hits[0]
    assert (where, module, value["dtype"], value["shape"]) == ("local_gradient", "fc1.weight", dtype, [5, 3])
    assert (value["nan"], value["inf"]) == ((1, 0) if bad == "nan" else (0, 1))


def test_a_gradient_that_is_not_a_plain_tensor_is_left_out_of_the_one_call_check() -> None:
    torch = pytest.importorskip("torch")
    watch = Recorder(torch, {"a": torch.ones(2), "b": torch.tensor([float("inf"), 1.0])})
    watch.leaves[0].grad = None                   # no gradient in this backward
    watch.check_local_grads()
    assert watch.fired == {id(watch.leaves[1])}
    assert [(module, value["inf"]) for _, module, value in watch.hits] == [("b", 1)]
