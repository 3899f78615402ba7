"""A training loop's own progress line: a numbered step, iteration or epoch, or a loss value (``step 200 loss
0.31``, ``Epoch 3/10``, ``iter: 1500``, ``loss=0.42``), and never a line that itself says something failed
(``NaN loss at step 5``, ``error at iteration 3``); or its own line that the run ended well: ``Training finished``,
``Training complete``, ``Done.``, ``Saved checkpoint``/``checkpoint saved``, Lightning's ``Trainer.fit` stopped:
`max_epochs=3` reached.``, a final evaluation's summary (``***** eval metrics *****``, ``Final test accuracy: 0.91``);
a data job's own progress (Spark's ``Finished task 12.1 in stage 7.0 (TID 912)``, ``Job 0 finished:``, Hadoop's ``map
60% reduce 0%``) and YARN's ``Final app status: SUCCEEDED``; a JavaScript build's clean end (yarn's ``Done in
412.55s.``, webpack's ``compiled successfully in 1234 ms``, create-react-app's ``Compiled successfully.``).

Such a line after a failure line of the same process says that the process went on past it: the failure line
did not end it (a library's complaint at start-up, a logger's ERROR for something it then worked around).
``went_on(lines)`` answers that for the lines that follow, in order. Never raises.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

from triage.lazy_regex import lazy_regex

_STEP = lazy_regex(r"(?<![A-Za-z])(?:epoch|step|iter(?:ation)?)\s*[:=#\[]?\s*\d+|\bloss\s*[:=]?\s*-?\d"
                   # a data job's own progress: Spark's TaskSetManager "Finished task 12.1 in stage 7.0 (TID 912) in
                   # 3110 ms on n5 (executor 6) (13/64)" and DAGScheduler's "Job 0 finished: count at job.py:12, took
                   # 320.1 s"; Hadoop MapReduce's client (Job.monitorAndPrintJob) "mapreduce.Job:  map 60% reduce 0%"
                   r"|\bFinished task \d+(?:\.\d+)? in stage \d+(?:\.\d+)? \(TID \d+\)|\bJob \d+ finished: "
                   r"|\bmap \d{1,3}% reduce \d{1,3}%"
                   # Keras's Progbar (keras/utils/generic_utils.py, verbose=1): "1/1 [==============================] -
                   # 1s 1s/step", "  32/1875 [>.............................] - ETA: 1:23 - loss: 0.51"
                   r"|(?<!\S)\d+/\d+ \[[=>.]+\] - (?:ETA: )?\d", re.IGNORECASE)
# a line saying the run (or its training) ended well, or saved its result: what only a process that went on prints
_SUCCESS = lazy_regex(
    r"\btraining (?:is |has )?(?:finished|complete|completed|done|ended)\b"
    r"|^\W*(?:all )?done\s*[.!]?\W*$"
    r"|\bsav(?:ed|ing) (?:the )?(?:final |last |best )?(?:model )?checkpoint\b|\bcheckpoint (?:saved|written)\b"
    r"|\btrainer\.fit`? stopped: `?max_\w+=\d+`? reached"
    r"|\beval(?:uation)? metrics\b|\bfinal[ _](?:eval|evaluation|test|validation|val)\w*\b.*?[:=]\s*-?\d"
    # YARN's ApplicationMaster at a Spark app's end: "Final app status: SUCCEEDED, exitCode: 0"
    r"|\bfinal app status: succeeded\b"
    # a JavaScript build's clean end: yarn's (v1 ConsoleReporter.footer, printed after a command that succeeded: "✨
    # Done in 412.55s.", "... Peak memory usage 310.21MB."), webpack's ("webpack 5.88.2 compiled successfully in 1234
    # ms") and create-react-app's ("Compiled successfully."; "compiled with 1 error" is no clean end)
    r"|^\W*done in \d+\.\d\ds\.(?: peak memory usage [\d.]+mb\.)?\W*$|\bcompiled successfully\b",
    re.IGNORECASE)
# one of them is in every line _STEP or _SUCCESS matches (caseless)
_WORDS = ("epoch", "step", "iter", "loss", "train", "done", "checkpoint", "eval", "final", "in stage", "finished: ",
          "% reduce", "compiled successfully")
# words of failure wherever they stand (caseless): a line that holds one (or a word NaN or Inf) is no progress
_FAILS = ("error", "fail", "exception", "traceback", "abort", "fatal", "killed", "signal", "timed out", "timedout",
          "time out", "timeout", "overflow", "skipp", "terminating")
_NOT_PROGRESS = lazy_regex("|".join(map(re.escape, _FAILS)) + r"|\bnan\b|\binf\b", re.IGNORECASE)


def is_progress(line: str) -> bool:
    """The line is a training loop's progress report, or its line that the run ended well (and says nothing
    failed)."""
    if line.isascii():      # (the patterns' answer, by plain searches first: an ASCII line lower-cases as re folds it)
        low = line.lower()
        if not any(word in low for word in _WORDS) or any(word in low for word in _FAILS):
            return False
    return (_STEP.search(line) is not None or _SUCCESS.search(line) is not None) and _NOT_PROGRESS.search(line) is None


# a progress bar or meter, no loop's numbered step: tqdm's (" 45%|████▌     | 45/100 [00:10<00:12,  4.50it/s]", its
# rate "it/s" or "s/it", a byte rate "12.3MB/s"), or a line that is only a percentage done ("Progress: 45%",
# "  3% (30/1000)")
_BAR = lazy_regex(r"\d{1,3}%\|[^|\n]*\||\b\d+(?:\.\d+)?\s?(?:it/s|s/it|[kMG]?B/s)\b|"
                  r"^\W*(?:[A-Za-z][\w .-]{0,40}:\s*)?\d{1,3}(?:\.\d+)?\s?%\s*(?:\(\d+/\d+\))?\W*$")


def is_progress_line(line: str) -> bool:
    """The line is progress (is_progress) or a progress bar or meter (tqdm's, a percentage done), and says nothing
    failed: a line that tells where the run is, never what failed."""
    return is_progress(line) or (_BAR.search(line) is not None and _NOT_PROGRESS.search(line) is None)


def holds_failure_word(line: str) -> bool:
    """The line holds a word of failure (error, fail, exception, traceback, abort, fatal, killed, signal, ...)."""
    return _NOT_PROGRESS.search(line) is not None


def says_it_ended(line: str) -> bool:
    """The line is the run's own word that it ended well (``Training finished``, ``Done.``, a final evaluation's
    summary, ``completed successfully``, ``exited with code 0``) and says nothing failed."""
    from triage.parsing.unread_failure import SUCCESS  # lazy: the end of an all-clear only

    return ((_SUCCESS.search(line) is not None or SUCCESS.search(line) is not None)
            and _NOT_PROGRESS.search(line) is None)


def _script_lines_removed(window: str) -> str:
    """``window`` without a shell's trace of the commands it ran (`set -x`: ``+ echo done``) and the words each traced
    ``echo`` printed on the next line (``done``): a job script's own words after its program failed (a script without
    ``set -e`` runs on past a failed mpirun) say nothing of the run's end."""
    if "+" not in window:
        return window
    from triage.parsing.unread_failure import SHELL_TRACE  # lazy: a window with a '+' only

    kept: list[str] = []
    echoed: str | None = None
    for line in window.split("\n"):
        if echoed is not None and " ".join(line.split()) == echoed:
            echoed = None
            continue
        trace = SHELL_TRACE.match(line)
        echoed = _echoed(line[trace.end():]) if trace else None
        if trace is None:
            kept.append(line)
    return "\n".join(kept)


