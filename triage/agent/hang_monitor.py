"""Hang monitor and the handling of its actions (placeholder until the hang-detection work lands).

Interface used by the node agent (``triage launch``):

- ``make_monitor(ctx, options) -> Monitor``: built once when the agent starts.
- ``handle_action(ctx, options, action, ranks) -> ActionOutcome``: runs in a thread of the agent
  (the log pump keeps running); collects the node bundle, prints the console lines and the
  report, and says whether the agent must stop the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from triage.agent.state import AgentContext, LocalRankStatus, Monitor, MonitorAction


@dataclass(frozen=True)
class ActionOutcome:
    bundle: Path | None          # the node bundle written, if any
    stop_job: bool               # the agent must stop the job and exit with ExitCode.HANG_DETECTED
    message: str = ""            # already printed; kept for logs/tests


class _NullMonitor:
    def on_tick(self, ranks: Sequence[LocalRankStatus], now: float) -> MonitorAction | None:
        return None

    def on_output(self, rank: int, chunk: bytes) -> None:
        return None

    def on_rank_exit(self, status: LocalRankStatus) -> MonitorAction | None:
        return None


def make_monitor(ctx: AgentContext, options: Mapping[str, Any]) -> Monitor:
    return _NullMonitor()


def handle_action(
    ctx: AgentContext, options: Mapping[str, Any], action: MonitorAction, ranks: Sequence[LocalRankStatus]
) -> ActionOutcome:
    return ActionOutcome(bundle=None, stop_job=False, message="")
