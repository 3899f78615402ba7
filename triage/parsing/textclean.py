"""Pasted text made readable line by line: what users copy out of terminals, CI pages and GitHub
issues carries decorations that are not part of the log.

Removed: ANSI colours (also those whose escape byte a copy lost), CR line ends, trailing spaces, GitHub
``> `` quote markers and inline-code
backticks, markdown fences, per-line timestamps (``2026-09-17 13:40:05 ``,
``[2024-05-01 10:00:00,123] ``, glog ``I0501 ...] ``), CI step prefixes (``12 | ``, ``#14 12.3 ``) and a
log viewer's table column (``  | 2024-08-23T22:22:51.874Z | ``);
line numbers a viewer put before every line (``[80746] ``, ``123\t``);
a JSON log record (``{"log": "...", "stream": "stderr", "time": ...}`` from a container runtime,
``{"level": ..., "msg": ...}`` from a structured logger) is read as its text.
Joined: lines that a terminal hard-wrapped in the middle of a field. Split: two processes' lines glued
together where the first had no line end (a progress bar redrawn with ``\r``), at the second one's
launcher prefix (``...it/s][default2]:[E ...``). Launcher prefixes (``[rank3]:``,
``0: ``, ``[default0]:``) are not touched here: they carry the rank (see :mod:`triage.parsing.log_prefix`).

Every function takes text and never raises.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from os.path import commonprefix

from triage.lazy_regex import lazy_regex
from triage.parsing.glued_traceback import MARKER as GLUED_MARKER
from triage.parsing.glued_traceback import split_glued

_ANSI = lazy_regex(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# ANSI colours whose escape byte a copy lost (a web page's or an issue's paste: "[36m(RayTrainWorker pid=42)[0m
# ValueError: ..."): read only on a line that holds the reset "[0m", and never where "]" closes the bracket, so that a
# bracketed duration ("[5m]") or a word ("[more]") is never taken for one
_ANSI_REMNANT = lazy_regex(r"\[(?:\d{1,3}(?:;\d{1,3})*m|m(?![A-Za-z]))(?!\])")
_QUOTE = lazy_regex(r"^(?:>[ \t]?)+")
_FENCE = lazy_regex(r"^\s*(?:```|~~~)[\w+-]*\s*$")
_DIGITS = lazy_regex(r"\d+")
_COLUMN_GAP = lazy_regex(r"(?<=\S)  +(?=\S)")
_RULE = lazy_regex(r"[ \t]*-{2,}(?: +-{2,})+[ \t]*")     # a table's rule under its header, one dash run a column
_RULE_GAP = lazy_regex(r"(?<=-) +(?=-)")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# A timestamp standing at the start of a line, with what usually follows it (a level, a bracket).
_STAMP = lazy_regex(
    r"^\s*(?:"
    r"\[?(?P<iso>\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d+)?)(?:Z|[+-]\d\d:?\d\d| ?UTC)?\]?"
    r"|\[?(?P<syslog>(?:" + _MONTHS + r") +\d+ \d\d:\d\d:\d\d)\]?"
    # journald's short format goes on with the host and the process: "Nov 26 10:00:01 node3 python[4821]: "
    r"(?: [\w.-]+ [\w./-]+\[\d+\]:(?= |$))?"
    r"|(?P<glog>[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+) +\d+ (?P<glogfile>[\w./-]+):\d+\]"
    # a time of day alone ("[12:00:00] ", "12:00:00.123 "), only before a launcher's rank prefix ("3: ", "[rank3]:"):
    # elsewhere such a head is a library's own (dmlc's "[05:05:29] file.cc:52: "), read with it
    r"|\[?(?P<clock>\d\d:\d\d:\d\d(?:[.,]\d+)?)\]?(?=\s+(?:\d{1,5}: |\[(?:rank|default)\d+\]:))"
    r")(?:\s*[-|:]\s|\s+|$)"
)
# Python logging's heads around a message: basicConfig's default "%(levelname)s:%(name)s:" ("INFO:root:",
# "WARNING:torch.distributed.run:"), and after a time "%(name)s - %(levelname)s - " ("trainer - INFO - ") or the level
# (each read through only where most lines carry it: a paste that went through a logger as a whole)
_LOGGING_HEAD = lazy_regex(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.<>-]*:")
_LOGGING_AFTER_STAMP = lazy_regex(r"^(?:[\w.<>-]+ - )?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) -(?: |$)")
# curly quotes (a Windows editor's, Windows-1252's, a mail client's) read as the straight ones a log prints
_STRAIGHT_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
# a CI runner's own markers (GitHub Actions' "##[group]Run ...", "##[endgroup]") and a notebook's prompt
# ("In [7]: !torchrun ...", "Out[7]: "): what stands after them is the line
_RUNNER_MARK = lazy_regex(r"^(?:##\[(?:group|endgroup|section|command)\]|(?:In|Out) ?\[\d*\]: ?)")
_CI_STEP = lazy_regex(r"^\s*(?:#\d+ \d+\.\d+ |\d{1,6} \| |\| (?=\S))")   # "| " alone: a viewer's table column
# docker compose's service tag: the container's name ("trainer-1", "proj_trainer_1"), padded, then "| "
_COMPOSE = lazy_regex(r"[a-z0-9][\w.-]*[-_]\d+ +\| ?")
# A launcher prefix glued mid-line after another process's output that ended without a line end
# ("... 4866.01 examples/s][default2]:[E ..."): not after a space (a prefix chain "(pid=1) [rank1]:",
# "job [stderr] [rank3]:"), after another prefix ("[default1]:[rank1]:") or inside brackets and quotes.
_GLUED_PREFIX = lazy_regex(r"(?<=[^\s:(\[\"'`])(?=\[(?:rank\d+|default\d+)\]:)")
_FIELDS_OPEN = lazy_regex(r"\w\((?:[^()]|\(ms\))*=[^()]*$")   # "WorkNCCL(SeqNum=5, Op" cut before ")"
_STARTS_NEW = lazy_regex(
    r"^\s*(?:\[rank\d+\]|\[[\w.-]+:\d+\]|\[default\d+\]|\d+: |\[?\d{4}-\d\d-\d\d|[IWEF]\d{4} |Traceback|"
    r"[\w.-]+:\d+:\d+ \[\d+\]|\S+Error|\(\w+ pid=|\[pod/[\w.-]+/[\w.-]+\] |"
    r"\[\d+\]:\s*$|(?:time|host|rank|exitcode|error_file|traceback)\s*:|"       # torchrun's failure records
    r"\[[IWEF](?:\d{4} [\d:.]+(?: \d+)?)? ?[\w./-]+\.(?:cpp|cc|hpp|h|py):\d+\])"   # [E ProcessGroupNCCL.cpp:467]
)
# (of those, the heads a launcher or logger puts on every line)
_PREFIXED = lazy_regex(
    r"^\s*(?:\[rank\d+\]|\[[\w.-]+:\d+\]|\[default\d+\]|\d+: |\[?\d{4}-\d\d-\d\d[ T]\d\d:|[IWEF]\d{4} \d\d:|"
    r"[\w.-]+:\d+:\d+ \[\d+\] |\(\w+ (?:(?:TP|rank=)\d+ )?pid=|\[pod/[\w.-]+/[\w.-]+\] |"
    # Open MPI's --tag-output "[1,3]<stderr>:", horovodrun's "[3]<stderr>:", Lightning's "[rank: 3] ", Determined's
    # "5c902731 [rank=3] || " (vLLM's "(VllmWorker TP3 pid=9) " above)
    r"\[\d+(?:,\d+)?\]<std(?:out|err|diag)>:|\[rank: ?\d+\] |[0-9a-f]{8} \[rank=\d+\] \|\| |"
    r"\[[IWEF](?:\d{4} [\d:.]+(?: \d+)?)? ?[\w./-]+\.(?:cpp|cc|hpp|h|py):\d+\])"
)
# a long list of numbers cut mid-number at the terminal's width ("tasks 580,588,...,1012,10" then "20: Segmentation
# fault"): the rest of the last number, then what followed the list, looks like srun's "20: " label but is none
_NUMBER_LIST_END = lazy_regex(r"(?:\d+[,-]){3,}\d+$")
_NUMBER_REST = lazy_regex(r"^\d+(?:[,-]\d+)*[:,]")
_LABEL = lazy_regex(r"^\d+: ")
_RULE = lazy_regex(r"^[-=_*#~ ]{5,}$|^\s*\[\d+\]:\s*$")     # a record's rule or its "[1]:" head
_RULE_MARKS = "-=_*#~"
# lines their writer always starts afresh: the C++ runtime's terminate message, Python's traceback head and fatal error
_OWN_LINE = lazy_regex(r"^(?:terminate called (?:after|without)|Traceback \(most recent call last\):|"
                       r"Fatal Python error: |"
                       # Slurm's clients' own messages ("srun: error: Task launch for ...", "slurmstepd: error: ***
                       # STEP ..."): each is printed on a line of its own, never the rest of a cut one
                       r"(?:srun|slurmstepd|sbatch|salloc): (?:error|warning|Job step|Force Terminated|Terminating)\b|"
                       # a shell's report of a command that died of a signal, on a line of its own: bash's and dash's
                       # "Aborted (core dumped)", "Segmentation fault", "Killed" (alone, or in a script "./run.sh: line
                       # 3: 4242 Aborted (core dumped) ./prog"; bash's jobs.c prints the signal's description, then
                       # " (core dumped)"), zsh's "zsh: abort (core dumped)  ./prog"
                       r"(?:(?P<script>[^\s:]+: line \d+: +\d+ +))?(?:Aborted|Segmentation fault|Killed|Bus error|"
                       r"Floating point exception|Illegal instruction|Terminated)(?: +\(core dumped\))?"
                       r"(?(script)(?:\s|$)|[ \t]*$)|"
                       r"zsh: (?:abort|segmentation fault|killed|bus error|floating point exception|illegal hardware "
                       r"instruction|terminated)(?: \(core dumped\))?(?: |$)|"
                       # a Fortran runtime's own record, which starts a line of its own: Intel's "forrtl: error (76):
                       # Abort trap signal", "forrtl: severe (174): SIGSEGV, ...", gfortran's "Program received signal
                       # SIGSEGV: ..." (a padded line before it is no terminal's wrap of it)
                       r"forrtl: (?:severe|error|warning|info) \(\d+\): |Program received signal SIG[A-Z]+\b)")
# a box's or banner's head, a rule with words inside it ("-------------- FATAL CALLED ---------------", "==== Error
# ====", "***** ERROR *****"): a line its writer starts afresh, never the rest of a line cut at a terminal's width
# (WRF's 80-column "alloc_space_field: ..." then its FATAL CALLED box; a stamped line's own stamp: _logger_stamped)
_BANNER_HEAD = lazy_regex(r"^[ \t]*[-=*#~]{3,}[ \t]*[^-=*#~\s][^\n]*?[ \t]*[-=*#~]{3,}[ \t]*$")
MIN_WRAP_WIDTH = 60
TERMINAL_WIDTHS = (80, 100, 120, 132, 160)     # a terminal's usual widths (80: the default of them all)
# A viewer's or editor's line numbers ("[80746] ...", "  123\t...", "123: ..."): only when most lines
# carry one and they count up one by one (srun's "3: " rank labels repeat and jump).
_LINE_NUMBER = lazy_regex(r"^(?P<quote>(?:>[ \t]?)*)\s*(?:\[(?P<b>\d+)\] ?|(?P<n>\d+)(?:\t|: | \| ))")
MIN_NUMBERED_LINES = 5
# `cat -n`'s own form (right-aligned number, then a tab), counting from 1: line numbers even in a
# paste of fewer lines than the count the other forms need
_CAT_N = lazy_regex(r"^ {2,}(\d+)\t")
_BRACKET_NUMBER = lazy_regex(r"^\[(\d+)\](?: |$)")
NUMBERING_SAMPLE = 400


@dataclass(frozen=True)
class CleanText:
    """A log's lines without their timestamps and with wrapped lines put back together."""
    lines: tuple[str, ...]
    stamps: tuple[str | None, ...]     # the timestamp removed from each line, as printed
    joined: int = 0                    # wrapped lines put back together


