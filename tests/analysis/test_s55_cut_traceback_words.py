"""A cut traceback's words (fix55c item 6): "rank 1 raised: a Python traceback whose exception line is not in this
input" said it in the reader's terms; now "rank 1 raised an exception; its exception line is not in this input
(its traceback is cut after train.py line 61 in main); the lines after that frame would settle which
exception it was" (triage.load.logs.line_events.cut_traceback_words; a long path by its last two parts; a verdict that
quotes it cut at a clause's end, triage.analysis.verdict.unlocated)."""

from __future__ import annotations

from tests.helpers.report import report_lines
from tests.realworld.scoring import load_cases
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.load.logs.line_events import cut_traceback_words

_CUT = ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>', "    main()",
        '  File "train.py", line 61, in main', "    loss = model(batch)"]


def _words(report) -> str:  # type: ignore[no-untyped-def]
    return " ".join([report.verdict.summary, *(f.detail for f in report.findings)])


def test_a_ranks_cut_traceback_says_where_it_is_cut() -> None:
    report = report_lines("[rank0]: step 100 loss 0.3", *(f"[rank1]: {line}" for line in _CUT))
    words = _words(report)
    assert "rank 1 raised an exception; its exception line is not in this input (its traceback " \
           "is cut after train.py line 61 in main)" in words, words
    assert "the lines after that frame would settle which exception it was" in words, words
    assert "a Python traceback whose" not in words and "raised: an exception" not in words


def test_a_cut_traceback_of_no_rank_names_its_last_frame_by_its_paths_last_parts() -> None:
    report = report_lines("epoch 1 step 10 loss 0.5", *_CUT[:3], '  File "/opt/conda/lib/python3.10/site-packages/'
                          'torch/nn/modules/module.py", line 1501, in _call_impl')
    assert "after .../modules/module.py line 1501 in _call_impl)" in report.verdict.summary, report.verdict.summary


def test_a_traceback_the_process_went_past_names_no_frame() -> None:
    words = cut_traceback_words(['File "train.py", line 61, in main', "loss = model(batch)", "epoch 2 step 1"])
    assert "is cut after" not in words and "would settle which exception it was" in words
    assert cut_traceback_words(None).startswith("an exception; its exception line is not in this input")


def test_opennmt_tf_985_says_it_plainly() -> None:
    # (OpenNMT/OpenNMT-tf#985: rank 2's traceback under mpirun --tag-output, the paste ending at runner.train()
    case = next(c for c in load_cases() if c.log.parent.name == "OpenNMT__OpenNMT-tf__985")
    report = analyze(load_log_texts([("log.txt", case.log.read_text(encoding="utf-8"))]))
    assert "rank 2 raised an exception; its exception line is not in this input (its traceback is cut " \
           "after .../bin/main.py line 318 in main)" in report.verdict.summary, report.verdict.summary


def test_sgmse_44s_windows_path_by_its_last_parts_and_rank_0() -> None:
    # (sp-uhh/sgmse#44: Lightning on Windows, one process announcing rank 0 of a world of one, the paste cut inside
    # the traceback: fix55d's sole-process rule reads the cut traceback's words by their start)
    case = next(c for c in load_cases() if c.log.parent.name == "sp-uhh__sgmse__44")
    report = analyze(load_log_texts([("log.txt", case.log.read_text(encoding="utf-8"))]))
    assert report.verdict.culprit_ranks == (0,), report.verdict.summary
    assert "after ...\\trainer\\call.py line 43 in _call_and_handle_interrupt)" in report.verdict.summary
