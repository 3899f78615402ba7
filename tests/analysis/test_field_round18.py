"""Classes of real pasted logs found by round 18 of the real-world corpus (an exception line pasted inside
quotes; NCCL's InfiniBand verbs failing at connection set-up), each tested on a variant written here (other
hosts, pids, verbs calls and exception types than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


def test_an_exception_line_pasted_in_quotes_is_that_exception() -> None:
    for line in ('"ValueError: shard 9 of 8 requested by the sampler"',
                 "\u201ctorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970\u201d",
                 "'KeyError: missing key in state_dict'"):
        crash = parse_crash_line(line)
        assert crash is not None and crash.exc_type is not None, line
        assert not crash.text.startswith(("\"", "\u201c", "'")) and not crash.text.endswith(("\"", "\u201d", "'"))
    result = report('"ValueError: shard 9 of 8 requested by the sampler"')
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == ()


def test_a_quote_before_words_that_are_no_exception_changes_nothing() -> None:
    assert parse_crash_line('"loss went up at step 9"') is None


_IB_SETUP = (
    "node-c12:7731:7804 [2] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB ; OOB ib0:10.8.0.12<0>",
    "",
    "node-c12:7731:7804 [2] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory",
    "node-c12:7731:7804 [2] NCCL INFO transport/net_ib.cc:372 -> 2",
    "node-c13:8810:8861 [2] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory",
    "node-c13:8810:8861 [2] NCCL INFO transport/net_ib.cc:372 -> 2",
    "node-c13:8810:8861 [2] NCCL INFO init.cc:679 -> 2")


def test_an_infiniband_verbs_call_that_fails_is_a_network_failure() -> None:
    crash = parse_crash_line("Call to ibv_modify_qp failed with error Connection timed out")
    assert crash is not None and crash.kind is CrashLineKind.NETWORK
    crash = parse_crash_line("Call to ibv_reg_mr failed with error Bad address")
    assert crash is not None and crash.kind is CrashLineKind.NETWORK


def test_nccls_ib_set_up_failing_on_two_hosts_is_a_network_error_of_no_known_rank() -> None:
    result = report(*_IB_SETUP)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert "ibv_create_qp" in result.verdict.summary and "node-c12" in result.verdict.summary