_JSON_TEXT_KEYS = ("log", "msg", "message", "text", "line")
_JSON_TIME_KEYS = ("time", "timestamp", "ts", "@timestamp", "asctime")


def _json_record(line: str) -> tuple[str, str | None] | None:
    """A structured logger's or container runtime's JSON line (``{"log": "...", "time": ...}``,
    ``{"level": ..., "msg": ...}``): its text and time. Other JSON (torchelastic's events) is left."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    text = next((record[k] for k in _JSON_TEXT_KEYS if isinstance(record.get(k), str)), None)
    if text is None:
        return None
    stamp = next((str(record[k]) for k in _JSON_TIME_KEYS if isinstance(record.get(k), (str, int, float))), None)
    return text.rstrip("\r\n"), stamp


def strip_decorations(line: str) -> tuple[str, str | None]:
    """One line without colours, quote markers, CI prefixes and a leading timestamp; and that
    timestamp. A JSON log record stands for its text."""
    if line[:1] == "{" and line.rstrip()[-1:] == "}" and (record := _json_record(line.strip())) is not None:
        text, json_stamp = record
        clean, stamp = strip_decorations(text) if text[:1] != "{" else (text, None)
        return clean, stamp or json_stamp
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "[0m" in line:
        line = _ANSI_REMNANT.sub("", line)
    line = line.rstrip()
    if line[:1].isalnum() and line.find("|", 2, 80) > 0 and (compose := _COMPOSE.match(line)) is not None:
        line = line[compose.end():]
    if line[:1] == ">":
        line = _QUOTE.sub("", line)
    line = _inline_code(line)
    stamp = None
    for _ in range(2):
        if (ci := _CI_STEP.match(line)) is not None:
            line = line[ci.end():]
        match = _STAMP.match(line)
        if match is None:
            break
        stamp = match.group("iso") or match.group("syslog") or match.group("glog") or match.group("clock")
        if stamp[:1] == "F" and match.group("glog") and not match.group("glogfile").startswith("ProcessGroup"):
            break     # glog's FATAL level (a failed CHECK: the process aborts): its head is what says so, kept
        line = line[match.end():]
    if line[:1] in "#IO" and (mark := _RUNNER_MARK.match(line)) is not None:
        line = line[mark.end():]
    if stamp is not None and line[:1] == ">":     # a quoted paste whose lines then got a timestamp
        line = _QUOTE.sub("", line)
    if stamp is not None:                         # an inline-code paste whose lines then got a timestamp
        line = _inline_code(line)
    return line, stamp


def decoded(data: bytes) -> str:
    """A log's bytes as text: UTF-8; a line that is not UTF-8 but Windows-1252 (a Windows editor's curly quotes, an
    accented word) as that code page; else its undecodable bytes replaced."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    lines = []
    for line in data.split(b"\n"):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            try:
                lines.append(line.decode("cp1252"))
            except UnicodeDecodeError:
                lines.append(line.decode("utf-8", errors="replace"))
    return "\n".join(lines)


