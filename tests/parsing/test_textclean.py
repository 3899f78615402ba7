"""Pasted text made readable: what terminals, CI pages and GitHub issues add to log lines."""

from __future__ import annotations

from triage.parsing.textclean import clean_text, strip_decorations

WATCHDOG = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=86, OpType=ALLREDUCE, "
            "NumelIn=32, NumelOut=32, Timeout(ms)=1800000) ran for 1800027 milliseconds before timing out.")


def test_colours_quote_markers_crlf_and_trailing_spaces_go() -> None:
    text = f"> \x1b[31m[rank3]:{WATCHDOG}\x1b[0m   \r\n> \r\n"
    assert clean_text(text).lines == (f"[rank3]:{WATCHDOG}",)


def test_markdown_fences_are_dropped() -> None:
    assert clean_text(f"```\n[rank3]:{WATCHDOG}\n```\n").lines == (f"[rank3]:{WATCHDOG}",)


def test_leading_timestamps_of_every_common_shape_are_removed_and_kept() -> None:
    for stamp in ("2026-09-17 13:40:05 ", "[2024-05-01 10:00:00,123] ", "2024-05-01T10:00:00.123Z ",
                  "Nov 22 10:00:01 ", "I0501 10:00:00.123456 1234 ProcessGroupNCCL.cpp:616] "):
        line, kept = strip_decorations(stamp + f"[rank3]:{WATCHDOG}")
        assert line == f"[rank3]:{WATCHDOG}", stamp
        assert kept is not None


def test_ci_page_line_numbers_are_removed() -> None:
    assert strip_decorations(f"  12 | [rank3]:{WATCHDOG}")[0] == f"[rank3]:{WATCHDOG}"


def test_a_field_list_cut_by_a_terminal_is_joined_again() -> None:
    head, tail = WATCHDOG.split("OpType=")
    clean = clean_text(f"[rank3]:{head}OpType=\n{tail}\n[rank4]: next line\n")
    assert clean.lines[0] == f"[rank3]:{WATCHDOG}"
    assert clean.lines[1] == "[rank4]: next line" and clean.joined == 1


def test_lines_wrapped_at_a_fixed_width_are_joined() -> None:
    width = 80
    long = f"[rank3]:{WATCHDOG}"
    pieces = [long[i:i + width] for i in range(0, len(long), width)]
    text = "\n".join(pieces * 1) + "\n" + "\n".join(pieces) + "\n"
    assert clean_text(text).lines == (long, long)


def test_text_without_decorations_is_unchanged() -> None:
    text = "[rank0]: step 1\n[rank1]: step 1\n  File \"train.py\", line 3, in <module>\n"
    assert clean_text(text).lines == ("[rank0]: step 1", "[rank1]: step 1", '  File "train.py", line 3, in <module>')


def test_a_line_pasted_as_inline_code_loses_its_backticks() -> None:
    assert strip_decorations("`[rank3]:[E ProcessGroupNCCL.cpp:1316] x`")[0] == "[rank3]:[E ProcessGroupNCCL.cpp:1316] x"
    assert strip_decorations("`[2025-05-10 00:18:21] (W pid=1) [rank2]: y")[0] == "(W pid=1) [rank2]: y"
    assert strip_decorations("```python")[0] == "```python"


def test_lines_of_the_wrap_width_behind_a_kubectl_tag_are_not_joined() -> None:
    same = "[pod/w-1/c] [E ProcessGroupNCCL.cpp:467] [Rank {}] Watchdog caught collective operation timeout: x"
    clean = clean_text("\n".join(same.format(r) for r in (4, 5, 6, 7)))
    assert clean.joined == 0 and len(clean.lines) == 4


def test_a_json_log_record_stands_for_its_text() -> None:
    docker = '{"log":"[rank3]: RuntimeError: boom\\n","stream":"stderr","time":"2024-05-01T10:00:00.1Z"}'
    assert strip_decorations(docker) == ("[rank3]: RuntimeError: boom", "2024-05-01T10:00:00.1Z")
    logger = '{"level": "ERROR", "msg": "2026-09-17 13:40:05 [rank1]: x", "ts": 17}'
    assert strip_decorations(logger) == ("[rank1]: x", "2026-09-17 13:40:05")
    event = '{"name": "torchelastic.worker.status.FAILED", "source": "WORKER", "metadata": {}}'
    assert strip_decorations(event)[0] == event
    assert strip_decorations("{" * 100000 + "}" * 100000)[0].startswith("{")


