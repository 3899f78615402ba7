"""What the reporter's own sentences around a pasted log say: the node the failures are on, a stop from outside,
a hang and where it happens. Never a log line's evidence: the analysis uses each only where the log's own lines
do not say it (triage.analysis.prose lists where).

A sentence is prose when it reads as one (words and spaces, no log head) and states the thing: a question
("Was the job preempted?"), a negation ("it does not hang", "not killed by the scheduler"), what might happen
or what to avoid ("training may hang at ...", "to avoid a hang during ...") state nothing, and a stop the job
came back from ("preempted and resumed from checkpoint") is not its end.

- the node: "jobs on node dgk713 fail", "node gpu-a17 keeps crashing", "failing on host cn0412": a name with a
  digit after ``node``/``host`` and a word of failing in the same sentence;
- a stop from outside: "our jobs are being sent the SIGTERM signal externally", "the job was preempted",
  "killed by the scheduler", "cancelled by the admins";
- a hang: "training hangs right at `initializing ddp ...`", "it gets stuck after `Epoch 0`": a word of hanging
  and where (at, after, in, during, on, when, before ...); at set-up when where names the process group's
  initialisation, the rendezvous or the store; the ranks the reporter says never print or never arrive
  ("Ranks 1 and 2 never print `[data]`"), and a collective the prose names (``dist.barrier()``).

``read_prose(lines) -> ProseAccount``. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.model.evidence import ProseAccount

MAX_LINES = 800           # prose stands around the log: its first and last lines are read, never a whole huge log
_WORD = lazy_regex(r"[A-Za-z]{2,}")
# a log's own heads: a prefix, a timestamp, a level, a path:line, a key=value record (a viewer's line number
# "[80746] " is none: the sentence after it is read)
_LOG_HEAD = lazy_regex(r"^\s*(?:\[(?!\d+\] )|\(|\d{4}-\d\d-\d\d|[IWEF]\d{4} |\d+: |[A-Z_]{3,}\b[:\]]|\w+Error\b|"
                       r"Traceback|File \"|[\w./-]+\.(?:py|cc|cpp|c|h):\d+|at [\w.$]+\(|#\d+ |srun:|slurmstepd:|"
                       r"\+ |\$ |>>> )")
_SENTENCE_END = lazy_regex(r"(?<=[.!?])\s+(?=[A-Z`\"'])")
_NEGATED = lazy_regex(r"\b(?:not|n't|never|no longer|without|nor|stopped)\b[^.,;]{0,40}$", re.IGNORECASE)
_QUESTION_START = lazy_regex(r"^\s*(?:why|how|what|was|were|is|are|does|do|did|can|could|should|has|have|will|"
                             r"would|any idea|anyone)\b", re.IGNORECASE)

_FAILING = r"(?:fail\w*|crash\w*|die[sd]?|dying|error\w*|broken|down|bad|faulty|kill\w*|abort\w*)"
_HOST_NAME = r"(?P<host>[A-Za-z][\w-]*\d[\w.-]*)"
_NODE = lazy_regex(r"\b(?:node|host|machine|server)\s+`?" + _HOST_NAME + r"`?", re.IGNORECASE)
_FAILING_WORD = lazy_regex(r"\b" + _FAILING + r"\b", re.IGNORECASE)

_STOP = lazy_regex(
    r"\b(?:(?:sent|send|sending|receiv\w+|got|gets|getting)\s+(?:the\s+|a\s+)?SIG(?:TERM|KILL|INT)\b(?:\s+signals?)?"
    r"\s+(?:externally|from\s+(?:the\s+)?(?:outside|scheduler|cluster|system|slurm|kubernetes|k8s))"
    r"|(?:externally|from\s+outside)\s+(?:sent|killed|terminated|stopped|cancell?ed)"
    r"|(?:is|are|was|were|been|being|get|gets|got)\s+(?:being\s+)?preempted"
    r"|(?:killed|terminated|stopped|cancell?ed|evicted)\s+by\s+(?:the\s+)?(?:job\s+)?"
    r"(?:scheduler|slurm|cluster|resource\s+manager|admins?|administrators?|sysadmins?|kubernetes|k8s|kubelet|"
    r"spot\s+(?:instance\s+)?reclaim\w*|cloud\s+provider))\b",
    re.IGNORECASE)

_HANG = lazy_regex(r"\b(?:hangs?|hanging|hung|freezes|freezing|froze|frozen|stalls?|stalled|deadlocks?|deadlocked|"
                   r"(?:gets?|got|is|are|was|were|being)\s+stuck)\b", re.IGNORECASE)
_WHERE = lazy_regex(r"^[\s,]*(?:right\s+|just\s+|forever\s+|indefinitely\s+|for\s+[\w+ ]{1,20}?\s+)?"
                    r"(?:at|after|in|during|on|when|while|before|inside|within|once)\b\s*\S", re.IGNORECASE)
_INIT_WHERE = lazy_regex(r"init(?:iali[sz]\w*|_process_group|\s+process\s+group)|rendezvous|TCPStore|MASTER_ADDR|"
                         r"process[ _]group|store\b|setup|set[- ]up|start[- ]?up", re.IGNORECASE)
_RANK_LIST = r"(?P<ranks>\d+(?:\s*(?:,|/|&|\band\b|\bor\b)\s*\d+)*)"
_SILENT = lazy_regex(r"\branks?\s+" + _RANK_LIST + r"\s+(?:never|do\s+not|don't|did\s+not|didn't|does\s+not|doesn't|"
                     r"cannot|can't)\s+(?:print|reach|arrive|get\s+to|log|return|enter|show|output|finish|complete)",
                     re.IGNORECASE)
_COLLECTIVE = lazy_regex(r"\b(?:dist\.)?(?P<op>barrier|all_reduce|allreduce|all_gather|allgather|broadcast|"
                         r"reduce_scatter|all_to_all|alltoall)\b", re.IGNORECASE)


# saving (a checkpoint, the model) that times out or hangs, in the reporter's words: English ("it times out when
# saving the checkpoint", "saving the model hangs") and Chinese ("保存模型会出现超时": saving the model times out;
# 卡住/卡死: stuck)
_SAVING = (r"(?:\bsav(?:e|es|ed|ing)\b[^.;]{0,40}?\b(?:checkpoints?|ckpts?|models?|weights|state)\b|"
           r"\bcheckpoint(?:ing|s)?\b)")
_STALLING = r"(?:\btim(?:es?|ed|ing)\s*out\b|\btimeouts?\b|\bhangs?\b|\bhanging\b|\bhung\b|\bstuck\b)"
# (within one clause: "saving works fine, but training hangs later" tells no saving that hangs)
_GAP = r"(?:(?!\b(?:but|fine|works?|worked|ok|okay|however|then)\b)[^.;])"
_SAVE_STALL = lazy_regex(_SAVING + _GAP + r"{0,60}?" + _STALLING + "|" + _STALLING + _GAP + r"{0,40}?\b(?:when|while|"
                         r"during|at|in)\b" + _GAP + r"{0,20}?" + _SAVING
                         + r"|保存[^。；]{0,20}?(?:超时|卡住|卡死|挂起|hang)|(?:超时|卡住|卡死)[^。；]{0,20}?保存",
                         re.IGNORECASE)
_CJK = lazy_regex(r"[\u4e00-\u9fff]{4}")
# a launcher's words for a process that a signal ended, quoted in the reporter's sentence (English, or Chinese with
# no space before the words: "运行时遇到exits with return code = -9"): DeepSpeed's "exits with return code = -9",
# "return code -11", torchrun's "exitcode: -9", torch.multiprocessing's "ProcessExitedException: process 1
# terminated with signal SIGKILL" (-N: the signal N, as Python's subprocess says it)
_EXIT_SAID = lazy_regex(r"(?<![A-Za-z])(?:(?:exits?|exited)\s+with\s+)?(?:return\s*code|exit\s*code|exitcode)"
                        r"\s*[:=]?\s*-(?P<code>\d{1,2})(?!\d)|(?<![A-Za-z])(?:ProcessExitedException|terminated\s+with\s+signal)"
                        r"[^.;。]{0,80}?\b(?P<name>SIG(?:KILL|SEGV|ABRT|BUS|FPE|ILL|TERM))\b", re.IGNORECASE)
_EXIT_NAMES = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
# what the words would mean, not what happened ("DeepSpeed prints `return code = -9` when the OOM killer ...",
# "e.g. exitcode: -9 means ..."), an exit of earlier runs or one fixed since ("it used to ...", "fixed by adding
# swap"), and an exit the job came back from or finished after
_EXIT_GENERIC = lazy_regex(r"\b(?:means?|meaning|documentation|docs?|usage|help|previously|earlier|used\s+to|fixed|"
                           r"solved)\b|\be\.g\.|已解决|解决了", re.IGNORECASE)
# a condition ("prints ... when the OOM killer ends a process"): generic, unless the sentence is of the reporter's own
# run ("my job exits with return code = -9 when loading the model")
_EXIT_CONDITION = lazy_regex(r"\b(?:when(?:ever)?|if|for\s+example|such\s+as)\b", re.IGNORECASE)
_OWN_RUN = lazy_regex(r"\b(?:I|I'm|my|we|our|me|us)\b|我|运行|执行|训练|跑", re.IGNORECASE)
_EXIT_AFTER = lazy_regex(r"\b(?:but|then|and)\b[^.;]{0,40}\b(?:finish\w*|complet\w*|succeed\w*|succeeded|"
                         r"resum\w+|restart\w*|recover\w*|fine|worked)\b|(?:完成|成功|恢复)", re.IGNORECASE)


def _exit_said(sentence: str) -> tuple[str, str] | None:
    """The signal a sentence says a launcher reported a process ended by, and the sentence; None for a question of
    what the words mean in general, a negation, a possibility or an exit the job went on after."""
    match = _EXIT_SAID.search(sentence)
    if match is None:
        return None
    name = match.group("name").upper() if match.group("name") else _EXIT_NAMES.get(int(match.group("code")))
    before = sentence[:match.start()]
    if name is None or _NEGATED.search(before) is not None or _HYPOTHETICAL.search(before) is not None \
            or _EXIT_GENERIC.search(sentence) is not None \
            or (_EXIT_CONDITION.search(sentence) is not None and _OWN_RUN.search(sentence) is None) \
            or _EXIT_AFTER.search(sentence, match.end()) is not None:
        return None
    return name, sentence


def _sentences(line: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]


def _is_prose(line: str) -> bool:
    """A line of sentences: words and spaces, no log head."""
    return len(_WORD.findall(line)) >= 4 and _LOG_HEAD.match(line) is None


# what might happen or what to avoid ("training may hang at ...", "to avoid a hang during ...", "whether it hangs
# at ..."): no account of what happened. A reporter's own condition ("if I use 8 GPUs it hangs at init",
# "it sometimes hangs at step 500") is one, and is kept
_HYPOTHETICAL = lazy_regex(r"\b(?:may|might|could|potential(?:ly)?|possibl[ey]|avoid\w*|prevent\w*|risk\w*|"
                           r"in\s+case|whether)\b", re.IGNORECASE)
# a stop the job came back from ("preempted and resumed from checkpoint"): it went on, the stop is not its end
_WENT_ON = lazy_regex(r"(?<!never )(?<!not )(?<!n't )\b(?:resum\w+|restart\w*|recover\w*|requeu\w+|continu\w+|"
                      r"came\s+back|went\s+on)\b", re.IGNORECASE)


def _states(sentence: str, start: int) -> bool:
    """The sentence states what stands at ``start``: no question, no negation just before it, no condition or
    possibility before it."""
    return (not sentence.rstrip("`'\" ").endswith("?") and _QUESTION_START.match(sentence) is None
            and _NEGATED.search(sentence, 0, start) is None and _HYPOTHETICAL.search(sentence, 0, start) is None)


def _ranks(text: str) -> tuple[int, ...]:
    return tuple(sorted({int(n) for n in re.findall(r"\d+", text)}))


# Words without which a pattern cannot match an ASCII line (each match of it holds one of them, in some case): a
# line that holds none of a pattern's is not searched with it. Most lines of a log hold none (a NCCL INFO line reads
# as a sentence, and was searched with every pattern). Only for ASCII: past it, a pattern's case-insensitive letter
# may match a character that str.lower leaves as it is (the Kelvin sign for "k"). tests/parsing/test_prose_gate.py
# checks that the answers are those of the searches alone.
_NEEDS = {
    "save_stall": ("sav", "checkpoint"),            # _SAVING, in both of _SAVE_STALL's English branches
    "node": ("node", "host", "machine", "server"),
    "stop": ("sig", "externally", "outside", "preempted", "killed", "terminated", "stopped", "cancel", "evicted"),
    "hang": ("hang", "hung", "freez", "froze", "stall", "deadlock", "stuck"),
    "silent": ("rank",),
}
_GATED = True       # (tests turn it off to compare)


def _may_match(line: str) -> dict[str, bool]:
    """For each of :data:`_NEEDS`, whether ``line`` may match its pattern (True for all where it is not ASCII)."""
    if not _GATED or not line.isascii():
        return dict.fromkeys(_NEEDS, True)
    low = line.lower()
    return {name: any(word in low for word in words) for name, words in _NEEDS.items()}


def read_prose(lines: tuple[str, ...] | list[str]) -> ProseAccount:
    """The reporter's account in ``lines`` (a cleaned log's lines)."""
    host = stop = hang = None
    at_init = False
    silent: tuple[int, ...] = ()
    collective = save_stall = exit_said = None
    picked = list(lines) if len(lines) <= MAX_LINES else [*lines[:MAX_LINES // 2], *lines[-MAX_LINES // 2:]]
    for line in picked:
        prose = len(line) <= 2000 and _is_prose(line)
        if not prose and (len(line) > 2000 or _CJK.search(line) is None):
            continue        # (nothing below reads a line that is neither a sentence nor Chinese)
        may = _may_match(line)
        if save_stall is None and _LOG_HEAD.match(line) is None and may["save_stall"] \
                and (said := _SAVE_STALL.search(line)) is not None and _states(line, said.start()):
            save_stall = line.strip()[:300]
        # (an ASCII line with neither "code" nor "sig" cannot match _EXIT_SAID: not searched)
        if exit_said is None and _LOG_HEAD.match(line) is None and (
                not line.isascii() or "code" in line.lower() or "sig" in line.lower()):
            exit_said = next((told_exit for part in (_sentences(line) if prose else [line.strip()])
                              if (told_exit := _exit_said(part)) is not None), None)
        if not prose:
            continue
        for sentence in _sentences(line):
            if host is None and may["node"] and (node := _NODE.search(sentence)) is not None \
                    and (fail := _FAILING_WORD.search(sentence)) is not None and _states(sentence, fail.start()):
                host = node.group("host").rstrip(".")
            if stop is None and may["stop"] and (said := _STOP.search(sentence)) is not None \
                    and _states(sentence, said.start()) and _WENT_ON.search(sentence) is None:
                stop = sentence[:300]
            if may["hang"] and (hung := _HANG.search(sentence)) is not None and _states(sentence, hung.start()) \
                    and _WHERE.match(sentence[hung.end():]) is not None and hang is None:
                hang = sentence[:300]
                at_init = _INIT_WHERE.search(sentence[hung.end():]) is not None
            if not silent and may["silent"] and (quiet := _SILENT.search(sentence)) is not None:
                silent = _ranks(quiet.group("ranks"))
            if collective is None and (op := _COLLECTIVE.search(sentence)) is not None:
                collective = op.group("op").lower()
    told, told_signal = (exit_said[1][:300], exit_said[0]) if exit_said else (None, None)
    if hang is None:
        return ProseAccount(host=host, stop=stop, save_stall=save_stall, exit=told,
                            exit_signal=told_signal)
    return ProseAccount(host=host, stop=stop, hang=hang, hang_at_init=at_init and not silent,
                        silent_ranks=silent, collective=collective, save_stall=save_stall,
                        exit=told, exit_signal=told_signal)


__all__ = ["read_prose"]
