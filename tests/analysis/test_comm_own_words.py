"""Communication libraries', accelerator runtimes' and frameworks' own failure lines, read from their sources (session
44), each tested on variants written here (other ranks, hosts, tags), with a negative beside each class."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report

_HVD_HEAD = ("One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
             "waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
             "trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause "
             "deadlock. ")


# (1) Horovod's stall inspector: "Missing ranks:" then one line per rank that has not submitted the tensor the others
# wait to reduce ("2: [grad_0, grad_1]", "2!: [...]" past the shutdown time): those ranks never reached it
@pytest.mark.parametrize(("lines", "ranks"), [
    (("[1,0]<stdout>:Epoch 1 step 100 loss 0.91", "[1,1]<stdout>:Epoch 1 step 100 loss 0.93",
      "[1,0]<stderr>:[2025-11-28 05:20:11.345678: W /tmp/pip-install-x/horovod/horovod/common/stall_inspector.cc:107] "
      + _HVD_HEAD, "[1,0]<stderr>:Missing ranks:", "[1,0]<stderr>:2: [DistributedAdam_Allreduce/HorovodAllreduce_g_0]",
      "[1,0]<stderr>:3: [DistributedAdam_Allreduce/HorovodAllreduce_g_0, DistributedAdam_Allreduce/HorovodAllreduce_g_1]"),
     (2, 3)),
    (("step 10 loss 2.2", "[2024-03-01 10:00:00.000001: E horovod/common/stall_inspector.cc:120] " + _HVD_HEAD,
      "Missing ranks:", "5!: [allreduce.noname.17]",
      'One or more rank (marked by "!") is stalled for longer than 120 seconds. Will shutdown.'), (5,)),
    (("[2021-02-02 21:19:07.345988: W horovod/common/stall_inspector.cc:105] " + _HVD_HEAD, "Missing ranks:",
      "0: [cond_1/DistributedSGD_Allreduce/HorovodAllreduce_grads_0]"), (0,)),
])
def test_horovods_stall_inspector_names_the_missing_ranks(lines: tuple[str, ...], ranks: tuple[int, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value == "missing_rank", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == ranks, result.verdict.summary
    assert "Horovod's stall inspector" in result.verdict.summary


@pytest.mark.parametrize("lines", [
    # the job went on after the report: a slow rank that caught up
    ("[1,0]<stderr>:[2025-11-28 05:20:11.345678: W horovod/common/stall_inspector.cc:107] " + _HVD_HEAD,
     "[1,0]<stderr>:Missing ranks:", "[1,0]<stderr>:1: [allreduce.grad_3]", "[1,0]<stdout>:Epoch 2 step 300 loss 0.41",
     "[1,1]<stdout>:Epoch 2 step 300 loss 0.42"),
    # the words quoted in prose, no list of ranks under them
    (("Horovod prints 'One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
      "and are waiting for remainder of ranks' when a rank is slow."), "[rank0]: step 10 loss 2.0",
     "[rank1]: step 10 loss 2.1", "[rank0]: Training finished."),
])
def test_horovods_stall_words_without_a_stall_name_no_missing_rank(lines: tuple[str, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value != "missing_rank", result.verdict.summary
    assert "Horovod" not in result.verdict.summary


_JAX_FATAL = ("F1128 05:14:22.873390  4101 client.cc:90] Terminating process because the JAX distributed service "
              "detected fatal errors. This most likely indicates that another task died; see the other task logs for "
              "more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. "
              "absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):")


# (2) the abort that ends a glog FATAL line's process (glog's "*** Check failure stack trace: ***", Python's "Fatal
# Python error: Aborted", the shell's "Aborted (core dumped)") is that line's end, not a failure whose message is not in
# the input: JAX's agent ending after the coordination service named the task that stopped sending heartbeats
@pytest.mark.parametrize(("task", "tail"), [
    (3, ("*** Check failure stack trace: ***", "    @     0x7f3a1c2b6e34  absl::log_internal::LogMessage::SendToLog()",
         "Fatal Python error: Aborted")),
    (1, (("Additional GRPC error information from remote target coordination_service while calling "
          "/tensorflow.CoordinationService/PollForError:"), "*** Check failure stack trace: ***",
         "Aborted (core dumped)")),
])
def test_the_abort_after_jaxs_fatal_line_leaves_the_task_that_died(task: int, tail: tuple[str, ...]) -> None:
    result = report("I1128 05:01:02.123456  4101 distributed.py:90] Connecting to JAX distributed service on "
                    "10.0.3.4:8476", "step 100 loss 2.31", _JAX_FATAL, f"/job:jax_worker/replica:0/task:{task}",
                    "The tasks have crashed. Check the task logs for an earlier error to debug further.", *tail)
    assert result.verdict.kind.value == "missing_rank", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (task,), result.verdict.summary


def test_a_failed_check_keeps_its_own_message_and_rank() -> None:
    result = report("[rank0]: step 1 loss 2.0", "[rank1]: step 1 loss 2.0",
                    "[rank1]: F1128 05:14:22.873390  4101 foo.cc:90] Check failed: x == y (3 vs. 4)",
                    "[rank1]: *** Check failure stack trace: ***", "[rank1]: Fatal Python error: Aborted")
    assert result.verdict.kind.value == "crash" and tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary
    assert "Check failed: x == y" in result.verdict.summary


# negatives: a trace with no FATAL line above it still says a CHECK failed; another rank's abort after one rank's
# FATAL line is that rank's own
def test_a_check_trace_without_its_fatal_line_is_still_a_crash() -> None:
    result = report("[rank0]: step 1 loss 2.0", "[rank1]: step 1 loss 2.0", "*** Check failure stack trace: ***",
                    "Aborted (core dumped)")
    assert result.verdict.kind.value == "crash", result.verdict.summary


def test_another_ranks_abort_after_a_fatal_line_is_its_own() -> None:
    result = report("[rank0]: step 1 loss 2.0", "[rank1]: step 1 loss 2.0",
                    "[rank1]: F1128 05:14:22.873390  4101 foo.cc:90] Check failed: x == y (3 vs. 4)",
                    "[rank0]: Fatal Python error: Aborted")
    assert {0, 1} <= {r for f in result.findings for r in f.ranks}, [f.detail for f in result.findings]


_WORK = ("[rank0]: step 40 loss 3.10", "[rank1]: step 40 loss 3.12", "[rank2]: step 40 loss 3.11",
         "[rank3]: step 40 loss 3.13")


# (3) ROCm's HSA runtime on a GPU page fault ("Memory access fault by GPU node-N (Agent handle: 0x...) on address
# 0x.... Reason: ..."), after which it aborts the process: that process's crash, a device fault
_FAULT_2 = ("[rank2]: Memory access fault by GPU node-6 (Agent handle: 0x5583e4b0c2a0) on address 0x7fe110a00000. "
            "Reason: Unknown.")
_AGENT_2 = ("E1128 05:22:02.000000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) "
            "local_rank: 2 (pid: 4403) of binary: /usr/bin/python")
_FAULT_1 = ("[rank1]:Memory access fault by GPU node-2 (Agent handle: 0x1f2e3d40) on address (nil). Reason: Page not "
            "present or supervisor privilege.")
_FAULT = ("Memory access fault by GPU node-4 (Agent handle: 0x55d0c1a3e0b0) on address 0x7f2a3c000000. Reason: Page "
          "not present or supervisor privilege.")


@pytest.mark.parametrize(("lines", "rank"), [
    ((_FAULT_2, _AGENT_2), 2),
    ((_FAULT_1, "[rank1]:Aborted (core dumped)"), 1),
    ((_FAULT, "Aborted (core dumped)"), None),
])
def test_rocms_memory_access_fault_is_the_processs_crash(lines: tuple[str, ...], rank: int | None) -> None:
    result = report(*_WORK, *lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "Memory access fault by GPU node-" in result.verdict.summary, result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (() if rank is None else (rank,)), result.verdict.summary


# ... and ROCm's HIP runtime's queue error before it aborts (rocclr's "Callback: Queue 0x... aborting with error :
# HSA_STATUS_ERROR_...", older "Device::callbackQueue aborting with error : ..."): was a false all-clear without the
# abort's line after it
@pytest.mark.parametrize(("line", "rank"), [
    ((":0:rocdevice.cpp            :2984: 6545699276902 us: [pid:196431 tid:0x7f2301dff640] Callback: Queue "
     "0x7f2301400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access "
     "memory beyond the largest legal address. code: 0x29"), None),
    (("[rank1]: :0:rocdevice.cpp            :3020: 7262982208 us:  Callback: Queue 0x77ec42100000 aborting with error : "
     "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016"), 1),
    (("[rank3]: :0:rocdevice.cpp :1903: 10 us: Device::callbackQueue aborting with error : HSA_STATUS_ERROR_EXCEPTION: "
     "An HSAIL operation resulted in a hardware exception. code: 0x1016"), 3),
])
def test_rocms_queue_error_is_the_processs_crash(line: str, rank: int | None) -> None:
    result = report(*_WORK, line)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "aborting with error : HSA_STATUS_ERROR_" in result.verdict.summary, result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (() if rank is None else (rank,)), result.verdict.summary


def test_an_hsa_status_named_in_a_sentence_is_no_crash() -> None:
    result = report(*_WORK, "[rank0]: note: HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on MI300 means a bad pointer",
                    "[rank0]: step 50 loss 3.01", "[rank0]: Training finished.")
    assert result.verdict.kind.value != "crash", result.verdict.summary


def test_a_memory_access_fault_named_in_a_sentence_is_no_crash() -> None:
    result = report(*_WORK, "[rank0]: note: a 'Memory access fault by GPU' on MI250 usually means HSA_XNACK is off",
                    "[rank0]: step 50 loss 3.01", "[rank0]: Training finished.")
    assert "Memory access fault" not in result.verdict.summary, result.verdict.summary


# (4) oneCCL's own error lines ("... |CCL_ERROR| worker.cpp:353 ccl_worker_func: worker 0 caught internal exception:
# ..."): a failure, whose "worker N" is oneCCL's progress thread, never rank N; the launcher's prefix names the rank
_CCL = ("2025:11:28-05:55:00:(12345) |CCL_ERROR| worker.cpp:353 ccl_worker_func: worker 0 caught internal exception: "
        "oneCCL: ze_call.cpp:43 do_call: EXCEPTION: ze error at zeCommandQueueExecuteCommandLists, code: "
        "ZE_RESULT_ERROR_DEVICE_LOST")


def test_oneccls_error_is_a_failure_of_no_rank_its_worker_names() -> None:
    result = report(*_WORK, _CCL)
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary
    assert "ZE_RESULT_ERROR_DEVICE_LOST" in result.verdict.summary, result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (), result.verdict.summary


def test_oneccls_error_under_a_rank_prefix_is_that_ranks() -> None:
    result = report(*_WORK, "[rank3]: " + _CCL.replace("worker 0", "worker 1"))
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary


def test_oneccls_warning_is_no_failure() -> None:
    result = report(*_WORK, "2025:11:28-05:55:00:(12345) |CCL_WARN| worker 2 did not get affinity, using default",
                    "[rank0]: step 50 loss 3.01", "[rank0]: Training finished.")
    assert 2 not in result.verdict.culprit_ranks and "CCL_WARN" not in result.verdict.summary, result.verdict.summary


# (5) Ascend HCCL's link set-up that timed out (EI0006 "Getting socket times out. Reason: ...", the CANN log's "wait
# socket establish timeout"): a network failure the reporting rank saw (its peer never answered), not a Python error
_HCCL_1 = (("[rank1]: RuntimeError: HCCL function error: HcclAllReduce(inputDataPtr, outputDataPtr, numel, hcclType, "
            "hcclReduceOp, comm, stream.stream(false)), error code is 7"),
           "[rank1]: [ERROR] 2025-11-28-05:30:01 (PID:5512, Device:1, RankID:1) ERR02200 DIST call hccl api failed.",
           ("[rank1]: EI0006: 2025-11-28-05:30:01.110.201 Getting socket times out. Reason: 1. The remote does not "
            "initiate a connect request. some NPUs in the cluster are abnormal."))
_HCCL_0 = ("[rank0]: RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64.",
           ("[rank0]: EI0006: [PID: 11234] 2025-11-28-06:00:00.000.000 Getting socket times out. Reason: 2. The remote "
            "does not initiate a connect request because the collective communication operator is started too late."))
_HCCL_2 = (("[rank2]: [ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] "
            "[18744][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[2] timeout[120 s]"),)


@pytest.mark.parametrize(("lines", "rank"), [(_HCCL_1, 1), (_HCCL_0, 0), (_HCCL_2, 2)])
def test_hccls_link_setup_timeout_is_a_network_error(lines: tuple[str, ...], rank: int) -> None:
    result = report(*_WORK, *lines)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert rank in result.verdict.culprit_ranks or f"reported by rank {rank}" in result.verdict.summary, \
        result.verdict.summary


def test_hccls_timeout_advice_is_no_network_error() -> None:
    result = report(*_WORK, "[rank0]: export HCCL_CONNECT_TIMEOUT=7200  # against EI0006 (Getting socket times out)",
                    "[rank0]: step 50 loss 3.01", "[rank0]: Training finished.")
    assert result.verdict.kind.value != "network_error", result.verdict.summary


# (6) gRPC's own words for a peer it cannot reach, under TensorFlow's and JAX's errors ("UNAVAILABLE: failed to connect
# to all addresses", "UNAVAILABLE: Socket closed"): a network failure, whose settling is the unreachable task's log (no
# c10d store is involved)
@pytest.mark.parametrize("line", [
    ("tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: failed to connect to all "
     "addresses"),
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:10.0.7.3:8476: Failed to connect to remote host: Connection refused"),
    "tensorflow.python.framework.errors_impl.UnavailableError: UNAVAILABLE: Socket closed",
])
def test_grpcs_unreachable_peer_is_a_network_error(line: str) -> None:
    result = report("Epoch 1/10", "120/500 [======>.......] - loss: 0.52", line)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "gRPC call could not reach" in result.verdict.summary and "MASTER_ADDR" not in result.verdict.summary, \
        result.verdict.summary


def test_grpcs_warning_the_job_went_on_after_is_no_network_error() -> None:
    result = report(*_WORK, "W1128 06:00:00.000000 41 grpc_util.cc:88] failed to connect to all addresses; will retry",
                    "[rank0]: step 50 loss 3.01", "[rank1]: step 50 loss 3.02", "[rank0]: Training finished.")
    assert result.verdict.kind.value != "network_error", result.verdict.summary


def test_a_ranks_abort_after_a_fatal_line_of_no_rank_is_its_own() -> None:
    result = report("[rank0]: step 1 loss 2.0", "[rank1]: step 1 loss 2.0",
                    "F1128 05:14:22.873390  4101 foo.cc:90] Check failed: x == y (3 vs. 4)",
                    "[rank1]: Fatal Python error: Aborted")
    assert 1 in {r for f in result.findings for r in f.ranks}, [f.detail for f in result.findings]
