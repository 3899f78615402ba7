"""Bounded fan-out over nodes with a rich progress bar on stderr."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@dataclass(frozen=True)
class NodeOutcome:
    node: str
    bundle: Path | None = None      # the node bundle, now in the local run directory
    error: str | None = None        # one line: why the node gave nothing
    duration_s: float = 0.0
    bytes_moved: int = 0

    @property
    def ok(self) -> bool:
        return self.bundle is not None and self.error is None


def _guarded(work: Callable[[str], NodeOutcome], node: str) -> NodeOutcome:
    started = time.monotonic()
    try:
        outcome = work(node)
    except Exception as error:  # noqa: BLE001 - one node's failure never stops the others
        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        return NodeOutcome(node=node, error=str(message), duration_s=time.monotonic() - started)
    return outcome


def fan_out(nodes: Sequence[str], work: Callable[[str], NodeOutcome], width: int,
            progress: bool = True, what: str = "collecting") -> list[NodeOutcome]:
    """Run ``work`` on every node, at most ``width`` at a time; results in the order of ``nodes``."""
    results: dict[str, NodeOutcome] = {}
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False, disable=not progress) as bar:
        task = bar.add_task(f"{what} from {len(nodes)} node(s)", total=len(nodes))
        with ThreadPoolExecutor(max_workers=max(1, min(width, len(nodes) or 1))) as pool:
            futures = {pool.submit(_guarded, work, node): node for node in nodes}
            for future in as_completed(futures):
                outcome = future.result()
                results[outcome.node] = outcome
                bar.advance(task)
    return [results[node] for node in nodes]
