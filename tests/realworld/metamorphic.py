"""The same failure in other clothes: transformations that real pastes of a log have, each from a tool
that adds it, applied to a corpus log (tests/realworld/test_metamorphic.py).

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


def _github_actions(text: str) -> str:
    """A GitHub Actions step's log as its raw log page gives it: a time with seven fractional digits on every line,
    the step's ``##[group]Run ...`` head and ``##[endgroup]``."""
    stamp = "2026-11-26T10:00:01.1234567Z "
    lines = ["##[group]Run torchrun --nproc-per-node 4 train.py", "##[endgroup]", *text.split("\n")]
    return "\n".join(stamp + line for line in lines)


def _jupyter(text: str) -> str:
    """A notebook's cell that ran the job with ``!``, pasted with its prompts (the output as printed, then the next
    prompt)."""
    return f"In [7]: !torchrun --nproc-per-node 4 train.py\n{text}\n\nIn [8]: "


def _smart_quotes(text: str) -> str:
    """What a Windows editor or mail client makes of the quotes (Windows-1252's curly ones; the file is written in
    that code page, :data:`ENCODINGS`)."""
    out, double = [], False
    for i, char in enumerate(text):
        if char == '"':
            out.append("\u201d" if double else "\u201c")
            double = not double
        elif char == "'":
            before = text[i - 1] if i else " "
            out.append("\u2019" if before.isalnum() else "\u2018")
        else:
            out.append(char)
    return "".join(out)


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
    # a CI job's raw log: GitHub Actions' 7-digit times and its group markers; Jenkins' timestamper
    "github_actions": _github_actions,
    "jenkins_stamp": _prefix("[2026-11-26T10:00:01.123Z] "),
    # kubectl logs --prefix: the pod and container before every line
    "kubectl_prefix": _prefix("[pod/trainer-worker-1/pytorch] "),
    # Python logging around every line: basicConfig's default "%(levelname)s:%(name)s:" and a common
    # "%(asctime)s - %(name)s - %(levelname)s - " format
    "logging_root": _prefix("INFO:root:"),
    "logging_asctime": _prefix("2026-11-26 10:00:01,123 - trainer - INFO - "),
    # a Jupyter/IPython cell that ran the job, pasted with its prompts
    "jupyter": _jupyter,
    # a markdown code fence with a language tag (and GitHub's "``` console" with a space)
    "fence_console": lambda text: f"```console\n{text}\n```",
    "fence_spaced_tag": lambda text: f"``` python\n{text}\n```",
    # a paste whose every line ends in two spaces (markdown's line break)
    "two_trailing_spaces": _each_line(lambda _i, line: line + "  "),
    # Windows-1252's curly quotes, the file in that code page
    "cp1252_quotes": _smart_quotes,
    # a user's own print of each rank's lines: "rank 3: " before them
    "rank_print": _own_rank_label(lambda rank: f"rank {rank}: "),
}

# the code page a transformation's text is written in (UTF-8 unless named here)
ENCODINGS: dict[str, str] = {"cp1252_quotes": "cp1252"}

# Pairs that cannot keep the verdict, and why (each decided from the case's text, never by its name).
SKIPS: dict[str, str] = {
    "ray": "a text with no rank-prefixed line is unchanged (which worker printed a line is not in the text)",
    "srun_label": "a text with no rank-prefixed line is unchanged (nothing to label)",
    "mpirun_tag": "a text with no rank-prefixed line is unchanged (nothing to label)",
    "rank_print": "a text with no rank-prefixed line is unchanged (nothing to label)",
    "cp1252_quotes": "a text with no quote is unchanged, and one with characters Windows-1252 lacks cannot be written "
                     "in it",
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
    if name in ENCODINGS and not _encodable(transformed, ENCODINGS[name]):
        return None
    return transformed


def _encodable(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _rests_on_ranked_lines(text: str) -> bool:
    """Whether every line that names a failure is rank-prefixed: then dropping the others keeps the evidence."""
    return not any(split_rank_prefix(line).rank is None and _FAILURE_WORDS.search(line) for line in text.split("\n"))


_FAILURE_WORDS = re.compile(r"rror|xception|atchdog|imeout|imed out|ignal|SIG|xit|ailed|ailure|illed|"
                            r"terminated|rash|bort|core dumped|Segmentation|Traceback|NCCL WARN|ChildFailed|"
                            # (a reporter's Chinese: timed out, stuck, crashed, error)
                            r"超时|卡住|卡死|崩溃|报错",
                            re.IGNORECASE)
