"""A signal the user sent to ``triage launch`` itself (Ctrl-C, SIGTERM, SIGHUP), which the agent passed
to the launcher: node.json's ``forwarded_signals`` and ``forwarded_at`` (the unix time of the first),
read back as a stop from outside the job.

The live agent's closing line and ``triage report RUN_DIR`` tell the same story from it: the stop
is the verdict when nothing went wrong before it (the ranks' KeyboardInterrupts, SIGTERMs and exit
codes after it are its consequence), and the context after a failure or a hang that came first
(:mod:`triage.analysis.stopped` orders them by time). A record without ``forwarded_at`` (written
before it existed) gives a stop of no known time.
"""

from __future__ import annotations

import math
from typing import Any

from triage.layout import HostPaths
from triage.model.evidence import ExitInfo
from triage.regular_files import read_json_file

STOPPED = "stopped"      # triage.analysis.stopped's failure_kind of a stop from outside
_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


def forwarded_words(names: list[str], agent_pid: int | None, host: str | None) -> str:
    """How the stop is said, live (triage.agent.launch) and in the report alike."""
    pid = f" (pid {agent_pid})" if agent_pid is not None else ""
    where = f" on host {host}" if host else ""
    return (f"triage launch{pid}{where} received {', '.join(dict.fromkeys(names))} and passed it to the launcher; "
            "how the ranks ended after it is its consequence")


def forwarded_stop(host: HostPaths, node: Any) -> ExitInfo | None:
    """The stop that node.json records on ``host`` (None when no signal was forwarded there)."""
    if not isinstance(node, dict) or not isinstance(node.get("forwarded_signals"), list):
        return None
    names = [n for n in node["forwarded_signals"][:16] if isinstance(n, str) and n in _NAMES]
    if not names:
        return None
    when = node.get("forwarded_at")
    known = float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else None
    pid = node.get("agent_pid")
    return ExitInfo(time=known if known is not None and math.isfinite(known) else None,
                    message=forwarded_words(names, pid if isinstance(pid, int) and not isinstance(pid, bool)
                                            else None, host.host),
                    evidence=(str(host.node),), failure_kind=STOPPED, host=host.host)


def launcher_end(host: HostPaths, node: Any) -> dict[int, ExitInfo]:
    """A rank with no exit record of its own (a full disk kept it out, or it skipped its atexit) on a
    host whose launcher exited 0 by the agent's end record: the launcher's 0 is what is known of it.
    By the ranks of the host's directory; {} when the record holds no launcher exit status of 0."""
    if not launcher_exited_zero(node):
        return {}
    end = ExitInfo(exit_code=0, message="no exit record of its own; its launcher exited 0", evidence=(str(host.node),))
    return {rank: end for rank in host.ranks() if not host.rank(rank).exit.is_file()}


# How a rank's uncaught KeyboardInterrupt is said: CPython then ends the process by SIGINT (what its parent sees)
INTERRUPTED = "an uncaught KeyboardInterrupt (CPython then ends the process by SIGINT)"


def interrupted_stop(end: ExitInfo | None, rank: int, host: str) -> ExitInfo | None:
    """A rank that ended on an uncaught KeyboardInterrupt was interrupted (a SIGINT: Ctrl-C in a terminal it
    shares, a ``kill -INT`` of it): a stop from outside, told as one, never a failure of its own. When triage
    launch passed a SIGINT on to the job first, that stop comes first (by time) and this one is its consequence."""
    if end is None or end.message != INTERRUPTED:
        return None
    return ExitInfo(time=end.time, message=f"rank {rank} (host {host}) was interrupted: {INTERRUPTED}",
                    evidence=end.evidence, failure_kind=STOPPED, host=host)


def launcher_exited_zero(node: Any) -> bool:
    """The agent's end record (node.json) says the launcher exited 0."""
    return isinstance(node, dict) and node.get("ended") is not None and node.get("launcher_returncode") == 0 \
        and not isinstance(node.get("launcher_returncode"), bool)


def caught_exit(own: ExitInfo, host: HostPaths) -> ExitInfo:
    """A rank whose own exit record says a non-zero exit code on a host whose launcher exited 0. The
    in-rank hook records what ``sys.exit()`` was given (or 1 for an exception passed to sys.excepthook)
    when it sees it; a program that catches that SystemExit (or calls the hook itself) and goes on ends
    with another status, which only its parent sees. A launcher that exits 0 saw every rank exit 0
    (torchrun, srun and mpirun fail when one rank does; a rank started alone is the launcher): the
    launcher's record is the truth, the rank's own is told as what it saw."""
    said = f"exit code {own.exit_code}" + (f", {own.message}" if own.message else "")
    message = (f"exit code 0 (the launcher's record: it exited 0); its own exit record said {said}: "
               "a sys.exit() or an exception that the program caught, and went on")
    return ExitInfo(exit_code=0, time=own.time, message=message[:300],
                    evidence=tuple(dict.fromkeys((*own.evidence, str(host.node)))))


def read_node(host: HostPaths) -> Any:
    try:
        return read_json_file(host.node)
    except (OSError, ValueError):
        return None


__all__ = ["INTERRUPTED", "caught_exit", "forwarded_stop", "forwarded_words", "interrupted_stop", "launcher_end",
           "launcher_exited_zero", "read_node"]
