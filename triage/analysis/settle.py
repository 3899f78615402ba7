"""What would settle a verdict that names no culprit (pure): when the input cannot tell, the
summary says so and names the one thing that would."""

from __future__ import annotations

from collections.abc import Mapping

from triage.analysis.ranks import rank_word
from triage.lazy_regex import lazy_regex
from triage.model.evidence import RankEvidence

# What would name the rank of a failure no line ties to one.
SETTLE_RANK = ("which rank: the ranks' own output with their rank prefixes (torchrun --tee 3, or the job run under "
               "`triage launch`) would tell")
# What would name the rank that failed first, when the input shows only later failures.
SETTLE_FIRST = ("the log of the rank that failed first (every rank's output: torchrun --tee 3, or the job run under "
                "`triage launch`) would settle it")
MAX_NAMED_ABSENT = 4
# The hints above and elsewhere name torchrun's option; a job another launcher started gets that launcher's
# (triage.parsing.launcher_kind names the launcher the input shows; torchrun's stays where it shows none)
TORCHRUN_TEE = "torchrun --tee 3"
_BOTH = f"{TORCHRUN_TEE}, srun --label"
_RANK_OUTPUT = {
    "torchx": "`torchx log APP_HANDLE`: every replica's lines under its role/replica head",
    "deepspeed": "deepspeed --enable_each_rank_log DIR",
    "mpirun": "mpirun --tag-output or --output-filename DIR",
    "mpiexec": "mpiexec -prepend-rank",
    "srun": "srun --label",
}


def fit_launcher(text: str, launcher: str | None) -> str:
    """``text`` with torchrun's option for each rank's output replaced by the option of the launcher the input
    shows (unchanged where it shows torchrun's, or none)."""
    hint = _RANK_OUTPUT.get(launcher or "")
    if hint is None or TORCHRUN_TEE not in text:
        return text
    return text.replace(_BOTH, hint).replace(TORCHRUN_TEE, hint)


def settle_hang(ranks: tuple[RankEvidence, ...], timed_out: list[int], cov: Mapping[str, object]) -> str:
    """The one thing that would name the rank the waiting ranks waited for: the log of the few
    ranks the input lacks, else every rank's log or stack."""
    world = cov.get("world_size")
    shown = {r.rank for r in ranks} | set(timed_out)
    if isinstance(world, int) and 0 < world - len(shown) <= MAX_NAMED_ABSENT:
        absent = [r for r in range(world) if r not in shown]
        return f"the log of {rank_word(absent)} would settle it"
    return ("every rank's log (torchrun --tee 3), or the job run under `triage launch` (each rank's stack when it "
            "hangs), would settle it")


# A set-up failure in which no rank is at fault: what would settle it is the port or the node, never a rank
_PORT_TAKEN = lazy_regex(r"EADDRINUSE|[Aa]ddress already in use|failed to listen on any local network address")
_PORT = lazy_regex(r"\bport:? (\d{2,5})\b|:(\d{2,5})\b")
_SSH = lazy_regex(r"via ssh|ssh exited|ssh: connect to host|Permission denied \(publickey")


def settle_setup(text: str, host: str | None) -> str | None:
    """What would settle a failure of the job's set-up that no rank caused (the store's port taken, a
    node the launcher cannot ssh to), or None for any other failure."""
    if _PORT_TAKEN.search(text):
        found = _PORT.search(text)
        port = next((g for g in found.groups() if g), None) if found else None
        where = f"on {host}" if host else "on the node that runs the store (MASTER_ADDR)"
        what = f"port {port}" if port else "the store's port (MASTER_PORT)"
        probe = f"`ss -ltnp 'sport = :{port}'`" if port else "`ss -ltnp`"
        return (f"{probe} {where} would settle it: it names the process that holds {what} (another job, a stale "
                "run); free it or choose another MASTER_PORT (--master_port)")
    if _SSH.search(text):
        target = host or "NODE"
        return (f"`ssh -o BatchMode=yes {target} true` from the node that launches the job would settle it (keys, "
                "known_hosts, the hostfile's names)")
    return None