def _inline_code(line: str) -> str:
    """A line pasted as `inline code`, without its backticks (and a one-line ```code span```: a fence opened and
    closed on the same line around text, never a fence line with its language tag)."""
    if line[:1] == "`" and line[:3] != "```":
        return line[1:-1] if line.endswith("`") and not line.endswith("``") else line[1:]
    if line[:3] == "```" and len(line) > 6 and line.endswith("```") and line[3:-3].strip(" `"):
        return line[3:-3].strip()
    return line


_PADDING = " " * 8         # a run of spaces this long at a line's end is padding, not a cut inside aligned text


def clean_text(text: str) -> CleanText:
    """The text's lines without decorations, with hard-wrapped lines joined again."""
    if "\u201c" in text or "\u2019" in text or "\u201d" in text or "\u2018" in text:
        text = text.translate(_STRAIGHT_QUOTES)
    raw = _dedented(_without_logging_heads(_without_line_numbers(
        text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))))
    lines: list[str] = []
    stamps: list[str | None] = []
    widths: list[int] = []
    fences: list[int] = []             # where a fence line was left out (to find a kept line's raw line)
    for line in raw:
        clean, stamp = strip_decorations(line)
        if _FENCE.match(clean):
            fences.append(len(lines))
            continue
        lines.append(clean)
        stamps.append(stamp)
        widths.append(len(_bare(line).rstrip("\n")))
    lines = _unquoted_paste(_without_stamped_logging_heads(lines, stamps))
    wrap = _wrap_width(widths, lines)
    guessed = wrap is not None and widths.count(wrap) < 3     # (the wrap of one or two lines, no width seen cut often)
    out: list[str] = []
    out_stamps: list[str | None] = []
    joined = 0
    i = 0
    while i < len(lines):
        line, stamp, width = lines[i], stamps[i], widths[i]
        steps = 0
        # (a terminal's wrap at its width cuts a long line as often as it is long; the guess without one, 4 times)
        # (nor, where the width is a guess from one line at a terminal's width, a line its logger stamped: a
        # terminal's wrap leaves the rest of a line without the stamp each line of the log carries)
        while i + 1 < len(lines) and (steps < 4 or width == wrap) and _continues(line, width, lines[i + 1], wrap) \
                and not (width == wrap and _padded(raw[i + bisect_right(fences, i)])) \
                and not (guessed and stamps[i + 1] is not None
                         and _logger_stamped(raw[i + 1 + bisect_right(fences, i + 1)])):
            i += 1
            steps += 1
            joined += 1
            following = lines[i]
            # (a cut after a space: the raw line ended in it, the space was the glue)
            spaced = width == wrap and _bare(raw[i - 1 + bisect_right(fences, i - 1)])[-1:] in (" ", "\t")
            glue = " " if spaced else _glue(line, following, width == wrap)
            line, width = line + glue + following.lstrip(), widths[i]
        for part in _unglued(line):
            out.append(part)
            out_stamps.append(stamp)
        i += 1
    while out and not out[-1]:
        out.pop()
        out_stamps.pop()
    return CleanText(tuple(out), tuple(out_stamps), joined)


