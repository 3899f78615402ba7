"""The pure numerics analysis (origin, collateral, all ranks at once, grad-scaler skips), the live
stop rule, and the worker's copies of the schema and file name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from triage.agent.launch.envsetup import worker_env
from triage.agent.numerics_watch import should_stop
from triage.analysis.numerics import analyze_numerics, scaler_skips_only
from triage.analysis.verdicts import nonfinite_rule
from triage.layout import RankPaths
from triage.model import Verdict, VerdictKind
from triage.model.numerics import BACKWARD, FORWARD, LOCAL_GRAD, REDUCED_GRAD, NonfiniteHit, RankNumerics
from triage.options import LaunchSettings, NumericsMode
from triage.parsing.numerics import parse_numerics
from triage.schemas import NUMERICS_SCHEMA
from triage.worker import numerics_record

HOSTS = {0: "n0", 1: "n0", 2: "n1", 3: "n1"}


def hit(where: str = FORWARD, module: str = "act", step: int = 3, time: float = 100.0, seq: int | None = 8,
        inputs: bool | None = False, nan: int = 5, inf: int = 0) -> NonfiniteHit:
    return NonfiniteHit(where, module, "Act", step, step, time, inputs, "float32", (4,), nan, inf,
                        "0", seq, "all_reduce")


def rank(r: int, first: NonfiniteHit | None, **kw: object) -> RankNumerics:
    base = RankNumerics(r, HOSTS[r], f"n/ranks/{r}/numerics.json", "full", 6, 6, True, first,
                        nonfinite_iterations=1 if first else 0)
    return replace(base, **kw)  # type: ignore[arg-type]


def test_the_origin_is_the_earliest_rank_and_the_others_are_collateral() -> None:
    items = [rank(0, hit(REDUCED_GRAD, "fc1.weight", time=100.2, seq=9)), rank(1, hit(time=100.1)),
             rank(2, hit(REDUCED_GRAD, "fc1.weight", time=100.3, seq=9)), rank(3, None)]
    result = analyze_numerics(items, HOSTS)
    assert result.verdict is not None and result.verdict.culprit_ranks == (1,)
    summary = result.verdict.summary
    assert summary.startswith("NONFINITE: rank 1 (n0) made the first NaN at step 3, in the output of `act` (Act) "
                              "from finite inputs: the layer made it")
    assert "ranks 0,2 (n0, n1) became non-finite after all_reduce seq 9" in summary


def test_an_earlier_step_wins_over_an_earlier_time() -> None:
    items = [rank(0, hit(step=4, time=1.0)), rank(1, hit(step=3, time=50.0)), rank(2, None), rank(3, None)]
    result = analyze_numerics(items, HOSTS)
    assert result.verdict is not None and result.verdict.culprit_ranks == (1,)


def test_a_received_value_says_so() -> None:
    result = analyze_numerics([rank(2, hit(module="fc1", inputs=True, nan=0, inf=1))], HOSTS)
    assert result.verdict is not None
    assert "first Inf at step 3, in the output of `fc1` (Act), whose input was already non-finite" \
        in result.verdict.summary


def test_every_rank_at_once_blames_no_rank() -> None:
    items = [rank(r, hit(module="fc1", inputs=True, time=100 + r / 10)) for r in range(4)]
    result = analyze_numerics(items, HOSTS)
    assert result.verdict is not None and result.verdict.culprit_ranks == ()
    assert "every rank (ranks 0-3) saw NaN at once at step 3" in result.verdict.summary


def test_grad_scaler_skips_that_recover_are_not_an_origin() -> None:
    skipping = [rank(r, hit(BACKWARD, "", step=0), skipped_steps=(0,), skipped_step_count=2,
                     nonfinite_iterations=2, step=6, iterations=8) for r in range(4)]
    assert all(scaler_skips_only(i) for i in skipping)
    result = analyze_numerics(skipping, HOSTS)
    assert result.verdict is None
    assert result.findings[0].kind == "grad_scaler_skips" and result.findings[0].ranks == (0, 1, 2, 3)
    keeps = replace(skipping[0], skipped_step_count=6, nonfinite_iterations=6)
    assert not scaler_skips_only(keeps)                     # more than half the iterations: a fault
    never = replace(skipping[0], step=0)
    assert not scaler_skips_only(never)                     # never stepped again


def test_the_nonfinite_story_comes_first_unless_a_failure_came_before() -> None:
    result = analyze_numerics([rank(1, hit(time=100.0))], HOSTS)
    assert result.verdict is not None
    crash = Verdict(VerdictKind.CRASH, "CRASH: rank 2 ...", culprit_ranks=(2,))
    verdict, _main, moved = nonfinite_rule(crash, None, result.verdict, result.findings[0], (200.0,))
    assert verdict.kind is VerdictKind.NONFINITE and moved[0].kind == "crash"
    verdict, _main, moved = nonfinite_rule(crash, None, result.verdict, result.findings[0], (50.0,))
    assert verdict.kind is VerdictKind.CRASH and moved[0].kind == "nonfinite" and not moved[0].root_cause


def test_live_stop_waits_for_a_gradient_only_value() -> None:
    assert should_stop(rank(1, hit()))
    grad = rank(1, hit(LOCAL_GRAD, "fc1.weight", step=0), step=0, iterations=1)
    assert not should_stop(grad)
    assert not should_stop(replace(grad, skipped_step_count=1, skipped_steps=(0,), step=1, iterations=3))
    assert should_stop(replace(grad, step=1, iterations=2))      # the optimizer stepped on it


def test_parse_and_the_worker_copies() -> None:
    assert numerics_record.SCHEMA == NUMERICS_SCHEMA
    assert numerics_record.FILE == RankPaths.NUMERICS
    doc = {"schema": NUMERICS_SCHEMA, "rank": 2, "mode": "cheap", "step": "x", "first": {
        "where": FORWARD, "module": "a.b", "step": 1, "nan": 3, "shape": [2, "?"], "collective": None,
        "history": [{"where": FORWARD, "module": "a", "absmax": None}, 7]}}
    item = parse_numerics(doc, "h", "p")
    assert item.rank == 2 and item.step == 0 and item.first is not None
    assert item.first.shape == (2, 0) and item.first.collective_seq is None and len(item.first.history) == 1


def test_the_launcher_sets_the_worker_variable_only_when_asked() -> None:
    base = {"TRIAGE_NUMERICS": "full"}                    # a stale value in the user's environment
    off = worker_env(base, ["torchrun"], LaunchSettings(), Path("run"), "j", "h", False)
    assert "TRIAGE_NUMERICS" not in off
    on = worker_env(base, ["torchrun"], LaunchSettings(numerics=True, numerics_mode=NumericsMode.CHEAP),
                    Path("run"), "j", "h", False)
    assert on["TRIAGE_NUMERICS"] == "cheap"


def test_a_gradient_gone_before_its_sum_was_read_says_nan_or_inf() -> None:
    gone = numerics_record.describe_gone("torch.float16", (4, 2))
    assert gone == {"dtype": "float16", "shape": [4, 2], "nan": None, "inf": None, "numel": 8}
    doc = {"schema": NUMERICS_SCHEMA, "rank": 0, "mode": "cheap", "first": {"where": LOCAL_GRAD, "module": "w",
                                                                          "step": 2, **gone}}
    item = parse_numerics(doc, "h", "p")
    result = analyze_numerics([item], HOSTS)
    assert result.verdict is not None
    assert "made the first NaN or Inf at step 2, in the gradient of parameter `w`" in result.verdict.summary
    assert "(cheap mode: the layer is not known)" in result.verdict.summary
