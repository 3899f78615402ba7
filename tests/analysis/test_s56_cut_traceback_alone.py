"""Session 56 (fix56c item 7): a traceback cut by the paste, with nothing else failing, says it is cut and what would
settle it ("rank 1 raised an exception; its exception line is not in this input (its traceback is cut after train.py
line 61 in main); ...: rank 1's own output past its traceback's last frame would settle which exception it was"),
never "rank 1 failed after something else did": nothing in the input says another failure came first
(triage.analysis.verdict.unlocated). A failure the input calls a consequence keeps "after something else did"."""

from __future__ import annotations

from tests.helpers.report import report_lines
from tests.realworld.scoring import load_cases
from triage.analysis.analyze import analyze
from triage.analysis.failures import Failure
from triage.analysis.verdict.unlocated import unlocated_verdict
from triage.load.inputs import load_log_texts
from triage.load.logs.line_events import cut_traceback_words
from triage.model import VerdictKind
from triage.model.evidence import Evidence

_CUT = ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>', "    main()",
        '  File "train.py", line 61, in main', "    loss = model(batch)"]


def test_one_ranks_cut_traceback_says_it_is_cut() -> None:
    report = report_lines("3: epoch 1 step 5 loss 0.7", *(f"1: {line}" for line in _CUT))
    summary = report.verdict.summary
    assert "after something else" not in summary, summary
    assert "rank 1 raised an exception; its exception line is not in this input (its traceback is cut after " \
           "train.py line 61 in main); this input holds" in summary, summary
    assert summary.endswith(": rank 1's own output past its traceback's last frame would settle which exception it "
                            "was"), summary
    assert summary.count("would settle") == 1, summary


def test_several_ranks_cut_tracebacks_name_the_others() -> None:
    report = report_lines(*(f"[rank{r}]: {line}" for r in (2, 5) for line in _CUT))
    summary = report.verdict.summary
    assert "after something else" not in summary and "rank 2 raised an exception;" in summary, summary
    assert "the traceback of rank 5 cut too" in summary, summary
    assert summary.endswith(": every rank's own output past its traceback's last frame would settle which exception "
                            "it was"), summary


def test_a_consequence_keeps_after_something_else() -> None:
    cut = Failure(1, VerdictKind.EXCEPTION, f"rank 1 raised {cut_traceback_words(None)}", None, (), False,
                  collateral=True)
    peer = Failure(0, VerdictKind.NETWORK_ERROR, "rank 0 hit a network error: Connection closed by peer", None, (),
                   False, collateral=True)
    found = unlocated_verdict(Evidence(complete=False), [peer, cut], {})
    assert found is not None
    summary = found[0].summary
    assert "rank 0 failed after something else did (rank 0 hit a network error" in summary, summary
    assert "rank 1 raised an exception; its exception line is not in this input" in summary, summary
    assert "rank 1 failed after" not in summary and "ranks 0,1" not in summary.split(";")[0]
    assert summary.count("would settle") == 1 and "the log of the rank that failed first" in summary, summary


def test_opennmt_tf_985_says_it_is_cut_and_no_more() -> None:
    # (OpenNMT/OpenNMT-tf#985: rank 2's traceback under mpirun --tag-output, the paste ending at runner.train())
    case = next(c for c in load_cases() if c.log.parent.name == "OpenNMT__OpenNMT-tf__985")
    report = analyze(load_log_texts([("log.txt", case.log.read_text(encoding="utf-8"))]))
    summary = report.verdict.summary
    assert "after something else" not in summary, summary
    assert summary.split(": ", 1)[1].startswith("rank 2 raised an exception; its exception line is not in this input"), summary