def _logger_stamped(raw_line: str) -> bool:
    """Whether a line's own text opens with a timestamp (its logger's), not only the time a container runtime's JSON
    record gives each line it carried (a terminal's wrapped rest included)."""
    line = raw_line.strip()
    if line[:1] == "{" and line[-1:] == "}" and (record := _json_record(line)) is not None:
        return record[0][:1] != "{" and strip_decorations(record[0])[1] is not None
    return True


def _padded(raw_line: str) -> bool:
    """Whether a line at the wrap width ends in a run of spaces that fills it to that width: a terminal that pads
    each line to its width (a copy from tmux or screen) ended the text before the width, where a wrap cuts the text
    at it (a cut that falls after one space leaves that one space: the glue, not padding)."""
    return _bare(raw_line).endswith(_PADDING)


def _bare(raw_line: str) -> str:
    """A raw line as its terminal printed it: a JSON record's text (a container runtime's ``{"log": ...}``), without
    ANSI colours (a coloured line's padding stands before its closing code), its trailing spaces kept."""
    if raw_line[:1] == "{" and raw_line.rstrip()[-1:] == "}" and (record := _json_record(raw_line.strip())) is not None:
        raw_line = record[0]
    return _ANSI.sub("", raw_line) if "\x1b" in raw_line else raw_line


