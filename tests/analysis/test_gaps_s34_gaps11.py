"""Classes left open by the corpus (issue 23), each tested on a variant written here: a long list of numbers that a
terminal's wrap cut mid-number, a failure or a stop told in the reporter's prose, a hang told only in prose."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.textclean import clean_text


def _wrapped(line: str, width: int) -> list[str]:
    return [line[i:i + width] for i in range(0, len(line), width)]


def _cut_mid_number(tasks: list[int], width: int, what: str) -> str:
    """srun's line for these tasks, its host name as long as it takes for a cut at ``width`` to fall inside the
    last task's number (so that the piece after the cut starts with digits, then ": ")."""
    for pad in range(width):
        line = f"srun: error: gpu-{'b' * pad}07: tasks {','.join(map(str, tasks))}: {what}"
        colon = line.index(f": {what}")
        if any(colon - len(str(tasks[-1])) < cut < colon for cut in range(width, len(line), width)):
            return line
    raise AssertionError("no such padding")


# srun's record of the tasks that died on one node lists them all on one line; a terminal's wrap cut the list
# mid-number and the last piece ("20: Segmentation fault") reads like srun's own "20: " label (flux-core#765's
# shape; another node, list, signal and width here)
def test_a_number_list_cut_mid_number_by_the_wrap_is_joined_again() -> None:
    for width in (80, 100, 132):
        line = _cut_mid_number(list(range(3, 1400, 6)), width, "Bus error (core dumped)")
        pieces = _wrapped(line, width)
        assert any(piece[:1].isdigit() and ": Bus" in piece for piece in pieces)
        lines = clean_text("\n".join(["$ srun -N4 -n512 ./train", *pieces, "$ echo done"])).lines
        assert line in lines, (width, lines)


def test_a_labelled_logs_next_label_is_not_the_rest_of_a_number() -> None:
    # srun --label: a line of rank 3 that ends in numbers exactly at the width, then rank 12's own line
    width = 80
    first = ("3: step 10 grads " + ",".join(str(n) for n in range(100, 200, 4)))[:width]
    others = [f"{r}: {'x' * (width - 3 - len(str(r)))}" for r in (4, 5, 6)]   # other lines of the same width
    lines = clean_text("\n".join([first, "12: RuntimeError: boom", *others])).lines
    assert "12: RuntimeError: boom" in lines


def test_a_segfault_listed_over_wrapped_lines_names_every_task() -> None:
    tasks = list(range(1, 700, 8))
    line = _cut_mid_number(tasks, 80, "Segmentation fault")
    result = report("$ srun -N8 -n1024 ./app", *_wrapped(line, 80))
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == tuple(tasks)


# The reporter names the node the failures are on, and no line of the log names a host: the node is the finding
# (jade-hpc-gpu#194's shape; another node, error and wording here)
def test_the_node_the_reporter_names_is_the_host_of_a_failure_the_log_ties_to_none() -> None:
    result = report("Since Monday every job scheduled on host gpu-c042 crashes within minutes, always with:",
                    "",
                    "torch.cuda.OutOfMemoryError: CUDA error: an illegal memory access was encountered",
                    "CUDA kernel errors might be asynchronously reported at some other API call.")
    assert result.verdict.culprit_host == "gpu-c042", result.verdict.summary
    assert "the reporter's words" in result.verdict.summary


