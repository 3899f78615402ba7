"""Small pieces of the node agent (:mod:`triage.agent.launch.supervisor`) that need none of its state."""

from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import BinaryIO

from triage.agent.state import LocalRankStatus, MonitorAction


def exit_code_of(returncode: int) -> int:
    """The launcher's exit code; killed by signal N gives 128+N (shell convention)."""
    return 128 - returncode if returncode < 0 else returncode


class NullMonitor:
    """Used when the hang monitor cannot be built: the job still runs, with logs and heartbeats."""

    def on_tick(self, ranks: Sequence[LocalRankStatus], now: float) -> MonitorAction | None:
        return None

    def on_output(self, rank: int, chunk: bytes) -> None:
        return None

    def on_rank_exit(self, status: LocalRankStatus) -> MonitorAction | None:
        return None

    def on_outcome(self, action: MonitorAction, busy: str | None, gone: bool = False) -> None:
        return None


def isatty(stream: BinaryIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def signame(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"