def _unglued(line: str) -> list[str]:
    """A line split where another process's launcher-prefixed line was glued onto it, or where a traceback's
    lines were (triage.parsing.glued_traceback)."""
    if GLUED_MARKER in line:
        return [part for piece in split_glued(line) for part in _unglued_prefix(piece)]
    return _unglued_prefix(line)


def _unglued_prefix(line: str) -> list[str]:
    if (line.find("[rank", 1) < 0 and line.find("[default", 1) < 0) or not _GLUED_PREFIX.search(line, 1):
        return [line]    # (a prefix at the start only: the common case, decided without the regex)
    cuts = [m.start() for m in _GLUED_PREFIX.finditer(line) if m.start() > 0]
    starts = [0, *cuts]
    return [line[a:b] for a, b in zip(starts, [*cuts, len(line)], strict=True) if line[a:b].strip()]


def _without_line_numbers(raw: list[str]) -> list[str]:
    """The lines without the line numbers a viewer put before each of them, when they have some
    (decided on the first lines, so that a long log without them costs one short look)."""
    sample = [line for line in raw[:NUMBERING_SAMPLE] if line.strip()]
    if not _short_cat_n(sample) and not _short_bracketed(sample) and (
            len(sample) < MIN_NUMBERED_LINES or not _numbered(sample)):
        return raw
    out = []
    for line in raw:
        match = _LINE_NUMBER.match(line) if "\x1b" not in line else None
        out.append(match.group("quote") + line[match.end():] if match is not None else line)
    return out


