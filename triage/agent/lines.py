"""Every line the node agent prints goes through :func:`say`.

On a job of several nodes each line names its host (``triage[node2]: ...``): all nodes write to one
output file under SLURM. On a one-node job the host is left out (``triage: ...``): there is only one.
The agent calls :func:`configure` at start (from torchrun's ``--nnodes`` and SLURM's node count) and
:func:`mark_multi_node` when another node shows up in the shared run directory.

While the agent prints a report, rank output waits (:func:`holding_rank_output`): the console writer
of the log pump checks :func:`rank_output_open` and writes what it held right after the report.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TextIO

from triage import console
from triage.parsing.torchrun_args import parse_torchrun_args, read_nnodes, torchrun_index

_state: dict[str, str | bool | None] = {"host": None, "multi": False}
_lock = threading.Lock()
_open = threading.Event()
_open.set()


def multi_node_job(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    """More than one node: SLURM says so, or torchrun's ``--nnodes`` asks for more than one."""
    for var in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        with contextlib.suppress(ValueError):
            if int(env.get(var) or "1") > 1:
                return True
    at = torchrun_index(argv)
    if at is None:
        return False
    nnodes, _problem = read_nnodes(parse_torchrun_args(argv, at).get("--nnodes") or "")
    return nnodes is not None and nnodes[1] > 1


def configure(host: str, multi_node: bool) -> None:
    with _lock:
        _state["host"], _state["multi"] = host, multi_node


def mark_multi_node() -> None:
    with _lock:
        _state["multi"] = True


def prefix() -> str:
    """``triage[node2]`` on a multi-node job, ``triage`` on one node."""
    host = _state["host"]
    return f"triage[{host}]" if _state["multi"] and host else "triage"


def say(text: str, stream: TextIO | None = None) -> None:
    """Print one agent line (:func:`triage.console.say`: sanitized, never raises), with its host on a
    job of several nodes."""
    host = _state["host"]
    console.say(text, host if _state["multi"] and isinstance(host, str) and host else None, stream)


@contextlib.contextmanager
def holding_rank_output() -> Iterator[None]:
    """Rank output waits while the body runs (a report prints), and is written right after."""
    _open.clear()
    try:
        yield
    finally:
        _open.set()


def rank_output_open(timeout: float) -> bool:
    """Wait (at most ``timeout`` s) until no report is printing; False if one still is."""
    return _open.wait(timeout)


__all__ = ["configure", "holding_rank_output", "mark_multi_node", "multi_node_job", "prefix",
           "rank_output_open", "say"]
