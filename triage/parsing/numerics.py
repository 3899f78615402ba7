"""``numerics.json`` (``triage.numerics/1``, written by the in-worker numerics watch) -> RankNumerics."""

from __future__ import annotations

from typing import Any

from triage.model.numerics import ModuleCall, NonfiniteHit, RankNumerics
from triage.schemas import NUMERICS_SCHEMA


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _call(item: Any) -> ModuleCall | None:
    if not isinstance(item, dict):
        return None
    value = item.get("absmax")
    absmax = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")
    return ModuleCall(str(item.get("where") or ""), str(item.get("module") or ""), _str(item.get("type")), absmax)


def parse_hit(data: Any) -> NonfiniteHit | None:
    if not isinstance(data, dict) or not isinstance(data.get("where"), str):
        return None
    coll: dict[str, Any] = data["collective"] if isinstance(data.get("collective"), dict) else {}
    shape: list[Any] = data["shape"] if isinstance(data.get("shape"), list) else []
    inp = data.get("input_nonfinite")
    history = [c for c in map(_call, data.get("history") or []) if c is not None]
    return NonfiniteHit(
        where=data["where"], module=str(data.get("module") or ""), module_type=_str(data.get("module_type")),
        step=_int(data.get("step")), iteration=_int(data.get("iteration")), time=_float(data.get("time")),
        input_nonfinite=inp if isinstance(inp, bool) else None, dtype=_str(data.get("dtype")),
        shape=tuple(_int(d) for d in shape), nan=_int(data.get("nan")), inf=_int(data.get("inf")),
        collective_pg=_str(coll.get("pg")), collective_seq=_opt_int(coll.get("seq")),
        collective_op=_str(coll.get("op")), history=tuple(history))


def parse_numerics(data: Any, host: str | None, path: str) -> RankNumerics:
    """One rank's record; ValueError (with why) when it is not a numerics record."""
    if not isinstance(data, dict) or data.get("schema") != NUMERICS_SCHEMA:
        raise ValueError(f"not a {NUMERICS_SCHEMA} record")
    rank = _opt_int(data.get("rank"))
    if rank is None:
        raise ValueError("no rank in the record")
    unhooked = tuple((str(u.get("module")), str(u.get("reason"))) for u in data.get("unhooked") or []
                     if isinstance(u, dict))
    skipped = tuple(_int(s) for s in data.get("skipped_steps") or [] if isinstance(s, int))
    return RankNumerics(
        rank=rank, host=host, path=path, mode=str(data.get("mode") or "?"), step=_int(data.get("step")),
        iterations=_int(data.get("iterations")), final=data.get("final") is True,
        first=parse_hit(data.get("first")), after_switch=parse_hit(data.get("after_switch")),
        nonfinite_iterations=_int(data.get("nonfinite_iterations")), skipped_steps=skipped,
        skipped_step_count=_int(data.get("skipped_step_count"), len(skipped)), unhooked=unhooked)
