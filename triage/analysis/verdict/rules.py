"""The verdict rules, in their one order (:data:`RULES`): each a pure function of the
:class:`~.engine.Inputs` that returns a candidate with its reasons, or None. The engine picks the
first candidate: a rule above beats every rule below it.

The order is the story: the first failure before what it caused; a disagreement the traces show
before failures that followed it; what an excerpt's own lines say (a DETAIL mismatch, a failure
line, NCCL's counts, an init wait, the watchdog) before what is inferred; the all-clear last, and
never while the input shows a failure (``unlocated``).

The rules that read what a plain failure's report never reaches (op counts, init waits, NCCL processes without a rank,
a full disk, stacks alone, a rankless timeout, the unlocated guard) import their module in the rule, at its first call:
a report whose verdict an earlier rule gives never loads them (tests/report/test_log_report_imports.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from triage.analysis import verdicts
from triage.analysis.describe import call, who
from triage.analysis.failures import Failure
from triage.analysis.gpu_facts import busy_note, busy_ranks
from triage.analysis.partial import (
    coverage,
    reported_mismatch,
    unattributed_verdict,
    watchdog_verdict,
)
from triage.analysis.prose import prose_exit_verdict, prose_hang_verdict, prose_stop_verdict, saving_stall
from triage.analysis.ranks import count_ranks, rank_word
from triage.analysis.stopped import stopped_verdict
from triage.analysis.teardown_after_hang import crash_after_hang
from triage.analysis.unrecorded import END_NOT_SHOWN, no_problem_text
from triage.analysis.verdict import headline
from triage.analysis.verdict.engine import Candidate, Inputs, Rule, Scope
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import EventKind
from triage.parsing.frameworks import CONDOR_PASSED, ENDED_WELL, GOT_OVER, SPARK_STOP_NOTE
from triage.parsing.launch_failure import LAUNCH_TEXT
from triage.parsing.launchers import SLURM_TOUCHED_NOTE
from triage.parsing.mpi_errors import ABORT_AFTER_END_NOTE
from triage.parsing.progress import PASSED_TESTS_NOTE, says_it_ended
from triage.parsing.unread_failure import GONE_ON

_Pair = tuple[Verdict, Finding | None]


def _candidate(pair: _Pair | None, *reasons: str) -> Candidate | None:
    return None if pair is None else Candidate(pair[0], pair[1], tuple(r for r in reasons if r))


def _root(failures: tuple[Failure, ...]) -> list[Failure]:
    """An excerpt's failures that are not a consequence: no collateral line, no teardown signal
    (but SIGKILL, which the OOM killer sends too)."""
    return [f for f in failures if not f.collateral and not (f.teardown and f.signal != 9)]


def _said(failure: Failure) -> str:
    return f"rank {failure.rank}: {failure.kind.value}: {failure.detail[:120]}"


def launch_failed(i: Inputs) -> Candidate | None:
    """A launcher that could not start the program on a node (triage.parsing.launch_failure), before any rank failed
    in its own words: the ranks' ends after it (killed by the launcher's clean-up, an exit code) are its consequence,
    and the program never ran there."""
    launch = [u for u in i.evidence.unattributed if LAUNCH_TEXT in (u.message or "")[:len(LAUNCH_TEXT) + 40]
              and u.order is not None]
    if not launch:
        return None
    first = min(launch, key=lambda u: u.order or 0)
    for failure in i.failures:
        # (order -1: torchrun's root-cause record, which says no place in the text: an exit code alone there is the
        # launch failure's end, not a failure before it)
        exit_only = _EXIT_ONLY.search(failure.detail) is not None
        before = failure.order is not None and failure.order < (first.order or 0) \
            and not (failure.order == -1 and exit_only)
        own = failure.kind is not VerdictKind.CRASH and not exit_only
        if (before or own) and not failure.collateral and not failure.teardown:
            return None        # a rank failed first, or in words of its own: that failure is the story
    hosts = {i.hosts.get(failure.rank) for failure in i.failures}
    if first.host is None and len(hosts) == 1 and None not in hosts:
        first = replace(first, host=hosts.pop())     # the ranks that never ran: the launcher's record names their node
    return _candidate(unattributed_verdict((first,)), "a launcher could not start the program",
                      f"{len(i.failures)} rank failure(s) after it")


_EXIT_ONLY = lazy_regex(r"^(?:rank \d+ (?:\([\w.:-]+\) )?)?exited with (?:exit )?code -?\d+$")


def first_crash(i: Inputs) -> Candidate | None:
    """A crash that is the first failure (a whole run: a crash no launcher teardown explains,
    before any disagreement of the traces or first of all)."""
    if i.complete:
        real = [f for f in i.failures if f.kind is VerdictKind.CRASH and not f.teardown]
        if not real or (i.disagreements and real[0] is not i.failures[0]):
            return None
        first = i.failures[0]
    else:
        root = _root(i.failures)
        if not root or root[0].kind is not VerdictKind.CRASH or root[0] is not i.failures[0] or i.disagreements:
            return None
        first = root[0]
    return _candidate(verdicts.failure(first, list(i.failures), i.hosts), f"first failure: {_said(first)}",
                      f"{len(i.failures)} failure(s) in all")


def stopped_in_prose(i: Inputs) -> Candidate | None:
    """The reporter says the job was stopped from outside, the log holds no stop, and every failure it shows is
    what a stop looks like from inside (triage.analysis.prose)."""
    return _candidate(prose_stop_verdict(i.evidence, i.failures), "a stop from outside, in the reporter's words")


def exit_in_prose(i: Inputs) -> Candidate | None:
    """Nothing in the log concluded, and the reporter quotes a launcher's exit of a process by a signal
    (triage.analysis.prose)."""
    return _candidate(prose_exit_verdict(i.evidence, i.failures),
                      "a launcher's exit by a signal, in the reporter's words")


def hang_in_prose(i: Inputs) -> Candidate | None:
    """Nothing in the log concluded, and the reporter says the job hangs and where (triage.analysis.prose)."""
    return _candidate(prose_hang_verdict(i.evidence), "a hang, in the reporter's words")


def hang_before_teardown_crash(i: Inputs) -> Candidate | None:
    """The live agent detected a hang (a rank stuck), the job was left running, and the only failure
    after it is a rank that finished its work and crashed in its teardown: the hang is the story
    (the crash is said after it by the final step "teardown crash after the hang")."""
    crash = crash_after_hang(i.failures, i.evidence.agent, i.complete, bool(i.straggles))
    found = straggle(i) if crash is not None else None
    if crash is None or found is None:
        return None
    then = f"then: rank {crash.rank} crashed after its exit record"
    return Candidate(found.verdict, found.finding, (*found.reasons, then))


def stopped(i: Inputs) -> Candidate | None:
    """The job was stopped from outside (a time limit, preemption, scancel, a pod's kill) before any
    rank failed, timed out or disagreed: the ranks' ends after it are its consequence."""
    return _candidate(stopped_verdict(i.evidence, i.failures), "a stop from outside, nothing wrong before it")


def mismatch(i: Inputs) -> Candidate | None:
    """The traces disagree: the first disagreement (in flight first, then by time)."""
    if not i.disagreements:
        return None
    first = i.disagreements[0]
    finished = i.evidence.finished_cleanly if i.complete else False
    return _candidate(verdicts.mismatch(first, i.hosts, finished, i.traces, i.paths),
                      f"{first.kind.value} disagreement at seq {first.seq} of {first.group.label}",
                      f"{len(i.disagreements)} group(s) disagree" if len(i.disagreements) > 1 else "")


def reported_mismatch_blamed(i: Inputs) -> Candidate | None:
    """TORCH_DISTRIBUTED_DEBUG=DETAIL's mismatch errors that name a minority."""
    found = reported_mismatch(i.evidence.mismatches, i.hosts, i.evidence.world_size)
    if found is None or not found[0].culprit_ranks:
        return None
    return _candidate(found, f"{len(i.evidence.mismatches)} DETAIL mismatch line(s) name a minority")


def failure(i: Inputs) -> Candidate | None:
    """The first failure of a rank (an exception, a network error, a crash after a disagreement)."""
    failures = list(i.failures) if i.complete else _root(i.failures)
    if not failures:
        return None
    return _candidate(verdicts.failure(failures[0], list(i.failures), i.hosts),
                      f"first failure: {_said(failures[0])}")


def unattributed(i: Inputs) -> Candidate | None:
    """A failure line that no line of the excerpt ties to a rank."""
    return _candidate(unattributed_verdict(i.evidence.unattributed, i.evidence.stack),
                      f"{len(i.evidence.unattributed)} failure line(s) of no known rank")


def op_counts(i: Inputs) -> Candidate | None:
    """NCCL RAS's operation counts, or monitored-barrier lines: ranks that fell behind."""
    from triage.analysis.op_counts import lagging_verdict, op_count_verdict
    found = op_count_verdict(i.evidence.op_count_splits) or lagging_verdict(i.evidence.lagging)
    return _candidate(found, "NCCL RAS operation counts or monitored-barrier lines")


def init_hang(i: Inputs) -> Candidate | None:
    """The job never got past its set-up: store, rendezvous or NCCL unique-id waits."""
    from triage.analysis.init_hang import init_hang_verdict
    return _candidate(init_hang_verdict(i.evidence.init_waits), f"{len(i.evidence.init_waits)} init wait line(s)")


def reported_mismatch_any(i: Inputs) -> Candidate | None:
    """DETAIL mismatch errors that blame no rank (one side only, or sequence numbers only)."""
    found = reported_mismatch(i.evidence.mismatches, i.hosts, i.evidence.world_size)
    return _candidate(found, f"{len(i.evidence.mismatches)} DETAIL mismatch line(s), no minority")


def p2p(i: Inputs) -> Candidate | None:
    """A send without its recv (or the reverse), or a pair whose sizes or dtypes differ."""
    if not i.p2p:
        return None
    first = i.p2p[0]
    what = first.kind.value if first.kind else "unmatched"
    return _candidate(verdicts.p2p_verdict(first, i.hosts, i.paths),
                      f"p2p {what} between ranks {first.sender} and {first.receiver} of {first.group.label}")


def nccl_processes(i: Inputs) -> Candidate | None:
    """NCCL INFO lines of processes with no rank (no trace at all): their opCounts."""
    if i.traces:
        return None
    from triage.analysis.nccl_processes import nccl_process_verdict
    return _candidate(nccl_process_verdict(i.evidence.nccl_processes),
                      f"{len(i.evidence.nccl_processes)} NCCL process(es), no trace")


def watchdog(i: Inputs) -> Candidate | None:
    """Watchdog timeouts (or store waits) of the ranks an excerpt shows."""
    found = watchdog_verdict(i.ranks, i.evidence.events, i.hosts, i.coverage or {}, i.evidence.unprefixed_tail,
                             i.evidence.agent_stopped)
    if (saving := saving_stall(i.evidence, found)) is not None:
        return _candidate(saving, "watchdog timeouts, and saving that times out in the reporter's words")
    return _candidate(found, "watchdog timeouts or store waits in the excerpt")


def straggle(i: Inputs) -> Candidate | None:
    """Ranks wait in a collective some members of their group never reached."""
    if not i.straggles or (not i.complete and i.straggles[0].no_data):
        return None
    first = i.straggles[0]
    return _candidate(verdicts.straggle(first, {r.rank: r for r in i.ranks}, i.hosts, i.missing, i.paths,
                                        busy_ranks(i.evidence.gpus)),
                      f"{rank_word(first.waiting)} wait at seq {first.seq} of {first.group.label}",
                      f"behind: {rank_word(first.behind)}" if first.behind else "",
                      f"no data: {rank_word(first.no_data)}" if first.no_data else "")


def disk_full(i: Inputs) -> Candidate | None:
    """Ranks whose exit record a full run directory kept out: how they ended is not recorded."""
    from triage.analysis.disk_full import disk_full_verdict
    return _candidate(disk_full_verdict(i.evidence, i.hosts), "a rank's disk guard: the run directory's disk was full")


def missing(i: Inputs) -> Candidate | None:
    """Ranks of the world with no dump, no stack and no log."""
    if not i.missing:
        return None
    return _candidate(verdicts.missing_only(i.missing, i.hosts, len(i.world), i.paths),
                      f"{rank_word(i.missing)} of {len(i.world)} left nothing")


def all_waiting(i: Inputs) -> Candidate | None:
    """Every rank of a group waits in the same collective: no rank differs."""
    if not i.waits:
        return None
    group, seq, coll = i.waits[0]
    busy = busy_ranks(i.evidence.gpus)
    if len(group.members) == 1:
        # a collective of one rank waits for no peer: what it waits for is the GPU work queued before it
        (only,) = group.members
        body = (f"{who((only,), i.hosts)} waits in {call(coll)} at seq {seq} of {group.label}, a group of one "
                "rank that waits for no peer: the GPU work queued before the collective does not finish"
                f"{busy_note((only,), busy)}{_timed_out(i, group.members, seq)}")
        verdict = headline.verdict(VerdictKind.HANG, body, culprit_ranks=(only,), process_group=group.pg, seq=seq)
    else:
        body = (f"every rank of {group.label} waits in {call(coll)} at seq {seq}; "
                "no rank differs in the traces (look outside the job: network, a dead peer)"
                + _timed_out(i, group.members, seq) + busy_note(group.members, busy).replace(
                    "a kernel is running: one that never ends holds the rank there",
                    "NCCL kernels waiting for a peer, or a kernel queued before the collective that never ends"))
        verdict = headline.verdict(VerdictKind.HANG, body, process_group=group.pg, seq=seq)
    finding = Finding(VerdictKind.HANG.value, group.members, verdict.summary, root_cause=True)
    return Candidate(verdict, finding, (f"{len(i.waits)} group(s) all waiting",))


_RAN_FOR = lazy_regex(r"ran for (\d+) ms")


def _timed_out(i: Inputs, members: tuple[int, ...], seq: int) -> str:
    """"; NCCL's watchdog timed it out after N ms" when a member's watchdog line says so."""
    for event in i.evidence.events:
        if event.kind is EventKind.WATCHDOG_TIMEOUT and event.rank in members and event.seq == seq:
            ran = _RAN_FOR.search(event.detail)
            return "; NCCL's watchdog timed it out" + (f" after {ran.group(1)} ms" if ran else "")
    return ""


def stacks(i: Inputs) -> Candidate | None:
    """No trace: what the stacks say (ranks outside any collective, or in different ones)."""
    from triage.analysis.stacks_only import stacks_verdict
    return _candidate(stacks_verdict(i.ranks, i.hosts), "stacks only")


def _unlocated_coverage(i: Inputs) -> Mapping[str, object]:
    return coverage(i.evidence, i.ranks, len(i.world) or None) if i.complete else (i.coverage or {})


def rankless_timeout(i: Inputs) -> Candidate | None:
    """A collective timed out, but no line ties the timeout to a rank (a cut watchdog line, its frames
    alone, a received dump signal): a hang whose ranks are not in this input, not an unlocated failure."""
    from triage.analysis.rankless import rankless_timeout_verdict
    return _candidate(rankless_timeout_verdict(i.evidence, list(i.failures), _unlocated_coverage(i)),
                      "a timeout of no known rank")


def unlocated(i: Inputs) -> Candidate | None:
    """The last guard: the input shows a failure, so no all-clear, even without a culprit."""
    from triage.analysis.verdict.unlocated import unlocated_verdict
    return _candidate(unlocated_verdict(i.evidence, list(i.failures), _unlocated_coverage(i)),
                      "failure evidence with no culprit")


def _unread_stacks(i: Inputs) -> str:
    """"; rank N's stack not recorded (...)" for sampled ranks whose stack triage could not read."""
    unread = [r for r in i.ranks if r.stack_unread and not (r.stack or r.has_trace or r.exit)]
    if not unread:
        return ""
    tools = sorted({part.split(" (", 1)[0] for r in unread for part in (r.stack_unread or "").split("; ")})
    ranks = tuple(r.rank for r in unread)
    return (f"; what {who(ranks, i.hosts)} was doing is not recorded: triage could not read "
            f"{'its stack' if len(ranks) == 1 else 'their stacks'} ({', '.join(tools)})")


# the notes of a line read after the run's own word that it ended well (the step's accounting, an MPI_Abort with code
# 0): their words say so, and that the input shows the run's end
_AFTER_ITS_END = (SLURM_TOUCHED_NOTE, ABORT_AFTER_END_NOTE)
# (a test session that passed: its summary's words)
_OWN_WORDS = (GOT_OVER, ENDED_WELL, CONDOR_PASSED, GONE_ON, SPARK_STOP_NOTE, PASSED_TESTS_NOTE, *_AFTER_ITS_END)


def _went_on(i: Inputs) -> str:
    """"; it went on after an error line it logged: ..." where the input shows one (triage.parsing.progress)."""
    lines = i.evidence.went_on
    if not lines:
        return ""
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    if lines[0].startswith(_OWN_WORDS):
        # (no progress of its own: its own words)
        return f"; {lines[0][:240]}{more}"
    return f"; the job went on after an error line it logged, its progress lines follow: '{lines[0][:160]}'{more}"


def _end_not_shown(i: Inputs) -> str:
    """"; this input does not show the job's end: ..." for an excerpt whose ranks' last lines are neither the run's
    own word that it ended well nor how a rank ended: a log that stops in the middle of the work, as a hung job's
    does, is no evidence that nothing went wrong after it (the all-clear says so, never "nothing failed" alone)."""
    if i.complete or i.evidence.finished_cleanly or any(r.exit is not None for r in i.ranks) \
            or any(note.startswith(_AFTER_ITS_END) for note in i.evidence.went_on):
        return ""
    shown = sorted((r for r in i.ranks if r.last_lines), key=lambda r: r.rank)
    if not shown or any(says_it_ended(line) for r in shown for line in r.last_lines):
        return ""
    last = shown[0].last_lines[-1].strip()[:120]
    return (f"; {END_NOT_SHOWN} (no line says it finished; the last line of {who((shown[0].rank,), i.hosts)}: "
            f"'{last}'): if it printed nothing after this, it hung here")


def all_clear(i: Inputs) -> Candidate | None:
    """Nothing above concluded: no problem found, saying what was not recorded (collectives, stacks), whether the
    input shows the job's end, and the error lines the job went on after."""
    end = _end_not_shown(i)
    unread = _unread_stacks(i) + _went_on(i)
    honest = no_problem_text(i.evidence, i.world, i.traces, end)
    if honest is not None:          # some collectives were not recorded: never "they match"
        return Candidate(Verdict(VerdictKind.NO_PROBLEM_FOUND, honest + unread), None,
                         ("some collectives not recorded",))
    if unread or end:
        traced = len(i.traces)
        head = "no rank failed" + end + (f"; the collectives of {traced} ranks match" if traced > 1 else "")
        return Candidate(headline.verdict(VerdictKind.NO_PROBLEM_FOUND, head + unread), None,
                         ("the input's end not shown" if end and not _unread_stacks(i)
                          else "some stacks not recorded",))
    traced = len(i.traces)
    if traced == 1:      # a single rank matches nothing: say so, never "its collectives match"
        body = f"1 rank; it {'finished' if i.evidence.finished_cleanly else 'did not fail'}; no collective to compare"
    elif i.evidence.finished_cleanly:
        body = f"the run finished and the {traced} ranks' collectives all match"
    else:
        body = f"the collectives of {traced} ranks match and no rank failed"
    return Candidate(headline.verdict(VerdictKind.NO_PROBLEM_FOUND, body), None, (f"{count_ranks(traced)} traced",))


RULES: tuple[Rule, ...] = (
    Rule("stopped from outside", Scope.ANY, stopped),
    Rule("stopped from outside, in the reporter's words", Scope.EXCERPT, stopped_in_prose),
    Rule("hang before a teardown crash", Scope.COMPLETE, hang_before_teardown_crash),
    Rule("launcher could not start the program", Scope.EXCERPT, launch_failed),
    Rule("first crash", Scope.ANY, first_crash),
    Rule("mismatch", Scope.ANY, mismatch),
    Rule("reported mismatch (blamed)", Scope.EXCERPT, reported_mismatch_blamed),
    Rule("first failure", Scope.ANY, failure),
    Rule("failure of no known rank", Scope.EXCERPT, unattributed),
    Rule("operation counts", Scope.EXCERPT, op_counts),
    Rule("init hang", Scope.EXCERPT, init_hang),
    Rule("reported mismatch", Scope.EXCERPT, reported_mismatch_any),
    Rule("p2p", Scope.ANY, p2p),
    Rule("NCCL processes", Scope.EXCERPT, nccl_processes),
    Rule("watchdog", Scope.EXCERPT, watchdog),
    Rule("stuck rank", Scope.ANY, straggle),
    Rule("records kept out by a full disk", Scope.COMPLETE, disk_full),
    Rule("missing rank", Scope.COMPLETE, missing),
    Rule("all ranks waiting", Scope.COMPLETE, all_waiting),
    Rule("stacks", Scope.COMPLETE, stacks),
    Rule("timeout of no known rank", Scope.ANY, rankless_timeout),
    Rule("failure, culprit unlocated", Scope.ANY, unlocated),
    Rule("an exit by a signal in the reporter's words", Scope.EXCERPT, exit_in_prose),
    Rule("a hang in the reporter's words", Scope.EXCERPT, hang_in_prose),
    Rule("all clear", Scope.ANY, all_clear),
)

__all__ = ["RULES"]
