"""What the lines around watchdog timeouts of a pasted log say about rank 0 when it is not among them (pure).

- A python-logging record at DEBUG/INFO level (``2024-05-07 15:51:09,140 - root - INFO - ...``,
  ``INFO:__main__:...``, ``[2024-05-07 15:51:09,140][trainer][INFO] - ...``, loguru's ``... | INFO | ...``)
  comes from a logger every rank of a script may run: unless its text names rank 0, it is not
  evidence that rank 0 alone was at other work.
- A Python warning's source line (the code line printed after ``file.py:504: UserWarning: ...``) and a
  library's advisory about the input or an API (``... will result in indexing errors``, ``is deprecated``)
  are printed wherever that code runs: they do not show rank 0 alone at other work; a trainer's metric dict
  (``{'loss': 0.69, 'epoch': 0.0}``) is the training loop's own report (routine progress).
- The reporter's own words (a first-person sentence, a greeting, an emoticon, a sentence that says the job
  hangs or introduces the paste) are no rank's output: the lines above them are not the ones just before the
  timeouts, so they cannot show rank 0 at other work. (A markdown fence would say where the paste starts, but
  the text cleaner drops fences before the scan: the words themselves are what is read.)
- A line told again word for word (time stamps aside) three times or more among the lines before the timeouts
  (``There are 6 training processes running``) is printed by several processes or by a routine that runs over
  and over: it does not show rank 0 alone at other work.
- A Python logger's source-location head (DeepSpeed's ``[torch_checkpoint_engine.py:33:commit] ...``, its
  time and level cut by the paste) is a logging record too; DeepSpeed's rank-chosen records say ``[Rank N]``.
- Ranks 1..N all time out in one collective of the default group and no line of rank 0 is in the
  input (nor a world size above N+1): rank 0 is the one rank that never joined it.
"""

from __future__ import annotations

import re

from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import RankEvidence

_STAMP = r"\[?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
_LEVEL = r"\[?(?:DEBUG|INFO|NOTICE)\s*\]?"
_LOGGER_RECORD = lazy_regex(
    # the record's time (a paste's cleaning may have cut it), up to 3 fields (logger, module, process), the level
    rf"^(?:{_STAMP}\s*[-|:]?\s*)?(?:(?:\[[\w.<>-]+\]|\([\w.-]+\)|[\w.<>-]+)\s*[-|:]?\s*){{0,3}}?{_LEVEL}(?:\s*[-|:]|\s+(?=\S))"
    rf"|^(?:DEBUG|INFO):[\w.<>-]+:"                      # logging.basicConfig's default
    rf"|^(?:{_STAMP}\s*)?(?:{_LEVEL}\s*)?\[[\w.-]+\.py:\d+:[\w<>]+\]\s")   # a source-location head (DeepSpeed's)
_NAMES_RANK0 = lazy_regex(r"\b(?:rank|process)\s*[:=#]?\s*0\b|\[rank0\]|\bmain process\b|\bglobal_rank\s*[:=]\s*0\b",
                          re.IGNORECASE)

# a log viewer's and a logger's leading time stamps (a viewer may add its own before the logger's)
_STAMPS = lazy_regex(rf"^(?:\s*{_STAMP})+")
REPEATED_LINE = 3
_WARNING_HEAD = lazy_regex(r":\d+: \w*Warning\b")
_ADVISORY = lazy_regex(r"\bwill result in\b|\bis deprecated\b|\bwill be removed\b|\bare deprecated\b|"
                       r"\blonger than the specified maximum\b|\bis not (?:set|supported)\b|\bwere not initialized\b")
_VALUE = r"['\"][\w/ .-]+['\"]: -?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|nan|inf)"
_METRIC_DICT = lazy_regex(rf"^\{{{_VALUE}(?:, {_VALUE})*\}}$")


_PROSE = lazy_regex(r"(?:^|[\s,(])(?:I|I'm|I've|I'd)\s+(?:\w+ly\s+)?[a-z]{2,}|\b[Mm]y\s+[a-z]|^(?:Dear|Hi|Hello|Hey)\b|"
                    r"\b[Tt]hanks?\b|\bThank you\b|(?:^|\s)[:;]-?[()D](?:\s|$)|"
                    # the reporter telling what went wrong, or introducing the paste
                    r"\b(?:hangs|hung|(?:gets?|got|is|was|being) stuck|freezes)\b|\b(?:the following|as follows)\b.*:$")


def reporters_words(text: str) -> bool:
    """``text`` (a stripped line) is the reporter's, not a process's: a first-person sentence, a greeting,
    thanks, an emoticon, a sentence saying the job hangs or introducing the paste."""
    return _PROSE.search(text) is not None


def printed_by_any_rank(tail: tuple[str, ...], index: int) -> bool:
    """``tail[index]`` is a line that code every rank runs prints (the list above), or one told again word for
    word (its time stamps aside) among the lines before the timeouts: printed by several processes, or by a
    routine that runs over and over; no evidence of rank 0's own work."""
    text = tail[index].strip()
    bare = _STAMPS.sub("", text).strip()
    if sum(1 for line in tail if _STAMPS.sub("", line).strip() == bare) >= REPEATED_LINE:
        return True
    if index > 0 and _WARNING_HEAD.search(tail[index - 1]) and not _WARNING_HEAD.search(text):
        return True               # the source line a warning quotes after its head
    return _ADVISORY.search(text) is not None


