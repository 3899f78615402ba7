"""The agent's live view of the numerics watch (``triage launch --numerics``): one ``triage:`` line
when the first NaN or Inf appears in a rank directory of this node, and, with ``--on-nonfinite
stop``, the job stopped. A first value that is only a gradient waits one iteration: when the grad
scaler skipped that step and the job went on, it is said as such and the job is not stopped (unless
the skips keep happening)."""

from __future__ import annotations

import json
from collections.abc import Callable

from triage.analysis.numerics import order_key, value_word, where_text
from triage.layout import HostPaths
from triage.model.numerics import GRADIENT_PHASES, RankNumerics
from triage.options import LaunchSettings, OnNonfinite
from triage.parsing.numerics import parse_numerics

MIN_ITERATIONS_FOR_KEEPS = 10


def should_stop(item: RankNumerics) -> bool:
    """Pure: a record that calls for ``--on-nonfinite stop`` now."""
    first = item.first
    if first is None:
        return False
    if first.where not in GRADIENT_PHASES:
        return True
    if item.nonfinite_iterations > item.skipped_step_count + 1:
        return True               # a non-finite iteration that was not a grad-scaler skip
    if item.step > first.step and item.skipped_step_count == 0:
        return True               # the optimizer stepped on it
    return item.iterations >= MIN_ITERATIONS_FOR_KEEPS and item.skipped_step_count * 2 > item.iterations


class NumericsWatch:
    def __init__(self, paths: HostPaths, settings: LaunchSettings, say: Callable[[str], None],
                 stop: Callable[[], None]) -> None:
        self.paths, self.say, self.stop = paths, say, stop
        self.enabled = settings.numerics
        self.stop_on_hit = settings.on_nonfinite == OnNonfinite.STOP
        self.said = False
        self.said_skip = False
        self.stopped = False

    def records(self) -> list[RankNumerics]:
        out = []
        for rank in self.paths.ranks():
            path = self.paths.rank(rank).numerics
            try:
                out.append(parse_numerics(json.loads(path.read_bytes()), self.paths.host, str(path)))
            except (OSError, ValueError):
                continue
        return out

    def on_tick(self) -> None:
        if not self.enabled or self.stopped:
            return
        hits = sorted((r for r in self.records() if r.first is not None), key=order_key)
        if not hits:
            return
        first = hits[0]
        hit = first.first
        if hit is None:
            return
        if not self.said:
            self.said = True
            self.say(f"first {value_word(hit)}: rank {first.rank} ({self.paths.host}) at step {hit.step}, "
                     f"{where_text(hit)} ({first.path})")
        if first.skipped_step_count and not self.said_skip and not should_stop(first):
            self.said_skip = True
            self.say(f"rank {first.rank}: the grad scaler skipped step {first.skipped_steps[0]} (non-finite "
                     "gradients) and the job goes on")
        if self.stop_on_hit and any(should_stop(r) for r in hits):
            self.stopped = True
            self.say("--on-nonfinite stop: stopping the job")
            self.stop()
