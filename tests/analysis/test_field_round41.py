"""Classes of real pasted logs found by round 41 of the real-world corpus, each tested on a variant written here
(other scripts, lines, pids, commands and locales than the case's own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths


# bash's record of a script's child a signal ended, "<script>: line <N>: <pid> Killed <command>", was read only in
# English: under LANG=zh_CN.UTF-8 bash and libc print "<script>: 第 N 行： <pid> 已杀死 <command>", and the log was
# refused (swc-17/SparseDrive#61's shape, after a progress bar without its line end; another script, line, pid and
# command here)
def test_a_killed_child_in_a_chinese_locale_is_a_sigkill_of_no_rank() -> None:
    result = report("[>>>>>>>>>>>>>                ] 12/40, 3.1 task/s, elapsed: 4s, ETA:     9s"
                    "./scripts/eval.sh: 第 21 行： 90417 已杀死               python3 tools/eval.py $CFG --launcher none")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "90417" in result.verdict.summary, result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict


def test_the_other_signals_and_locales_of_the_same_record() -> None:
    text = ("./run.sh: 第 5 行：  3301 段错误               (核心已转储) python infer.py\n"
            "./train.sh: Zeile 40: 3302 Getötet                 python train.py\n"
            "./train.sh: ligne 12 : 3303 Erreur de segmentation  python train.py\n"
            "./train.sh: 行 7: 3304 強制終了                python train.py\n")
    deaths = parse_rank_deaths(text)
    assert [(d.rank, d.signal, d.pid) for d in deaths] == [(None, "SIGSEGV", 3301), (None, "SIGKILL", 3302),
                                                           (None, "SIGSEGV", 3303), (None, "SIGKILL", 3304)], deaths


def test_a_translated_word_outside_the_job_record_is_no_death() -> None:
    # the words alone (a user's log in German, a Chinese progress message) are not bash's record of a child
    assert parse_rank_deaths("Training abgebrochen: Abgebrochen vom Benutzer\n进程已杀死的数量：0\n") == ()
    assert parse_rank_deaths("epoch 3: Zeile 40 gelesen, 3302 Getötet-Zähler\n") == ()