def test_a_host_in_the_log_wins_over_the_reporters_node() -> None:
    result = report("Jobs on node gpu-c042 keep failing, here is one:",
                    "gpu-c051:3312:3390 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.51<0>",
                    "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert result.verdict.culprit_host != "gpu-c042", result.verdict.summary


def test_a_node_in_a_question_or_a_denial_is_not_the_finding() -> None:
    for words in ("Is node gpu-c042 failing for anyone else?", "The job did not fail on node gpu-c042, only here:"):
        result = report(words, "RuntimeError: CUDA error: an illegal memory access was encountered")
        assert result.verdict.culprit_host is None, (words, result.verdict.summary)


# The reporter says the job was stopped from outside; what the log shows is what a stop looks like from inside
# (libfabric#11307's shape: another runtime, wording and rank here)
def test_a_stop_told_in_prose_is_the_verdict_over_a_communication_abort() -> None:
    for words in ("Turns out the job was preempted by a higher-priority reservation.",
                  "We later found the pods were killed by the scheduler to make room for another job.",
                  "It seems our runs are being sent SIGTERM from outside, no idea by whom."):
        result = report("Our 64-node job dies at random times with:",
                        "[rank37]: RuntimeError: NCCL communicator was aborted on rank 37.",
                        words)
        assert result.verdict.kind.value == "stopped", (words, result.verdict.summary)
        assert result.verdict.culprit_ranks == (), words


def test_a_fault_of_the_jobs_own_stays_the_verdict_over_a_stop_told_in_prose() -> None:
    for failure in ("[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
                    "[rank3]: ValueError: expected a tensor of 4 dimensions, got 3"):
        result = report("Our job dies with this:", failure, "Then the job was preempted by the scheduler.")
        assert result.verdict.kind.value != "stopped", (failure, result.verdict.summary)
        assert result.verdict.culprit_ranks == (3,), failure


def test_a_stop_denied_or_asked_about_is_no_stop() -> None:
    for words in ("The job was not preempted, I checked sacct.", "Could the job have been killed by the scheduler?"):
        result = report("[rank2]: RuntimeError: NCCL communicator was aborted on rank 2.", words)
        assert result.verdict.kind.value != "stopped", (words, result.verdict.summary)


# A hang told only in prose is a hang, never a refusal (CompVis/taming-transformers#12, dylanyunlon/Neuron_SP#73's
# shapes: other programs, ranks, collectives and wordings here)
def test_a_hang_at_set_up_told_in_prose_is_an_init_hang() -> None:
    result = report("With two nodes the script freezes forever at `dist.init_process_group(backend='nccl')`, "
                    "one node works.")
    assert result.verdict.kind.value == "init_hang", result.verdict.summary
    assert result.verdict.culprit_ranks == ()


def test_a_hang_told_in_prose_with_ranks_that_never_print_names_them() -> None:
    result = report("## What happens",
                    "Training gets stuck after `epoch 0 step 12` on 4 GPUs. Rank 3 never prints its loss line.",
                    "Ranks 0-2 sit in `all_reduce` according to py-spy.")
    assert result.verdict.kind.value == "stuck_outside_collective", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,)
    plain = report("The evaluation loop hangs during the second epoch; rank 5 never prints anything after it.")
    assert plain.verdict.kind.value == "hang" and plain.verdict.culprit_ranks == (5,), plain.verdict.summary


def test_a_hang_told_without_where_or_denied_is_still_refused() -> None:
    import pytest

    from triage.errors import InputError
    for words in ("My training hangs, any idea?", "It no longer hangs at init after the update, thanks!"):
        with pytest.raises(InputError):
            report(words)


# New clothing for pasted logs (test_metamorphic's transformations of session 34): each on a log written here
_TRACE = ["[rank2]: Traceback (most recent call last):",
          '[rank2]:   File "/srv/job/train.py", line 88, in <module>',
          "[rank2]:     loss = step(batch)",
          "[rank2]: RuntimeError: CUDA error: misaligned address"]


def test_a_paste_that_went_through_pythons_default_logging_head_is_read_through_it() -> None:
    result = report(*(f"WARNING:__main__:{line}" for line in _TRACE))
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary
    stamped = report(*(f"2026-11-26 10:00:01,123 - launcher - ERROR - {line}" for line in _TRACE))
    assert stamped.verdict.culprit_ranks == (2,), stamped.verdict.summary


def test_torchelastics_own_logging_heads_on_some_lines_are_kept() -> None:
    line = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 7) of binary"
    lines = clean_text("\n".join([*_TRACE, line])).lines
    assert line in lines


def test_curly_quotes_and_a_windows_1252_file_read_as_the_log() -> None:
    from triage.parsing.textclean import decoded
    curly = [line.replace('"', "\u201c", 1).replace('"', "\u201d", 1) for line in _TRACE]
    assert clean_text("\n".join(curly)).lines == tuple(_TRACE)
    data = "\n".join(curly).encode("cp1252")
    assert decoded(data) == "\n".join(curly)
    mixed = "[rank0]: 训练开始\n".encode() + data      # a UTF-8 line stays UTF-8
    assert decoded(mixed).startswith("[rank0]: 训练开始\n")
    assert decoded(b"\x81\x8d ok").endswith(" ok")   # bytes neither code page has: replaced, never raised
