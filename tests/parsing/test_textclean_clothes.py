"""The carriers the metamorphic test (tests/realworld/test_metamorphic.py) found unread, each on a hand-written
variant: docker compose's service tag, journald's host and process head, a paste indented as a whole, a
terminal's wrap of a short paste, of a cut at a space, and of one long tag cut alike on many lines."""

from __future__ import annotations

from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.textclean import clean_text, strip_decorations

AGENT = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 2 (pid: 81234) "
         "of binary: /opt/conda/bin/python")


def test_a_compose_service_tag_goes_and_the_rank_prefix_after_it_is_read() -> None:
    for tag in ("trainer-1  | ", "worker_node_2 | ", "proj-ddp-worker-13   |"):
        line = strip_decorations(tag + "[rank5]: torch.OutOfMemoryError: CUDA out of memory.")[0]
        assert line == "[rank5]: torch.OutOfMemoryError: CUDA out of memory.", tag
        assert split_rank_prefix(line).rank == 5
    # what the service printed keeps its own carriers: a quote marker, an inline-code paste's backticks
    assert strip_decorations("trainer-1  | > RuntimeError: x")[0] == "RuntimeError: x"
    assert strip_decorations("trainer-1  | `[rank0]: RuntimeError: x`")[0] == "[rank0]: RuntimeError: x"
    # a table's row or a pipe in a message is no tag
    assert strip_decorations("loss | 0.25 | step 3")[0] == "loss | 0.25 | step 3"


def test_journald_host_and_process_heads_go_with_the_time() -> None:
    line, stamp = strip_decorations("Dec  3 07:14:55 gpu-b12 python3[9921]: [rank1]: RuntimeError: NCCL error")
    assert (line, stamp) == ("[rank1]: RuntimeError: NCCL error", "Dec  3 07:14:55")
    # the time alone, before a line that is no journald head, leaves that line as it was
    assert strip_decorations("Dec  3 07:14:55 torch.distributed.run: warning")[0] == "torch.distributed.run: warning"


def test_a_paste_indented_as_a_whole_loses_the_common_indent_only() -> None:
    text = "    Traceback (most recent call last):\n      File \"t.py\", line 3, in <module>\n\n    ValueError: x\n"
    assert clean_text(text).lines == ("Traceback (most recent call last):", '  File "t.py", line 3, in <module>',
                                      "", "ValueError: x")
    tabbed = "\t[rank0]: a\n\t\t[rank0]: b"
    assert clean_text(tabbed).lines == ("[rank0]: a", "\t[rank0]: b")


def test_a_short_paste_wrapped_at_a_terminal_width_is_joined_even_where_the_rest_looks_like_a_field() -> None:
    wrapped = "\n".join(AGENT[i:i + 80] for i in range(0, len(AGENT), 80))
    assert wrapped.split("\n")[1].startswith("rank: 2")
    assert clean_text(wrapped).lines == (AGENT,)


def test_a_cut_that_fell_after_a_space_keeps_the_space() -> None:
    line = ("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting for 1800000ms for recv "
            "operation to complete")
    assert line[79] == " " and line[80] != " "
    assert clean_text(line[:80] + "\n" + line[80:]).lines == (line,)


def test_the_cuts_of_one_long_tag_and_path_are_joined_though_they_look_alike() -> None:
    head = '(CommandActor pid=552, ip=10.1.6.16)   File "/home/ray/anaconda3/lib/python3.9/site-packages/torch/'
    lines = [head + f"distributed/elastic/{name}.py\", line {n}, in run" for n, name in
             ((881, "multiprocessing/api"), (1079, "multiprocessing/errors/__init__"),
                              (12, "multiprocessing/tail_log"))]
    wrapped = "\n".join(part for line in lines for part in (line[:120], line[120:]))
    assert len({line[:120] for line in lines}) == 1
    assert clean_text(wrapped).lines == tuple(lines)
