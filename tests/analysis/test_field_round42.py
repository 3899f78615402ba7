"""Classes of real pasted logs found by round 42 of the real-world corpus, each tested on a variant written here
(other programs, lines, signals, locales and exceptions than the case's own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import parse_crash_line


# the interactive shell's report of its killed foreground job, strsignal()'s words alone on a line, was read only in
# English ("Killed"): in a Chinese locale it is "已杀死" and the log was refused (danijar/dreamerv3#203's shape, after
# a metrics line; another program's lines here)
def test_the_shells_killed_job_in_a_chinese_locale_is_a_sigkill_of_no_rank() -> None:
    result = report("step 4200 | loss 0.913 | lr 3.0e-4 | 812 samples/s",
                    "saving checkpoint to /data/run7/ckpt_4200.pt",
                    "已杀死")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "已杀死" in result.verdict.summary, result.verdict.summary     # told as the English "Killed" is told
    assert result.verdict.culprit_ranks == (), result.verdict
    crash = parse_crash_line("已杀死")
    assert crash is not None and crash.signal == "SIGKILL", crash


def test_the_other_signals_and_locales_of_the_bare_message() -> None:
    for line, sig in (("段错误 (核心已转储)", "SIGSEGV"), ("Getötet", "SIGKILL"), ("強制終了", "SIGKILL"),
                      ("Speicherzugriffsfehler (Speicherabzug geschrieben)", "SIGSEGV"), ("已放弃", "SIGABRT")):
        crash = parse_crash_line(line)
        assert crash is not None and crash.signal == sig, (line, crash)


def test_the_words_inside_a_sentence_are_no_death() -> None:
    # only the message alone on its line is the shell's: a sentence holding the word is not
    assert parse_crash_line("进程已杀死的数量：0") is None or parse_crash_line("进程已杀死的数量：0").signal is None
    assert parse_crash_line("Getötet wurden 3 Prozesse im letzten Lauf") is None or \
        parse_crash_line("Getötet wurden 3 Prozesse im letzten Lauf").signal is None


# an exception a reporter pasted after a sentence in CJK (fullwidth) punctuation was not read as that exception
# (liming-ai/AlignDet#11's "...with a single gpu，RuntimeError: Default process group has not been initialized");
# another sentence, separator and exception here
def test_an_exception_glued_after_fullwidth_punctuation_is_that_exception() -> None:
    result = report("用两张卡跑 tools/train.py 的时候报错：ValueError: Expected more than 1 value per channel when training")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "ValueError" in result.verdict.summary, result.verdict.summary
    crash = parse_crash_line("I ran it on one card，torch.distributed.DistBackendError: NCCL error in: x.cpp:1, invalid usage")
    assert crash is not None and crash.exc_type == "torch.distributed.DistBackendError", crash


def test_ascii_prose_before_an_exception_name_is_left_as_it_was() -> None:
    # the ASCII comma is everyday prose; only fullwidth punctuation marks a pasted line glued to a sentence
    crash = parse_crash_line("we tried again, RuntimeError: was not printed this time")
    assert crash is None or crash.exc_type != "RuntimeError", crash