def _echoed(command: str) -> str | None:
    """What a traced ``echo ARGS`` command printed (its words joined by one space), or None for any other command."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0] != "echo":
        return None
    words = words[1:]
    while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
        words = words[1:]
    return " ".join(" ".join(words).split())


def _window_after(text: str, end: int, lines: int) -> str:
    """The ``lines`` lines of ``text`` after offset ``end``'s line ("" when that line is the last), less a job script's
    own trace and echoes (_script_lines_removed)."""
    return _script_lines_removed(_lines_after(text, end, lines))


def _lines_after(text: str, end: int, lines: int) -> str:
    """The ``lines`` lines of ``text`` after offset ``end``'s line ("" when that line is the last)."""
    start = text.find("\n", end) + 1
    if start == 0:
        return ""
    stop = start
    for _ in range(lines):                  # the window's end, found without copying the rest of a large text
        stop = text.find("\n", stop) + 1
        if stop == 0:
            stop = len(text)
            break
    return text[start:stop]


def went_on_after(text: str, end: int, lines: int = 40) -> bool:
    """Some of the ``lines`` lines of ``text`` after offset ``end``'s line is progress or the run's own word that it
    ended well: what a reader of one line (a warning that a worker is restarted, an exit status a tool logs and
    retries after) asks before it calls that line the job's failure."""
    window = _window_after(text, end, lines)
    if not mentions_progress(window):
        return False
    return any(is_progress(line) or says_it_ended(line) for line in window.split("\n"))


