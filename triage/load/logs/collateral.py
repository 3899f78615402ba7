"""What a launcher's record and the lines around it say of a rank's failure: the one rank the launcher says failed
on its own (``launcher_first``, ``launcher_root``), a line after srun's record of the task's death
(``after_kill``), a bare exit that echoes a timeout or a failed barrier (``timeout_echo``, ``barrier_echo``), and
the note on tracebacks of several processes that end alike (``same_end_note``). (Part of triage.load.logs.finish's
conclusions.)"""

from __future__ import annotations

from triage.load.logs.scan import LogScan
from triage.model.evidence import ExitInfo
from triage.parsing.crashlog import CrashLine, CrashLineKind


def same_end_note(scan: LogScan, own: list[tuple[int, CrashLine, str]], line: CrashLine, rank: int) -> str | None:
    """Where tracebacks of no rank printed together (interleaved: several processes at once) end in the same exception
    line as the one the launcher's record gives its one failed rank (torchelastic's "failed (exitcode: 1) local_rank:
    0" names its first observed failure only): the exception is of that many processes, and which ranks the others
    were is not in the input."""
    if line.exc_type is None:
        return None
    orders = sorted(order for order, other, _ in own if other.text == line.text)
    same = min(len(orders), scan.open_together.get(orders[0], 0)) if orders else 0
    if same < 2:
        return None
    others = "the other was" if same == 2 else f"the other {same - 1} were"
    return (f" [{same} processes raised it: {same} tracebacks printed together end in it; the launcher's record names "
            f"rank {rank} only (its first observed failure): which rank {others} is not in this input]")


def after_kill(scan: LogScan, rank: int, order: int, line: CrashLine | None = None) -> bool:
    """A line of no rank after srun's record that the rank's task died by a signal, with no later srun record of that
    task after it: the caller's account of the step (a killed process prints nothing after its death), not the task's.
    A later record of the same task after the line (a requeued or restarted step's end) makes the line that run's.
    Not a GPU runtime's own words of a fault (ROCm's "Memory access fault by GPU node-2 ...", HSA_STATUS_ERROR_*, a
    CUDA error): the dying process's stderr, which reaches the job's output after srun's record of its signal, is
    what the signal ended (srun's record says how it ended)."""
    killed = scan.killed_at.get(rank)
    if killed is None or order <= killed or (line is not None and line.kind is CrashLineKind.CUDA_ERROR):
        return False
    return not any(killed < at and order < at for at in scan.srun_records.get(rank, ()))


def timeout_echo(scan: LogScan, launcher: ExitInfo) -> bool:
    """A launcher's bare record of an exit with an error code (torchrun's "exitcode: 1", no message) in
    an input that shows collective timeouts and no failure line other than their consequences: each
    waiting rank raises the timeout and exits with it (torchrun had stopped the job at once had a rank
    failed first), so the exit is the timeout's echo, not a first failure."""
    if not scan.first_timeout or launcher.exit_code is None or launcher.message:
        return False
    lines = [line for found in scan.failures.values() for _, line, _ in found] + [o[1] for o in scan.orphans]
    return all(line.collateral for line in lines)


def barrier_echo(scan: LogScan, rank: int, launcher: ExitInfo) -> bool:
    """A launcher's bare exit record of a rank that a failed monitored_barrier did not name, in an input
    whose failure lines are all consequences: the rank raised the barrier's error (it waited for the
    ranks named) and exited with it."""
    if launcher.exit_code is None or launcher.message or not any(
            lag.never_joined and lag.collective == 0 and rank not in lag.ranks for lag in scan.lagging):
        return False
    lines = [line for found in scan.failures.values() for _, line, _ in found] + [o[1] for o in scan.orphans]
    return all(line.collateral for line in lines)


def launcher_first(scan: LogScan) -> int | None:
    """The one rank the launcher's records say failed on its own (not torn down), if exactly one, whatever the log's
    failure lines say of it."""
    real = [rank for rank, info in scan.exits.items() if not info.ok and not info.collateral]
    return real[0] if len(real) == 1 else None


def launcher_root(scan: LogScan) -> int | None:
    """The one rank the launcher's summary says failed on its own (not torn down), if exactly one and no failure line
    of the log is that rank's (launcher_first, where the log's lines said nothing of it)."""
    first = launcher_first(scan)
    return first if first is not None and first not in scan.failures else None