def _without_logging_heads(raw: list[str]) -> list[str]:
    """The lines without Python logging's default head ("INFO:root:") when the paste went through a logger as a
    whole (most lines carry one); a log where only some lines do (torchelastic's "ERROR:torch.distributed...:") keeps
    them (decided on the first lines)."""
    sample = [line for line in raw[:NUMBERING_SAMPLE] if line.strip()]
    if not sample or sum(1 for line in sample if line[:1] in "DIWEC" and _LOGGING_HEAD.match(line)) < 0.8 * len(sample):
        return raw
    return [line[head.end():] if (head := _LOGGING_HEAD.match(line)) is not None else line for line in raw]


def _without_stamped_logging_heads(lines: list[str], stamps: list[str | None]) -> list[str]:
    """The lines without a logger's ``name - LEVEL - `` after their time when the paste went through that logger as a
    whole (most lines stamped and headed so); a log where only some lines are a logger's records keeps them (a logger's
    record is no rank's own work: triage.analysis.partial reads it so)."""
    stamped = [i for i, stamp in enumerate(stamps[:NUMBERING_SAMPLE]) if stamp is not None]
    sample = [i for i in range(min(len(lines), NUMBERING_SAMPLE)) if lines[i].strip() or stamps[i] is not None]
    if len(stamped) < 0.8 * max(len(sample), 1) or \
            sum(1 for i in stamped if _LOGGING_AFTER_STAMP.match(lines[i])) < 0.8 * len(stamped):
        return lines
    return [_unquoted(line[head.end():]) if stamp is not None and (head := _LOGGING_AFTER_STAMP.match(line)) is not None
            else line for line, stamp in zip(lines, stamps, strict=True)]


def _unquoted(line: str) -> str:
    """What a logger's head stood before: without a quote's marker and inline code's backticks (as after a time)."""
    return _inline_code(_QUOTE.sub("", line) if line[:1] == ">" else line)


def _dedented(raw: list[str]) -> list[str]:
    """The lines without the indentation that every one of them has (a paste that was indented as a whole: a
    Markdown code block's 4 spaces, a quoted e-mail's); decided at the first line, so that a log whose first line
    is not indented costs nothing."""
    first = next((line for line in raw if line.strip()), "")
    if first[:1] not in (" ", "\t"):
        return raw
    indent = commonprefix([line[:len(line) - len(line.lstrip(" \t"))] for line in raw if line.strip()])
    if not indent:
        return raw
    return [line[len(indent):] if line.strip() else "" for line in raw]


def _unquoted_paste(raw: list[str]) -> list[str]:
    """The lines of a paste put in double quotes as a whole (a reporter's ``"Error in f(...) :`` ... ``Function not
    implemented"``), without those two quotes: the first line opens with one, the last ends with one, and no line
    between opens or ends with one (a file of quoted lines, a CSV's, quotes each line)."""
    kept = [at for at, line in enumerate(raw) if line.strip()]
    if len(kept) < 2:
        return raw
    first, last = kept[0], kept[-1]
    if raw[first][:1] != '"' or raw[last].rstrip()[-1:] != '"' or raw[first].rstrip()[-1:] == '"' \
            or raw[last][:1] == '"':
        return raw
    if any(raw[at][:1] == '"' or raw[at].rstrip()[-1:] == '"' for at in kept[1:-1]):
        return raw
    out = list(raw)
    out[first] = raw[first][1:]
    out[last] = raw[last].rstrip()[:-1]
    return out


