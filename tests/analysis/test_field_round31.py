"""Classes of real pasted logs found by round 31 of the real-world corpus, each tested on a variant written
here (other programs, signals, devices, hosts, languages and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.node_ranks import node_ranks, prose_nodes


# A PSM-style fabric library's signal handler (libfabric's providers, Intel's PSM2) reports the process's death
# in its own words: "python:699378 terminated with signal 6 at PC=... SP=...  Backtrace:". It was refused
# (openai/improved-diffusion#118's shape: after the EFA provider's fork() notice; another program and signal here)
def test_a_fabric_handlers_terminated_with_signal_line_is_a_crash_by_that_signal() -> None:
    for line, signal in (("train_gpt:41277 terminated with signal 11 at PC=55d0c2a1b3f4 SP=7ffd1c2e9a80.  Backtrace:",
                          "SIGSEGV"),
                         ("python3.10:812 terminated with signal 7 at PC=7f1e00a3b2c1 SP=7ffc55aa0010.  Backtrace:",
                          "SIGBUS")):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.FATAL_SIGNAL, line
        assert parsed.signal == signal, line


def test_a_job_whose_one_process_a_fabric_handler_reports_dead_is_a_crash() -> None:
    result = report("Logging to /tmp/openai-2024-03-02-11-20-15-421337",
                    "creating model and diffusion...",
                    "training...",
                    "mpi_train:55120 terminated with signal 11 at PC=7f00aa31c2d0 SP=7ffe0c1d2e30.  Backtrace:",
                    "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f00aa242520]")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "terminated with signal 11" in result.verdict.summary


def test_terminated_with_signal_in_other_words_is_not_this_record() -> None:
    # a sentence about it, or a process name with no pid, is not the handler's record
    assert parse_crash_line("the run terminated with signal 6 at PC= something, see above") is None
    line = parse_crash_line("python terminated with signal 6 at PC=7f8740a96a7c")
    assert line is None or line.signal != "SIGABRT" or line.kind is not CrashLineKind.FATAL_SIGNAL


# UCX's log of an InfiniBand/RoCE completion the transport gave up on ("ib_mlx5_log.c:177  Transport retry count
# exceeded on mlx5_0:1/IB (synd 0x15 ...)"), which UCX then makes fatal, was refused (openucx/ucx#9590's shape;
# another host, device, port and RoCE here)
def test_ucx_transport_retry_exceeded_is_a_network_error() -> None:
    result = report(
        "[gpu-a17:88211:0:88211] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_2:1/RoCE "
        "(synd 0x15 vend 0x81 hw_synd 0/0)",
        "[gpu-a17:88211:0:88211] ib_mlx5_log.c:143  DCI QP 0x1c2 wqe[12]: SEND s-e [rqpn 0x2248a] [inl len 18]",
        "==== backtrace (tid:  88211) ====",
        " 0  /opt/ucx/lib/libucs.so.0(ucs_handle_error+0x2e4) [0x7f0c1d2e34a4]",
        " 1  /opt/ucx/lib/ucx/libuct_ib.so.0(uct_ib_mlx5_completion_with_err+0x1f0) [0x7f0c0a1b2c3d]")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "retry count exceeded" in result.verdict.summary


def test_verbs_retry_errors_are_network_failures() -> None:
    for line in ("[node3:4412:0:4412] ib_mlx5_log.c:177  RNR retry count exceeded on mlx5_1:1/IB (synd 0x16)",
                 "Check failed: wc->status == IBV_WC_SUCCESS: IBV_WC_RETRY_EXC_ERR on mlx5_0"):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.NETWORK, line


def test_retry_words_without_a_fabric_are_not_a_network_failure() -> None:
    # an HTTP client's retries, a test's own counter: no InfiniBand device, no UCX frame
    line = parse_crash_line("WARNING: download retry count exceeded for https://example.org/model.bin, using cache")
    assert line is None or line.kind is not CrashLineKind.NETWORK


# torchrun's "failed (exitcode: -9) local_rank: 7" was named rank 7 where the reporter's own words (in Chinese,
# "节点总数：4") say the job ran on four nodes, so the local rank names no global rank (QwenLM/Qwen3#386's shape;
# English and other Chinese phrasings, another local rank and signal here)
def test_the_reporters_node_count_keeps_a_local_rank_from_naming_a_global_rank() -> None:
    for words in ("We launch it with the same script on 2 nodes (8 x H100 each).",
                  "多机训练，3台机器，每台8卡。",
                  "2机16卡微调时报错："):
        result = report(words,
                        "E0912 03:11:07.310000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed "
                        "(exitcode: -7) local_rank: 5 (pid: 912) of binary: /usr/bin/python3")
        assert result.verdict.kind.value == "crash", (words, result.verdict.summary)
        assert result.verdict.culprit_ranks == (), (words, result.verdict.summary)


def test_a_single_node_job_still_names_the_local_rank_as_its_rank() -> None:
    result = report("python -m torch.distributed.run --nproc_per_node 4 train.py",
                    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 2 "
                    "(pid: 3321) of binary: /usr/bin/python")
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary


def test_prose_node_counts() -> None:
    assert prose_nodes("节点总数：4，型号：A800") == 4
    assert prose_nodes("we train across two machines") == 2
    assert prose_nodes("双机训练时保存模型会超时") == 2
    assert prose_nodes("4个节点") == 4
    # torch's store-based barrier counts its workers as "nodes"; no phrase, or two that disagree, give none
    assert prose_nodes("Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.") is None
    assert prose_nodes("a single node with 8 GPUs") is None
    assert prose_nodes("on 2 nodes ... later on 4 nodes") is None
    # a count the launcher states still comes first
    assert node_ranks("torchrun --nnodes=1 --nproc_per_node=8 train.py # tried on 2 nodes before").nodes == 1