def ran_to_its_end_after(text: str, end: int, lines: int = 40) -> bool:
    """Among the ``lines`` lines of ``text`` after offset ``end``'s line, progress (a step, not only an end word) and
    after it the run's own word that it ended well (``Training finished``): the job went on past that line and
    ended (what a reader of a rank's death told in plain words asks: a sentence about a death, not the job's)."""
    window = _window_after(text, end, lines)
    if not mentions_progress(window):
        return False
    stepped = False
    for line in window.split("\n"):
        if not is_progress(line):
            continue
        if stepped and says_it_ended(line):
            return True
        stepped = stepped or not says_it_ended(line)
    return False


def mentions_progress(text: str) -> bool:
    """Some line of ``text`` may be progress: it holds one of the words (a text without them has none; plain
    substring searches, many times faster than the pattern over a whole log)."""
    low = text.lower()
    return any(word in low for word in _WORDS)


# a command runner's own word that the command it ran ended failing: yarn v1's "error Command failed with exit code
# 134." (after the command's output, before its next command), npm's "npm ERR! code ELIFECYCLE" (npm 6), "npm ERR!
# Lifecycle script `build` failed with error:" (npm 7-8), "npm error Lifecycle script `build` failed" (npm 9+), GNU
# make's "make: *** [Makefile:12: all] Error 134" / "make[2]: *** [...] Error 1": a clean end or progress after such a
# line belongs to another command, never to the one that failed
_COMMAND_FAILED = lazy_regex(r"^\W*error Command failed with (?:exit code \d+|signal )|^npm (?:ERR!|error) "
                             r"(?:code ELIFECYCLE\b|Lifecycle script )|^g?make(?:\[\d+\])?: \*\*\* .*\bError \d+")
_COMMAND_FAILED_WORDS = ("Command failed", "npm ", "make")
# a shell's line that starts a command: a prompt's ("$ yarn build", "user@host:~/app$ yarn build", "# make") or `set
# -x`'s trace ("+ yarn build"); the command's words after it, less the NAME=value assignments before them
_PROMPT = lazy_regex(r"^\s*(?:[\w.@:~/-]*[$#]|\+{1,3}) (?P<command>\S.*)$")
_ASSIGNMENT = lazy_regex(r"^[A-Za-z_]\w*=")


def command_failed(line: str) -> bool:
    """The line is a command runner's word that the command it ran ended failing (yarn's ``error Command failed with
    exit code 134.``, npm's ``npm ERR! code ELIFECYCLE``, make's ``make: *** [all] Error 2``)."""
    return any(word in line for word in _COMMAND_FAILED_WORDS) and _COMMAND_FAILED.search(line) is not None


