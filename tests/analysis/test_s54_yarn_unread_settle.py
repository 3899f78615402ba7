"""Session 54: under YARN, what settles a failure in words triage has no reader for names the container that printed
the line, not a rank. settle.py built that text from SETTLE_UNREAD by replacing a sentence inside it, which did nothing
at all once the sentence was reworded; both texts now come from one template (settle._SETTLE_UNREAD)."""

from __future__ import annotations

from tests.helpers.report import report_lines
from triage.analysis.settle import SETTLE_UNREAD, SETTLE_UNREAD_YARN, fit_launcher


def test_yarns_text_names_the_container_where_the_generic_one_names_a_rank() -> None:
    assert SETTLE_UNREAD_YARN != SETTLE_UNREAD
    assert "which rank printed the line" in SETTLE_UNREAD and "that rank's lines" in SETTLE_UNREAD
    assert "which container printed the line" in SETTLE_UNREAD_YARN and "that container's lines" in SETTLE_UNREAD_YARN
    assert "rank" not in SETTLE_UNREAD_YARN and "yarn logs -applicationId" in SETTLE_UNREAD_YARN
    # (the rest of the template is the same words in both)
    for words in ("triage has no reader for these words", "the library's own documentation of the message"):
        assert words in SETTLE_UNREAD and words in SETTLE_UNREAD_YARN


def test_fit_launcher_puts_yarns_text_in_and_leaves_others() -> None:
    summary = f"a failure of unknown rank: Fatal: frobnicator rejected the shard map [{SETTLE_UNREAD}]"
    fitted = fit_launcher(summary, "yarn")
    assert SETTLE_UNREAD_YARN in fitted and SETTLE_UNREAD not in fitted
    assert SETTLE_UNREAD in fit_launcher(summary, None)
    assert "srun --label" in fit_launcher(summary, "slurm") and "container" not in fit_launcher(summary, "slurm")


def test_real_yarn_allocator_lines_then_words_of_no_reader() -> None:
    # intel/analytics-zoo#1033's YarnAllocator lines (Spark on YARN), then an executor's failure in words of no reader
    result = report_lines(
        "2019-07-12 14:33:40 INFO  YarnAllocator:54 - Will request 2 executor container(s), each with 1 core(s) and "
        "6758 MB memory (including 614 MB of overhead)",
        "2019-07-12 14:33:40 INFO  YarnAllocator:54 - Submitted 2 unlocalized container requests.",
        "2019-07-12 14:33:58 ERROR Executor:91 - Fatal: frobnicator rejected the shard map")
    assert result.verdict.kind.value == "failure_unlocated", result.verdict.summary
    assert SETTLE_UNREAD_YARN in result.verdict.summary and SETTLE_UNREAD not in result.verdict.summary