def test_a_viewers_line_numbers_are_removed_but_srun_labels_are_not() -> None:
    numbered = "\n".join(f"[{120 + i}] [rank{i % 2}]: step {i}" for i in range(6))
    assert clean_text(numbered).lines[0] == "[rank0]: step 0"
    cat_n = "\n".join(f"{i + 1:>6}\tline {i}" for i in range(6))
    assert clean_text(cat_n).lines[5] == "line 5"
    srun = "\n".join(f"{r}: step {i}" for i, r in enumerate((0, 1, 0, 1, 0, 1)))
    assert clean_text(srun).lines[1] == "1: step 1"
    in_order = "\n".join(f"{r}: hello from rank {r}" for r in range(6))
    assert clean_text(in_order).lines[3] == "3: hello from rank 3"


def test_a_log_viewers_table_column_and_its_timestamp_go() -> None:
    # Lightning-AI/litData#340's class: a cloud log viewer's "  | <time> | " column before every line
    line = "  | 2025-02-11T08:15:03.004Z | [rank6]:[E ProcessGroupNCCL.cpp:563] [Rank 6] Watchdog caught x"
    assert strip_decorations(line) == ("[rank6]:[E ProcessGroupNCCL.cpp:563] [Rank 6] Watchdog caught x",
                                       "2025-02-11T08:15:03.004")
    assert strip_decorations("| NCCL INFO comm 0x1 rank 2 nranks 8")[0] == "NCCL INFO comm 0x1 rank 2 nranks 8"
    table = "|   1  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |"
    assert strip_decorations(table)[0] == table      # a table of numbers keeps its bars


def test_a_launcher_prefixed_line_glued_after_a_progress_bar_is_split_off() -> None:
    # huggingface/nanotron#204's class: a bar redrawn with "\r" has no line end, the next line sticks to it
    bar = "[default3]:Tokenizing train split:  41%|████      | 5210/12800 [00:12<00:18, 414.35 examples/s]"
    clean = clean_text(f"{bar}[default1]:[E ProcessGroupNCCL.cpp:616] {WATCHDOG}\n"
                       f"Map (num_proc=16):  97%|█████████▋| 970/1000 [00:04<00:00]  [rank5]:[W] x\n")
    assert clean.lines == (bar, f"[default1]:[E ProcessGroupNCCL.cpp:616] {WATCHDOG}",
                           "Map (num_proc=16):  97%|█████████▋| 970/1000 [00:04<00:00]  [rank5]:[W] x")
    assert clean.stamps == (None, None, None)


def test_prefix_chains_and_prefixes_inside_messages_are_not_split() -> None:
    for line in ("B-job/0 [default2]:[rank2]: torch.distributed.DistBackendError: x",
                 "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] x",
                 "job-7 [stderr] [rank14]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] x",
                 "[rank0]: see the log of rank 3 ([rank3]: above) for details"):
        assert clean_text(line).lines == (line,)


def test_quote_marker_behind_a_timestamp_is_removed() -> None:
    line, stamp = strip_decorations("2025-03-02 08:01:17 > node3:711:790 [2] NCCL INFO comm 0x1 rank 2 nranks 4")
    assert stamp is not None and line.startswith("node3:711:790 [2] NCCL INFO")


def test_a_rule_cut_with_the_line_it_ends_does_not_hide_the_wrap_width() -> None:
    # a progress bar that an MPI rule ends, cut at 100 columns: the rule's rest, then the launcher's line cut in a word
    bar = "Epoch 3/40 |" + "#" * 30 + "| " + "=" * 80
    note = "mpiexec noticed that process rank 5 with PID 4410 on node gpu-07 exited on signal 6 (Aborted)."
    width = 100
    text = "\n".join(piece for line in ("step 3", bar, note) for piece in (line[i:i + width]
                                                                          for i in range(0, len(line), width)))
    assert clean_text(text + "\n").lines == ("step 3", bar, note)


def test_a_rule_of_another_mark_after_a_line_at_a_terminal_width_is_no_cut() -> None:
    head = "loss 0.25 " + "-" * 70
    other = "x" * 78 + "--"
    clean = clean_text(f"{head}\n{'=' * 40}\n{other}\n{'=' * 40}\nend\n")
    assert clean.joined == 0 and clean.lines == (head, "=" * 40, other, "=" * 40, "end")