def _command(line: str) -> tuple[str, ...] | None:
    prompt = _PROMPT.match(line) if ("$" in line or "#" in line or "+" in line) else None
    if prompt is None:
        return None
    words = prompt.group("command").split()
    while words and _ASSIGNMENT.match(words[0]) is not None:
        words.pop(0)
    return tuple(words) or None


def another_command_after(before: Sequence[str], after: Iterable[str]) -> bool:
    """Among ``after`` (the lines after a failure line, up to a clean end or progress), a command runner's word that
    its command ended failing (command_failed), then a shell's line starting another command than the last one
    ``before`` shows (the lines up to the failure line): the clean end is that other command's, not the failed
    one's. The same command started again (a retry, with other NAME=value settings before it) is no other command;
    where no shell line shows the commands, nothing tells: False."""
    failed = next((command for line in reversed(before) if (command := _command(line)) is not None), None)
    if failed is None:
        return False
    ended = False
    for line in after:
        if not ended:
            ended = command_failed(line)
        elif (command := _command(line)) is not None:
            return command != failed
    return False


def commands_may_fail_in(text: str) -> bool:
    """``text`` holds one of the words of a command runner's line that its command failed (command_failed's gate):
    where it holds none, no offset of it has another command after it (another_command_in). A caller that asks of
    many offsets of one text tests this once and passes it as ``gate``."""
    return any(word in text for word in _COMMAND_FAILED_WORDS)


def another_command_in(text: str, end: int, lines: int = 2000, gate: bool | None = None) -> bool:
    """another_command_after for offset ``end``'s line of ``text``: the 200 lines up to it, the ``lines`` after.
    ``gate``: commands_may_fail_in(text), where the caller has it (None: tested here)."""
    if not (commands_may_fail_in(text) if gate is None else gate):
        return False
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[max(0, end - 40000):line_end].split("\n")[-200:]
    return another_command_after(before, _lines_after(text, end, lines).split("\n"))


def went_on(lines: Iterable[str]) -> bool:
    """Some line of ``lines`` (what a process printed after a failure line) is its progress."""
    return any(is_progress(line) for line in lines)


# pytest's session: its start banner, or a test's captured output's banner ("----- Captured stderr call -----", a
# passing test's where -rP or -rA shows it), then the session's summary where no test failed nor errored ("==== 3
# passed, 1 warning in 0.52s ===="; a failed or error count breaks the chain): what the session printed between them
# is its tests' own output (a command line refusal, an exception a test expects), never the job's failure
_PYTEST_OPEN = lazy_regex(r"=+ test session starts =+|-+ Captured (?:stdout|stderr|log) (?:setup|call|teardown) -+")
_PYTEST_SUMMARY = lazy_regex(r"=+ (?P<said>[^=]*\bin [\d.]+ ?s(?:econds)?\b[^=]*?) =+")
_PYTEST_PASSED = lazy_regex(r"\d+ passed(?:, \d+ (?:skipped|deselected|xfailed|xpassed|warnings?))* in [\d.]+ ?s"
                            r"(?:econds)?\b(?: \(\d+:\d\d:\d\d\))?$")
PASSED_TESTS_NOTE = "a passing test's own output, in a session whose summary says no test failed"


def passed_test_spans(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """Each pytest session of ``lines`` whose summary says that no test failed nor errored: (the index of its opening
    banner, that of its summary, the summary's words). A session's start banner opens it; a captured output's banner
    opens one where none is open."""
    spans: list[tuple[int, int, str]] = []
    start: int | None = None
    for index, line in enumerate(lines):
        text = line.strip()
        if text[:1] not in ("=", "-") or not text.endswith(("=", "-")):
            continue
        if (opened := _PYTEST_OPEN.fullmatch(text)) is not None:
            if start is None or opened.group().startswith("="):
                start = index
        elif (summary := _PYTEST_SUMMARY.fullmatch(text)) is not None:
            said = summary.group("said").strip()
            if start is not None and _PYTEST_PASSED.fullmatch(said) is not None:
                spans.append((start, index, said))
            start = None
    return spans
