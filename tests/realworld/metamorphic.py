"""The same failure in other clothes: transformations that real pastes of a log have, each from a tool
that adds it, applied to a corpus log (tests/realworld/test_metamorphic.py, bench/bench_metamorphic.py).

Each transformation takes the log's text and returns the text a user would paste, or None where it
cannot keep the verdict for a reason that it states in :data:`SKIPS` (a prefix that itself names a rank).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.realworld.scoring import Case
from triage.cli import main
from triage.parsing.log_prefix import split_rank_prefix

Transform = Callable[[str], "str | None"]
# the collectives a summary names (the verdict's collective, where the case is labelled with one)
_COLLECTIVE = re.compile(r"\b(?:all_?reduce|all_?gather(?:_into_tensor|_base)?|reduce_?scatter(?:_tensor|_base)?|"
                         r"broadcast|barrier|all_?to_?all(?:_base)?|"
                         r"ALLREDUCE|ALLGATHER|_ALLGATHER_BASE|REDUCE_SCATTER|_REDUCE_SCATTER_BASE|BROADCAST|"
                         r"ALLTOALL(?:_BASE)?|COALESCED|BARRIER)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Seen:
    code: int
    kind: str | None
    subkind: str | None
    culprits: tuple[int, ...]
    collectives: frozenset[str]


def verdict_of(path: Path) -> Seen:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(path), "--format", "json"])
    verdict = json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {}
    summary = str(verdict.get("summary") or "")
    collectives = frozenset(m.group(0).lower().replace("_", "") for m in _COLLECTIVE.finditer(summary))
    return Seen(code, verdict.get("kind"), verdict.get("subkind"),
                tuple(sorted(int(r) for r in verdict.get("culprit_ranks") or ())), collectives)


def _each_line(decorate: Callable[[int, str], str]) -> Transform:
    def transform(text: str) -> str:
        return "\n".join(decorate(i, line) for i, line in enumerate(text.split("\n")))
    return transform


def _prefix(prefix: str) -> Transform:
    """A tag on every line (the tools below tag empty lines too)."""
    return _each_line(lambda _i, line: prefix + line)


def _journald(i: int, line: str) -> str:
    # journalctl -u trainer (short format): "Nov 26 10:00:01 gpu-node-3 python[48213]: text"
    return f"Nov 26 10:{i // 60 % 60:02d}:{i % 60:02d} gpu-node-3 python[48213]: {line}"


def _wrap(width: int) -> Transform:
    """A terminal's hard wrap: every line longer than ``width`` cut every ``width`` columns."""
    def transform(text: str) -> str:
        out = []
        for line in text.split("\n"):
            line = line.expandtabs(8)
            out.extend([line[i:i + width] for i in range(0, len(line), width)] or [""])
        return "\n".join(out)
    return transform


def _own_rank_label(label: Callable[[int], str]) -> Transform:
    """A launcher that tags each process's lines (srun --label with one task per rank, mpirun --tag-output):
    a line that names its rank gets that rank's label; a line no rank owns (the launcher's, the batch
    script's) none."""
    def transform(text: str) -> str:
        out = []
        for line in text.split("\n"):
            rank = split_rank_prefix(line).rank if line[:1] in ("[", "(") else None
            out.append(label(rank) + line if rank is not None else line)
        return "\n".join(out)
    return transform


def _only_ranked(text: str) -> str | None:
    """Every line that carries no rank prefix dropped (a user who grepped for ``rank``); None where the text has no
    rank-prefixed line at all (nothing would be left)."""
    kept = [line for line in text.split("\n") if split_rank_prefix(line).rank is not None]
    return "\n".join(kept) if kept else None


TRANSFORMS: dict[str, Transform] = {
    # kubectl logs --timestamps: RFC 3339 with nanoseconds
    "kubectl_timestamps": _prefix("2026-11-26T10:00:01.123456789Z "),
    # docker compose up / logs: the service's container name padded to the longest, then " | "
    "compose": _prefix("trainer-1  | "),
    # journalctl's short format: time, host, process[pid]
    "journald": _each_line(_journald),
    # Ray's worker-output prefix on the driver's console: each rank's worker process its own pid
    "ray": _own_rank_label(lambda rank: f"(RayTrainWorker pid={48213 + rank}, ip=10.0.0.6) "),
    # Python logging's default asctime ("2026-11-26 10:00:01,123") in brackets, and ISO 8601 with T
    "bracket_comma_stamp": _prefix("[2026-11-26 10:00:01,123] "),
    "iso_t_stamp": _prefix("2026-11-26T10:00:01+00:00 "),
    # srun --label, one task per rank: "3: " before rank 3's lines
    "srun_label": _own_rank_label(lambda rank: f"{rank}: "),
    # mpirun --tag-output: "[jobid,rank]<stderr>:"
    "mpirun_tag": _own_rank_label(lambda rank: f"[1,{rank}]<stderr>:"),
    "ansi": _each_line(lambda _i, line: f"\x1b[0;36m{line}\x1b[0m" if line else line),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    # GitHub-rendered paste copied back: an indented code block's 4 spaces, a quote's "> "
    "indent4": _prefix("    "),
    "quote": _prefix("> "),
    # a terminal's hard wrap at 80 and 120 columns
    "wrap80": _wrap(80),
    "wrap120": _wrap(120),
    "tabs_to_spaces": lambda text: text.expandtabs(4),
    "only_ranked_lines": _only_ranked,
}

# Pairs that cannot keep the verdict, and why (each decided from the case's text, never by its name).
SKIPS: dict[str, str] = {
    "ray": "a text with no rank-prefixed line is unchanged (which worker printed a line is not in the text)",
    "srun_label": "a text with no rank-prefixed line is unchanged (nothing to label)",
    "mpirun_tag": "a text with no rank-prefixed line is unchanged (nothing to label)",
    "only_ranked_lines": "the text has no rank-prefixed line, or its verdict rests on a line no rank owns "
                         "(the label's evidence would be dropped)",
}


def applies(name: str, case: Case, text: str) -> str | None:
    """The transformed text, or None where the pair is skipped for the reason in :data:`SKIPS`."""
    transformed = TRANSFORMS[name](text)
    if transformed is None or (name in SKIPS and transformed == text):
        return None
    if name == "only_ranked_lines" and not _rests_on_ranked_lines(text):
        return None
    return transformed


def _rests_on_ranked_lines(text: str) -> bool:
    """Whether every line that names a failure is rank-prefixed: then dropping the others keeps the evidence."""
    return not any(split_rank_prefix(line).rank is None and _FAILURE_WORDS.search(line) for line in text.split("\n"))


_FAILURE_WORDS = re.compile(r"rror|xception|atchdog|imeout|imed out|ignal|SIG|xit|ailed|ailure|illed|"
                            r"terminated|rash|bort|core dumped|Segmentation|Traceback|NCCL WARN|ChildFailed",
                            re.IGNORECASE)
