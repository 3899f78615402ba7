"""Axis ticks for a duration axis: round steps (1, 2 or 5 times a power of ten), labelled in µs,
ms or s with as many decimals as the step needs, so that no two labels read the same."""

from __future__ import annotations

import math

# (unit, how many milliseconds one unit is), smallest first
_UNITS: tuple[tuple[str, float], ...] = (("µs", 1e-3), ("ms", 1.0), ("s", 1e3))


def nice_step(span: float, count: int = 5) -> float:
    """The round step (1, 2 or 5 × 10^k) that cuts ``span`` into at most ``count`` intervals."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    for mult in (1.0, 2.0, 5.0, 10.0):
        if mult * power >= raw * (1 - 1e-9):
            return mult * power
    return 10.0 * power   # pragma: no cover - the loop always returns


def _unit(top_ms: float) -> tuple[str, float]:
    """µs below 1 ms, ms below 1 s, else s."""
    for unit, size in reversed(_UNITS):
        if top_ms >= size:
            return unit, size
    return _UNITS[0]


def duration_ticks(top_ms: float, count: int = 5) -> list[tuple[float, str]]:
    """Ticks from 0 up to the first multiple of the step at or above ``top_ms`` (milliseconds):
    ``[(value_ms, label), ...]``. A top that is 0, negative or not finite gives 0 to 1 ms."""
    if not math.isfinite(top_ms) or top_ms <= 0:
        top_ms = 1.0
    step = nice_step(top_ms, count)
    n = max(1, math.ceil(top_ms / step - 1e-9))
    unit, size = _unit(n * step)
    step_units = step / size
    decimals = max(0, -math.floor(math.log10(step_units) + 1e-9))
    return [(i * step, f"{i * step_units:.{decimals}f} {unit}") for i in range(n + 1)]


def format_duration(ms: float) -> str:
    """A duration for a tooltip or a caption: ``850 µs``, ``1.25 ms``, ``12.5 s``."""
    if not math.isfinite(ms):
        return "unknown"
    unit, size = _unit(abs(ms)) if ms else ("ms", 1.0)
    value = ms / size
    return f"{value:.3g} {unit}" if abs(value) < 1000 else f"{value:.0f} {unit}"