def _short_cat_n(lines: list[str]) -> bool:
    if not 0 < len(lines) < MIN_NUMBERED_LINES:
        return False
    numbers = [match.group(1) if (match := _CAT_N.match(line)) else None for line in lines]
    return numbers == [str(i) for i in range(1, len(lines) + 1)]


def _short_bracketed(lines: list[str]) -> bool:
    """A short paste (fewer lines than MIN_NUMBERED_LINES, three or more) whose every line a viewer numbered ``[N] ``,
    counting up one by one from 1 or more: a viewer's line numbers. Rank tags (Hydra's -prepend-rank, ``[2] ``) repeat,
    jump, go down or start at 0 (triage.parsing.log_owners.prepended_ranks reads them)."""
    if not 3 <= len(lines) < MIN_NUMBERED_LINES:
        return False
    numbers = [int(m.group(1)) if (m := _BRACKET_NUMBER.match(line)) else None for line in lines]
    return numbers[0] is not None and numbers[0] > 0 and numbers == list(range(numbers[0], numbers[0] + len(lines)))


def _numbered(lines: list[str]) -> bool:
    found = [_LINE_NUMBER.match(_ANSI.sub("", line) if "\x1b" in line else line) for line in lines]
    numbers = [int(m.group("b") or m.group("n")) for m in found if m is not None]
    if len(numbers) < 0.8 * len(lines) or numbers[0] == 0:     # (srun's labels start at rank 0)
        return False
    return sum(1 for a, b in pairwise(numbers) if b == a + 1) >= 0.9 * (len(numbers) - 1)


def _glue(line: str, following: str, exact_wrap: bool) -> str:
    """What stood between two halves of a wrapped line: nothing after a cut inside a word or after
    ``=``/``(``/``[``, one space where the cut fell on one (lost to the trailing-space strip)."""
    if following[:1] in (" ", "\t"):
        return " "
    if exact_wrap or line[-1:] in ("=", "(", "[", "/", "-", "_", ":", "."):
        return ""
    return "" if line[-1:].isalnum() and following[:1].isalnum() else " "


def _wrap_width(widths: list[int], lines: list[str]) -> int | None:
    """The width a terminal wrapped at: the longest line length, when several different lines have
    exactly that length (a log's own lines rarely end at the same column; the same line repeated,
    as torchrun's "traceback : To enable traceback see: ..." in each record, is no wrap). Lines alike, or
    a short paste's few at a terminal's usual width, are cut only where each is followed by a line that
    carries no line head of its writer (the cuts of one long path or tag: "(Actor pid=5) File \"/a/b/torch/dist")."""
    if not widths:
        return None
    longest = max(widths)
    if longest < MIN_WRAP_WIDTH:
        return None
    at = [i for i, width in enumerate(widths) if width == longest]
    count = len(at)
    # (nor is one message told by several ranks, "[1,3]<stderr>:... ran for 601336 ms" beside "[1,1]<stderr>:...
    # ran for 601338 ms": lines that differ only in their numbers are the same line, whatever their tags)
    alike = len({_DIGITS.sub("0", lines[i]) for i in at}) < 2
    if _table([lines[i] for i in at]):
        return None
    if not alike and count >= 3 and count >= len(widths) // 50:
        return longest
    if longest not in TERMINAL_WIDTHS:
        return None
    return longest if all(_cut_before(lines[i], lines[i + 1] if i + 1 < len(lines) else "") for i in at) else None


def _table(rows: list[str]) -> bool:
    """Whether lines of one length are the rows of a table padded to its columns (``kubectl get pods``, ``sacct``,
    ``squeue``): each starts its columns, after a run of spaces, at the same places (two or more), or ends them there
    (sacct's columns are right-aligned), as a terminal's cuts of different lines never do; a rule under the header
    (sacct's ``------------ ----------``) marks its columns with one space between them."""
    if len(rows) < 2:
        return False
    return _aligned(rows, lambda gap: gap.end()) or _aligned(rows, lambda gap: gap.start())


def _aligned(rows: list[str], edge: Callable[[re.Match[str]], int]) -> bool:
    columns: set[int] | None = None
    for row in rows:
        gaps = _RULE_GAP if _RULE.fullmatch(row) else _COLUMN_GAP
        marks = {edge(match) for match in gaps.finditer(row)}
        columns = marks if columns is None else columns & marks
        if len(columns) < 2:
            return False
    return True


