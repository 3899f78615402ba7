"""Classes of real pasted logs found by round 34 of the real-world corpus, each tested on a variant written
here (other programs, ranks, signals, communicators, widths and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.textclean import clean_text


# Open MPI names a communicator it derived "MPI COMMUNICATOR 5 DUP FROM 0" (words, not one token): the rank's
# MPI_ABORT record in such a communicator was refused (aws/amazon-sagemaker-examples#3827's shape; another rank,
# communicator number and error code here). A duplicate of MPI_COMM_WORLD (context 0) keeps its ranks; a split
# renumbers them, so its rank names no rank of the job.
def test_mpi_abort_in_a_duplicate_of_the_world_communicator_names_the_rank() -> None:
    result = report("[1,6]<stdout>:epoch 3 step 120 loss 0.231",
                    "--------------------------------------------------------------------------",
                    "MPI_ABORT was invoked on rank 6 in communicator MPI COMMUNICATOR 3 DUP FROM 0",
                    "with errorcode 17.",
                    "",
                    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
                    "--------------------------------------------------------------------------")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == (6,), result.verdict.summary


def test_mpi_abort_in_a_split_communicator_names_no_rank_of_the_job() -> None:
    records = parse_mpi_errors("MPI_ABORT was invoked on rank 1 in communicator MPI COMMUNICATOR 4 SPLIT FROM 0\n"
                               "with errorcode 2.\n")
    assert len(records) == 1 and records[0].rank is None, records
    assert "errorcode 2" in records[0].text
    named = parse_mpi_errors("MPI_ABORT was invoked on rank 3 in communicator solver_comm with errorcode 1.\n")
    assert [r.rank for r in named] == [3]


# Python's subprocess says a command "died with <Signals.SIGKILL: 9>"; where only those words are in the text (an
# issue title, a CalledProcessError cut inside its argv) the death by that signal was not read and the cut
# traceback made an unlocated failure (Linaqruf/kohya-trainer#148's and aigc-apps/sd-webui-EasyPhoto#401's shape;
# another signal, title and launcher here)
def test_died_with_signals_without_its_command_is_a_crash_by_that_signal() -> None:
    result = report("fine-tune stops with: died with <Signals.SIGSEGV: 11> after the first epoch",
                    "Traceback (most recent call last):",
                    '  File "/opt/venv/bin/accelerate", line 8, in <module>',
                    "    sys.exit(main())",
                    '  File "/opt/venv/lib/python3.11/site-packages/accelerate/commands/launch.py", line 640, in '
                    "simple_launcher",
                    "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)",
                    "subprocess.CalledProcessError: Command '['/opt/venv/bin/python', 'finetune.py', '--config=")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_died_with_in_other_words_is_not_a_signal() -> None:
    result = report("my model died with a loss of nan", "ValueError: loss is nan")
    assert "SIGKILL" not in result.verdict.summary and "SIGSEGV" not in result.verdict.summary


# A terminal that pads every line to its width with spaces (a copy from tmux or screen) made the lines of a
# traceback look cut at that width, so they were joined into one and the exception line at the end was lost
# (kanishkg/stream-of-search#5's shape; another width, exception and frames here)
def test_lines_padded_to_the_width_are_not_joined_as_wrapped() -> None:
    width = 160
    lines = ['  File "/srv/env/lib/python3.12/site-packages/torch/distributed/fsdp/api.py", line 88, in wrap',
             "    _check_same_params(self.process_group, params)",
             '  File "/srv/env/lib/python3.12/site-packages/torch/distributed/utils.py", line 301, in check',
             "    return dist._check(process_group, tensors)"]
    text = "\n".join(line.ljust(width) for line in lines) + "\nValueError: parameter shapes differ across ranks\n"
    cleaned = clean_text(text)
    assert any(line.startswith("ValueError: parameter shapes differ") for line in cleaned.lines), cleaned.lines
    result = report(*text.splitlines())
    assert result.verdict.kind.value == "exception", result.verdict.summary


def test_lines_cut_at_the_width_are_still_joined() -> None:
    # a real wrap: the lines at the width end in text (or in the one space the cut fell on), never in padding
    long = "[rank2]:[E1107 08:11:52.114 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation " \
           "timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for " \
           "600041 milliseconds before timing out."
    other = "[rank0]:[E1107 08:11:52.118 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation " \
            "timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for " \
            "600044 milliseconds before timing out (and something else was still pending)."
    width = 100
    raw = [piece for text in (long, other, long.replace("rank2", "rank3").replace("Rank 2", "Rank 3"))
           for piece in (text[i:i + width] for i in range(0, len(text), width))]
    cleaned = clean_text("\n".join(raw) + "\n")
    assert long in cleaned.lines, cleaned.lines
