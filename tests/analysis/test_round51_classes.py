"""Round 51's classes (issue 23), each on variants written for the test, with negatives."""

from __future__ import annotations

from triage.parsing.log_prefix import split_rank_prefix


def test_an_open_mpi_backtrace_frame_index_cut_at_the_line_end_is_a_pid_head_not_a_rank() -> None:
    # Open MPI's signal handler heads its lines "[host:pid] "; a reporter's wrap can leave the frame's index alone
    for line in ("[node17:40213] [ 7]", "[gpu-a:9] [12]", "[n01:5511] [ 3]  "):
        head = split_rank_prefix(line.rstrip())
        assert head.rank is None and head.pid is not None, line


def test_a_host_tag_before_other_text_keeps_its_rank() -> None:
    # negative: a "[host:N]" tag whose text is not Open MPI's record keeps its number as the tag's rank, also where
    # a bracketed number ends the line after other words
    for line in ("[worker2:3] step 5 done", "[worker2:3] epoch [5]"):
        assert split_rank_prefix(line).rank == 3, line