def _cut_before(line: str, following: str) -> bool:
    """Whether a line can be the rest of a cut one: not empty, no head its writer puts on every line, no line its
    writer always starts afresh (a paste's one line that happens to be 132 columns long, "terminate called ..." after
    it), no rule
    (unless it is the rest of a rule cut with the line: a progress bar's '~~(,_,">------' ended by Open MPI's
    dash rule, its dashes running on at the next line)."""
    if not following.strip() or _PREFIXED.match(following) is not None or _OWN_LINE.match(following) is not None \
            or _new_record(line, following):
        return False
    return _RULE.match(following) is None or _rule_runs_on(line, following)


def _new_record(line: str, following: str) -> bool:
    """Whether the next line opens a record of its own (a banner's head), not the rest of a line cut at the width:
    unless the cut line ends in the banner's own marks (a rule cut with its line runs on)."""
    return following.lstrip()[:1] in _RULE_MARKS and _BANNER_HEAD.match(following) is not None \
        and line.rstrip()[-1:] not in _RULE_MARKS


def _rule_runs_on(line: str, following: str) -> bool:
    """Whether a line that is no rule ends in the run of one character that the rule after it is made of."""
    mark = following[:1]
    return (mark in _RULE_MARKS and following.rstrip() == mark * len(following.rstrip())
            and line.endswith(mark * 3) and _RULE.match(line) is None)


def _number_cut(line: str, following: str) -> bool:
    """Whether a line cut at the terminal's width inside a list of numbers goes on at the next one, though that one
    starts as srun's label does ("...,1004,1012,10" then "20: Segmentation fault"): not in a labelled log (the cut
    line carries a label itself, and the next line's label is its own)."""
    return (_NUMBER_LIST_END.search(line, max(0, len(line) - 40)) is not None
            and _NUMBER_REST.match(following) is not None and _LABEL.match(line) is None)


# a block's own decoration before each of its lines ("*** " of DOLFIN's error block, "!! ", "## "): a line that opens
# with the decoration the line before it opens with is the block's next line, not that line's wrapped rest
_DECORATION = lazy_regex(r"[^\w\s\[(]{2,}[ \t]")
# a box drawn in box-drawing characters (rich's traceback panel, box.ROUNDED: "│ ❱ 881 │ ... │", its "╰───╯" bottom;
# box.HEAVY's and box.DOUBLE's edges): a row padded to the box's width that ends at its right border is whole, never
# a line cut at a terminal's width, nor is a box's row or border the rest of a cut line
_BOX_RIGHT = "\u2502\u2503\u2551\u256f\u256e\u251b\u2513\u255d\u2557\u2524\u252b\u2563"
_BOX_LEFT = "\u2502\u2503\u2551\u2570\u256d\u2517\u250f\u255a\u2554\u251c\u2523\u2560"


def _continues(line: str, width: int, following: str, wrap: int | None) -> bool:
    if not following or _OWN_LINE.match(following) is not None:
        return False        # (a line its writer always starts afresh: a shell's "Aborted (core dumped)", a traceback)
    if line[-1:] in _RULE_MARKS and _BANNER_HEAD.match(line) is not None:
        return False        # (a whole banner, its words between its rules: pytest's "----- Captured stderr call -----"
        #                     is as wide as the terminal, never cut there)
    if (line[-1:] or " ") in _BOX_RIGHT or (following.lstrip()[:1] or " ") in _BOX_LEFT:
        return False
    if (lead := _DECORATION.match(line)) is not None and following.startswith(lead.group()):
        return False
    if wrap is not None and width == wrap:
        # cut at the terminal's width: its rest may begin with any word ("rank: 0 (pid: 3) of binary", "Error: x"),
        # only a prefix that every line of its writer carries starts a line of its own
        return (_PREFIXED.match(following) is None and not _new_record(line, following)) or _number_cut(line, following)
    if _STARTS_NEW.match(following):
        return False
    return _FIELDS_OPEN.search(line) is not None and not following.startswith((" ", "\t"))