def metric_dict(text: str) -> bool:
    """A trainer's report of one step (``{'loss': 0.69, 'learning_rate': 4e-06, 'epoch': 0.0}``)."""
    return _METRIC_DICT.match(_STAMPS.sub("", text).strip()) is not None     # (after a viewer's stamps too)


_UNROOTED = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "barrier", "_allgather_base",
             "_reduce_scatter_base", "allgather_into_tensor_coalesced", "reduce_scatter_tensor_coalesced")


def logger_record_of_any_rank(text: str) -> bool:
    """A DEBUG/INFO logging record whose text does not say rank 0 printed it."""
    return _LOGGER_RECORD.match(text.strip()) is not None and _NAMES_RANK0.search(text) is None


def other_of_two(timed_out: list[int], ranks: tuple[RankEvidence, ...], at: tuple[str | None, int | None, str],
                 world: object, stopped: tuple[int, ...], coverage: str) -> tuple[Verdict, Finding] | None:
    """One rank of a job of two timed out in a collective of the default group and the other shows no line: the
    other never joined it (in a job of two, rooted or not, the rank a waiting rank waits for is the other). Two
    ranks: a world size of 2 that the input states, or torchrun's agent running two workers (the one that failed,
    and one other it stopped, ``stopped``). The agent's closing signal to it says it was alive: stuck outside
    (inferred); otherwise it is missing, and whether it died is not in the text."""
    pg, seq, where = at
    if len(timed_out) != 1 or timed_out[0] not in (0, 1) or pg not in (None, "0") or seq is None:
        return None
    rank, other = timed_out[0], 1 - timed_out[0]
    if any(r.rank != rank for r in ranks):
        return None
    mine = next((r for r in ranks if r.rank == rank), None)
    alive = [pid for pid in stopped if mine is None or pid != mine.pid]
    # (the agent's record of the worker that failed is this rank's exit; the one it stopped is another process)
    two_workers = mine is not None and mine.exit is not None and len(stopped) == len(alive) == 1
    if not (world == 2 or (world is None and two_workers)):
        return None
    job = ("a job of two ranks" if world == 2 else "torchrun's agent ran two workers here (ranks of other nodes, "
           "if the job had any, are not in this input)")
    if len(alive) == 1:
        body = (f"rank {other} (inferred) never joined {where}, which rank {rank} timed out in: {job}, and after rank "
                f"{rank} failed the agent stopped the other, pid {alive[0]}, so rank {other} was alive and elsewhere "
                f"(at other work, or in another collective); what it was doing is not in this input ({coverage}): "
                f"rank {other}'s own log, or its stack while it hangs (py-spy dump --pid {alive[0]}), would settle it")
        kind = VerdictKind.STUCK_OUTSIDE_COLLECTIVE
    else:
        body = (f"rank {other} (inferred) never joined {where}: rank {rank} timed out in it, in {job}, and rank "
                f"{other} has no line in this input ({coverage}); whether it died, waits elsewhere or was at other "
                f"work is not in the text: rank {other}'s own log, or its stack (py-spy dump --pid <rank {other}'s "
                "pid>), would settle it")
        kind = VerdictKind.MISSING_RANK
    verdict = headline.verdict(kind, body, culprit_ranks=(other,), process_group=pg, seq=seq)
    return verdict, Finding(kind.value, (other,), body, root_cause=True)


def absent_rank0(timed_out: list[int], ranks: tuple[RankEvidence, ...], at: tuple[str | None, int | None, str],
                 ops: list[str], world: object, coverage: str) -> tuple[Verdict, Finding] | None:
    """Ranks 1..N (at least two) all timed out in one unrooted collective (``at``: pg, seq, as words) of the
    default group, and rank 0 shows no line and no timeout while the input states no larger job: rank 0
    never joined that collective. (In a rooted one, a broadcast or a reduce, the root often completes
    its side while the others wait: its absence says nothing.)"""
    pg, seq, where = at
    top = max(timed_out, default=0)
    if len(timed_out) < 2 or timed_out != list(range(1, top + 1)) or pg not in (None, "0") or seq is None:
        return None
    if not ops or any(op not in _UNROOTED for op in ops):
        return None
    if any(r.rank == 0 or r.rank > top for r in ranks) or (isinstance(world, int) and world != top + 1):
        return None
    body = (f"rank 0 (inferred) never joined {where}: {rank_word(timed_out)} timed out in it, and rank 0, the only "
            f"rank of 0-{top} without a timeout, has no line in this input ({coverage}); whether it died, waits "
            "elsewhere or was at other work is not in the text: rank 0's own log, or its stack "
            "(py-spy dump --pid <rank 0's pid>), would settle it")
    verdict = headline.verdict(VerdictKind.MISSING_RANK, body, culprit_ranks=(0,), process_group=pg,
                               seq=seq)
    return verdict, Finding(VerdictKind.MISSING_RANK.value, (0,), body, root_cause=True)
