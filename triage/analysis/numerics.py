"""The origin of the first NaN or Inf of a run (pure): which rank, step and module, and who only
received it (``triage launch --numerics``; docs/numerics.md).

- The culprit is the rank whose first non-finite value came earliest by (step, time, the last
  collective's seq).
- The ranks whose first value came from their own computation (a forward output, a gradient of
  their own backward) at the culprit's step and before any later collective are origins; all the
  others are collateral: they "became non-finite after all_reduce seq S". When every rank is an
  origin, the same bad batch reached every rank at once: no rank is blamed.
- A rank whose only non-finite values were gradients that the grad scaler skipped (no
  ``optimizer.step()`` followed) and which stepped again afterwards is AMP's loss-scale search, not a
  fault, unless the skips keep happening (more than half of its iterations).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from triage.analysis.describe import who
from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.model import Finding, Verdict, VerdictKind
from triage.model.numerics import (
    BACKWARD,
    FORWARD,
    GRADIENT_PHASES,
    LOCAL_GRAD,
    OWN_PHASES,
    PARAM,
    REDUCED_GRAD,
    NonfiniteHit,
    RankNumerics,
)

KIND = VerdictKind.NONFINITE.value
SCALER_KIND = "grad_scaler_skips"
UNHOOKED_KIND = "numerics_unhooked"


@dataclass(frozen=True)
class NumericsResult:
    """What the numerics records (the first NaN or Inf) add to a report."""
    verdict: Verdict | None = None
    findings: tuple[Finding, ...] = ()
    steps: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def scaler_skips_only(item: RankNumerics) -> bool:
    """Every non-finite value of this rank was a gradient the grad scaler skipped, and it recovered."""
    first = item.first
    if first is None or item.skipped_step_count == 0 or first.where not in GRADIENT_PHASES:
        return False
    recovered = item.step > max(item.skipped_steps, default=item.step)
    keeps = item.skipped_step_count * 2 > max(item.iterations, 1)
    return item.nonfinite_iterations <= item.skipped_step_count and recovered and not keeps


def order_key(item: RankNumerics) -> tuple[int, float, int]:
    first = item.first
    if first is None:
        raise ValueError("a rank without a non-finite value has no place in the order")
    seq = first.collective_seq if first.collective_seq is not None else -1
    return (first.step, first.time if first.time is not None else float("inf"), seq)


def _is_origin(item: RankNumerics, culprit: NonfiniteHit) -> bool:
    first = item.first
    if first is None or first.where not in OWN_PHASES or first.step != culprit.step:
        return False
    return first.collective_seq is None or culprit.collective_seq is None or \
        first.collective_seq <= culprit.collective_seq


def value_word(hit: NonfiniteHit) -> str:
    if not hit.nan and not hit.inf:
        return "NaN or Inf"           # a gradient gone before its sum was read: the counts were not recorded
    if hit.nan and hit.inf:
        return "NaN and Inf"
    return "NaN" if hit.nan else "Inf"


def module_label(hit: NonfiniteHit) -> str:
    if hit.where in (LOCAL_GRAD, REDUCED_GRAD, PARAM):
        return f"parameter `{hit.module}`"
    if not hit.module:
        return f"the model's output ({hit.module_type or 'root module'})"
    return f"`{hit.module}` ({hit.module_type})" if hit.module_type else f"`{hit.module}`"


def where_text(hit: NonfiniteHit) -> str:
    """``in the output of `act` (Act) from finite inputs: the layer made it``, and the like."""
    label = module_label(hit)
    if hit.where == FORWARD:
        if hit.input_nonfinite is False:
            if not hit.module:
                return f"in {label}, from finite inputs (cheap mode: the layer is not known)"
            return f"in the output of {label} from finite inputs: the layer made it"
        if hit.input_nonfinite:
            return f"in the output of {label}, whose input was already non-finite: it received it " \
                   "(the data, or an earlier layer)"
        return f"in {label}" if not hit.module else f"in the output of {label}"
    if hit.where == BACKWARD:
        return f"in the gradient backward brought to the output of {label}"
    if hit.where == LOCAL_GRAD:
        return f"in the gradient of {label} (this rank's own backward, before any all_reduce)"
    if hit.where == REDUCED_GRAD:
        return f"in the gradient of {label} at optimizer.step()"
    return f"in {label} after optimizer.step()"


def _collateral_text(items: Sequence[RankNumerics], hosts: Mapping[int, str | None]) -> str:
    by_seq: dict[tuple[str | None, int | None], list[int]] = {}
    for item in items:
        if item.first is not None:
            key = (item.first.collective_op, item.first.collective_seq)
            by_seq.setdefault(key, []).append(item.rank)
    parts = []
    for (op, seq), ranks in sorted(by_seq.items(), key=lambda kv: (kv[0][1] is None, kv[0][1] or 0)):
        after = f"after {op or 'collective'} seq {seq}" if seq is not None else "later (no collective recorded)"
        parts.append(f"{who(ranks, hosts)} became non-finite {after}")
    return "; ".join(parts)


def _skips_finding(items: Sequence[RankNumerics]) -> Finding | None:
    skippers = [i for i in items if scaler_skips_only(i)]
    if not skippers:
        return None
    counts = sorted({i.skipped_step_count for i in skippers})
    steps = sorted({s for i in skippers for s in i.skipped_steps})[:8]
    text = (f"the grad scaler skipped {'/'.join(map(str, counts))} step(s) with non-finite gradients on "
            f"{rank_word([i.rank for i in skippers])} (at step {', '.join(map(str, steps))}) and the "
            "training went on: AMP's loss-scale search, not a fault")
    return Finding(SCALER_KIND, tuple(i.rank for i in skippers), text, tuple(i.path for i in skippers))


def _unhooked_finding(items: Sequence[RankNumerics]) -> Finding | None:
    names = sorted({f"{m} ({why})" for i in items for m, why in i.unhooked})
    if not names:
        return None
    return Finding(UNHOOKED_KIND, tuple(i.rank for i in items if i.unhooked),
                   "the numerics watch could not look at: " + "; ".join(names[:5]))


def analyze_numerics(items: Sequence[RankNumerics], hosts: Mapping[int, str | None]) -> NumericsResult:
    """The nonfinite verdict (None when no rank saw a real NaN/Inf) and its findings."""
    if not items:
        return NumericsResult()
    extra_findings = tuple(f for f in (_skips_finding(items), _unhooked_finding(items)) if f is not None)
    real = sorted((i for i in items if i.first is not None and not scaler_skips_only(i)), key=order_key)
    extra: dict[str, Any] = {"numerics": {
        "mode": sorted({i.mode for i in items}), "ranks_watched": len(items),
        "first_step": {str(i.rank): i.first.step if i.first else None for i in items}}}
    if not real:
        return NumericsResult(findings=extra_findings, extra=extra)
    culprit = real[0]
    hit = culprit.first
    if hit is None:
        raise ValueError("internal error: a sorted non-finite rank without its hit")
    origins = [i for i in real if _is_origin(i, hit)] or [culprit]
    collateral = [i for i in real if i not in origins]
    everyone = len(origins) > 1 and len(origins) == len(items)
    if everyone:
        head = (f"every rank ({rank_word([i.rank for i in origins])}) saw {value_word(hit)} at once "
                f"at step {hit.step}, {where_text(hit)}: the same bad batch everywhere, no rank is blamed")
        culprits: tuple[int, ...] = ()
    else:
        names = who([i.rank for i in origins], hosts)
        head = f"{names} made the first {value_word(hit)} at step {hit.step}, {where_text(hit)}"
        culprits = tuple(i.rank for i in origins)
    if collateral:
        head += f"; {_collateral_text(collateral, hosts)}"
    layer_unknown = _layer_unknown(culprit, hit)
    if layer_unknown and hit.module:
        head = head.replace(where_text(hit), f"{where_text(hit)} (cheap mode: the layer is not known)", 1)
    if culprit.after_switch is not None and layer_unknown:
        later = culprit.after_switch
        head += f" (every module watched from then on: at step {later.step} the first was {module_label(later)})"
    verdict = headline.verdict(VerdictKind.NONFINITE, head, culprit_ranks=culprits, process_group=hit.collective_pg,
                               seq=hit.collective_seq)
    root = Finding(KIND, culprits or tuple(i.rank for i in origins), verdict.summary, tuple(i.path for i in origins),
                   time=hit.time, root_cause=True)
    extra["numerics"]["origin"] = {"ranks": [i.rank for i in origins], "step": hit.step, "module": hit.module,
                                   "where": hit.where, "all_ranks": everyone,
                                   "history": [[c.where, c.module, _number(c.absmax)] for c in hit.history]}
    return NumericsResult(verdict, (root, *extra_findings), _steps(culprit, hit), extra)


def _layer_unknown(culprit: RankNumerics, hit: NonfiniteHit) -> bool:
    """Cheap mode saw the value at the model's output or in the gradients, not at a layer."""
    return culprit.mode == "cheap" and (not hit.module or hit.where != FORWARD)


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def _steps(culprit: RankNumerics, hit: NonfiniteHit) -> tuple[str, ...]:
    steps = []
    if _layer_unknown(culprit, hit):
        steps.append("rerun with `triage launch --numerics --numerics-mode full` to name the layer "
                     "(every module's output and gradient)")
    steps.append(f"open {culprit.path}: the last module calls before it, with their largest absolute value")
    if hit.input_nonfinite:
        steps.append(f"check the batch rank {culprit.rank} read at step {hit.step} (its input was already "
                     "non-finite)")
    return tuple(steps)
