"""Products' own words (session 46), read from their sources (Horovod's stall inspector under horovodrun's own tags,
libfabric's log lines, TensorFlow's gRPC detail line, oneCCL's and Level Zero's device errors), each tested on variants
written here (numbers, hosts, prefixes) with a negative beside each class."""

from __future__ import annotations

import pytest

from tests.analysis.test_comm_own_words import _HVD_HEAD
from tests.helpers.report import report_lines as report
from triage.analysis.advice import excerpt_steps
from triage.parsing.crashlog import parse_crash_line


# (1) horovodrun's own launcher (gloo) tags each line "[N]<stderr>:" (mpirun's "[1,N]<stderr>:"): the stall
# inspector's "Missing ranks:" list under it names the ranks that never submitted (was a false all-clear)
@pytest.mark.parametrize(("tag", "listed", "ranks"), [
    ("[0]<stderr>:", ("2: [grad_0, grad_1]", "3: [grad_0]"), (2, 3)),
    ("[12]<stderr>:", ("7!: [DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0]",), (7,)),
])
def test_stall_inspector_under_horovodruns_tags(tag: str, listed: tuple[str, ...], ranks: tuple[int, ...]) -> None:
    steps = [f"[{r}]<stdout>:step {n} loss 2.31" for n in (100, 200) for r in range(4)]
    result = report(*steps, f"{tag}[2024-05-01 10:00:00.123456: W /tmp/pip/horovod/common/stall_inspector.cc:107] "
                    + _HVD_HEAD, f"{tag}Missing ranks:", *(tag + line for line in listed))
    assert result.verdict.kind.value == "missing_rank", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == ranks


def test_stall_inspector_under_horovodruns_tags_then_the_job_went_on() -> None:
    result = report("[0]<stderr>:[2024-05-01 10:00:00.123456: W horovod/common/stall_inspector.cc:107] " + _HVD_HEAD,
                    "[0]<stderr>:Missing ranks:", "[0]<stderr>:1: [grad_0]",
                    *(f"[{r}]<stdout>:epoch 2 step 300 loss 0.41" for r in range(2)))
    assert result.verdict.kind.value != "missing_rank", result.verdict.summary


_STEPS = tuple(f"{r}: step {n} loss 2.31" for n in (100, 200) for r in range(4))


# (2) libfabric's own log line ("libfabric:PID:TIME:PREFIX:PROVIDER:SUBSYS:FUNC():LINE<warn> message"; warn is its
# highest level) where a provider lost a peer or gave up on a transfer: a network failure of the process that printed
# it, settled by libfabric's own log (FI_LOG_LEVEL), not NCCL's (was a false all-clear)
@pytest.mark.parametrize(("line", "rank"), [
    (("libfabric:48213:1718000124::efa:cq:efa_rdm_txe_handle_error():1084<warn> EFA provider internal txe failure "
     "err: 113, message: Unreachable remote - never received a response (15)"), None),
    (("2: libfabric:771:1731000007::efa:cq:efa_rdm_rxe_handle_error():675<warn> EFA provider internal rxe failure "
     "err: 4124, message: Unresponsive receiver (connection previously established) (4124)"), 2),
    (("3: libfabric:90210:1731000007:job7:efa:cq:efa_rdm_cq_poll_ibv_cq():633<warn> The peer of address "
     "fe80::4f1:a2ff:fe3b:9c01 becomes unresponsive"), 3),
    # before libfabric 1.14 no time, before its log prefix no prefix field
    ("libfabric:5512:verbs;ofi_rxm:ep_ctrl:rxm_conn_handle_event():844<warn> Connection reset by remote peer", None),
    (("libfabric:5512:1650000000:verbs;ofi_rxm:ep_ctrl:rxm_conn_handle_event():844<warn> Connection reset by remote "
     "peer"), None),
])
def test_libfabric_lost_peer_is_a_network_failure(line: str, rank: int | None) -> None:
    result = report(*_STEPS, line)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    # (a network failure's reporter is no culprit: the peer it lost may have died first)
    assert ("reported by rank" in result.verdict.summary) == (rank is not None)
    assert rank is None or f"reported by rank {rank}" in result.verdict.summary
    assert "FI_LOG_LEVEL" in result.verdict.summary and "NCCL_DEBUG" not in result.verdict.summary
    assert any("FI_LOG_LEVEL" in step for step in excerpt_steps(result.verdict))


def test_verbs_status_string_for_retries_is_a_network_failure() -> None:
    # ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR) as an MPI or a provider prints it: "transport retry counter exceeded"
    result = report(*_STEPS, "1: msg cq error info: transport retry counter exceeded")
    assert result.verdict.kind.value == "network_error", result.verdict.summary


@pytest.mark.parametrize("lines", [
    # the run went on past a lost peer (a provider that recovered) and ended well
    (("libfabric:48213:1718000124::efa:cq:efa_rdm_cq_poll_ibv_cq():633<warn> The peer of address fe80::1 becomes "
     "unresponsive"), *(f"{r}: step {n} loss 2.1" for n in (300, 400, 500) for r in range(4)), "0: Training finished."),
    # libfabric's other warnings at start-up, then training
    ("libfabric:48213:1718000100::efa:core:efa_device_list_initialize():214<warn> Failed to open shm provider",
     ("libfabric:48213:1718000100::core:core:ofi_hmem_init():418<warn> Failed to initialize hmem iface FI_HMEM_ZE: No "
     "data available"), *(f"{r}: step {n} loss 2.1" for n in (300, 400) for r in range(4)), "0: Training finished."),
    # the words without libfabric's head, in a sentence
    ("0: note: EFA says 'The peer of address X becomes unresponsive' when a node reboots", "0: Training finished."),
])
def test_libfabric_words_that_ended_nothing(lines: tuple[str, ...]) -> None:
    result = report(*_STEPS, *lines)
    assert result.verdict.kind.value not in ("network_error", "crash", "exception"), result.verdict.summary


# (3) Level Zero's own codes (Intel GPUs; oneCCL, SYCL's Unified Runtime and PyTorch's XPU backend print them):
# DEVICE_LOST is a device fault of the process that printed it (the driver reset a device that hung or faulted; was
# refused or a crash "the input does not say how it died"), OUT_OF_DEVICE_MEMORY its device's memory
@pytest.mark.parametrize(("lines", "rank"), [
    ((("2024:05:06-10:12:33:(48211) |CCL_ERROR| ze_call.cpp:43 do_call: EXCEPTION: ze error at "
      "zeCommandQueueSynchronize, code: ZE_RESULT_ERROR_DEVICE_LOST"),
      "terminate called after throwing an instance of 'ccl::v1::exception'",
      ("  what():  oneCCL: ze_call.cpp:43 do_call: EXCEPTION: ze error at zeCommandQueueSynchronize, code: "
      "ZE_RESULT_ERROR_DEVICE_LOST")), None),
    # oneCCL's progress thread ("worker 0") is no rank; the rank is the prefix's
    ((("1: 2025:11:28-05:55:00:(7781) |CCL_ERROR| worker.cpp:353 ccl_worker_func: worker 0 caught internal exception: "
      "oneCCL: ze_call.cpp:43 do_call: EXCEPTION: ze error at zeEventHostSynchronize, code: "
      "ZE_RESULT_ERROR_DEVICE_LOST"),), 1),
    (("[rank3]: Traceback (most recent call last):", '[rank3]:   File "train.py", line 9, in <module>',
      "[rank3]: RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)"), 3),
])
def test_level_zero_device_lost_is_a_device_fault(lines: tuple[str, ...], rank: int | None) -> None:
    result = report(*_STEPS, *lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (() if rank is None else (rank,)), result.verdict.summary
    assert "DEVICE_LOST" in result.verdict.summary
    assert any("xpu-smi" in step for step in excerpt_steps(result.verdict))


@pytest.mark.parametrize("message", [
    "RuntimeError: level_zero backend failed with error: 40 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
    "RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
])
def test_level_zero_out_of_device_memory_is_an_oom(message: str) -> None:
    result = report(*_STEPS, "[rank2]: Traceback (most recent call last):",
                    '[rank2]:   File "train.py", line 88, in <module>', f"[rank2]: {message}")
    assert result.verdict.culprit_ranks == (2,) and result.verdict.subkind is not None
    assert result.verdict.subkind.value == "oom", result.verdict.summary
    assert any("batch size" in step for step in excerpt_steps(result.verdict))


def test_level_zero_words_the_run_went_on_past() -> None:
    result = report(*_STEPS, "0: note: a driver older than 1.3 may return ZE_RESULT_ERROR_DEVICE_LOST on reset",
                    *(f"{r}: step {n} loss 2.1" for n in (300, 400) for r in range(4)), "0: Training finished.")
    assert result.verdict.kind.value not in ("crash", "exception"), result.verdict.summary


def test_a_ranks_only_failure_line_quoted_then_the_run_went_on() -> None:
    # a runtime's words quoted in a rank's own prefixed line, the run going on after: that rank has no failure left
    # (was an internal error: an empty list of failures for the rank)
    result = report(*_STEPS, '0: note: you may see "CUDA error: an illegal memory access was encountered" here',
                    *(f"{r}: step {n} loss 2.1" for n in (300, 400) for r in range(4)), "0: Training finished.")
    assert result.verdict.kind.value not in ("crash", "exception"), result.verdict.summary


_TF_ERR = "tensorflow.python.framework.errors_impl.UnavailableError: "


# (4) gRPC's detail line under TensorFlow's error names the task at the call's other end ("Additional GRPC error
# information from remote target /job:worker/replica:0/task:N:", "... task:N while calling ..."): the peer of that
# network failure, whose log settles it; TensorFlow's UnavailableError of gRPC's own words ("Socket closed") is a
# network failure (was an exception of words unread, the task not named)
@pytest.mark.parametrize(("prefix", "message", "detail", "task"), [
    ("", "Collective ops is aborted by: Socket closed",
     "Additional GRPC error information from remote target /job:worker/replica:0/task:2:", 2),
    ("1: ", "{{function_node __inference_train_function_1234}} Connection reset by peer",
     ("Additional GRPC error information from remote target /job:worker/replica:0/task:3 while calling "
     "/tensorflow.WorkerService/RecvBuf:"), 3),
    ("", "Stream removed", "Additional GRPC error information from remote target /job:ps/replica:0/task:11:", 11),
])
def test_grpc_remote_target_names_the_peer_task(prefix: str, message: str, detail: str, task: int) -> None:
    result = report(*_STEPS, f"{prefix}Traceback (most recent call last):",
                    f'{prefix}  File "train.py", line 140, in <module>', f"{prefix}{_TF_ERR}{message}",
                    prefix + detail, prefix + ':{"created":"@1710148442.118","description":"Error received from '
                    'peer ipv4:10.0.3.12:2222","grpc_message":"Socket closed","grpc_status":14}')
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert f"task:{task})" in result.verdict.summary and f"the log of task {task} (" in result.verdict.summary
    assert any("remote target" in step for step in excerpt_steps(result.verdict))


def test_unavailable_socket_closed_alone_is_a_network_failure() -> None:
    result = report(*_STEPS, f"{_TF_ERR}Collective ops is aborted by: Socket closed")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "remote target" not in result.verdict.summary


@pytest.mark.parametrize("lines", [
    # the detail words with no failure above them (a note, a config dump): no failure of their own
    ("0: see the worker named in 'Additional GRPC error information from remote target /job:worker/replica:0/task:1'",
     "0: Training finished."),
    # a failure of another kind above: it keeps its words, no task is pinned on it
    ("0: ValueError: bad shape (4, 3)",
     "0: Additional GRPC error information from remote target /job:worker/replica:0/task:1:"),
])
def test_grpc_remote_target_alone_or_under_another_failure(lines: tuple[str, ...]) -> None:
    result = report(*_STEPS, *lines)
    assert "gRPC's remote target" not in result.verdict.summary, result.verdict.summary
    assert result.verdict.kind.value != "network_error"


# (5) MindSpore's device allocator ("Device(id:N) memory isn't enough and alloc failed, kernel name: ..., alloc size:
# NB.", "Device memory isn't enough and alloc failed, actor name: ...") under its log head: an out-of-memory of that
# process's device (was words unread)
@pytest.mark.parametrize("line", [
    ("[CRITICAL] DEVICE(91002,ffff8a3b1120,python):2024-05-06-10:20:01.000.123 [mindspore/ccsrc/plugin/device/ascend/"
     "hal/hardware/ge_device_res_manager.cc:88] AllocateMemory] Device(id:2) memory isn't enough and alloc failed, "
     "kernel name: Default/network/Conv2D-op12, alloc size: 1073741824B."),
    ("3: [ERROR] RUNTIME_FRAMEWORK(7001,ffff0cffa120,python):2025-01-02-03:04:05.006.007 [mindspore/ccsrc/runtime/"
     "graph_scheduler/actor/memory_manager_actor.cc:230] SetOpContextMemoryAllocFail] Device memory isn't enough and "
     "alloc failed, actor name: Default/MatMul-op3, alloc size: 536870912"),
    ("RuntimeError: #umsg#Memory not enough:#umsg#Device(id:0) memory isn't enough and alloc failed, kernel name: "
     "Split tuple outputs, alloc size: 2048B."),
])
def test_mindspore_device_memory_is_an_oom(line: str) -> None:
    result = report(*_STEPS, line)
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "oom", result.verdict.summary
    assert result.verdict.culprit_ranks == ((3,) if line.startswith("3: ") else ())


def test_mindspore_host_memory_words_are_no_device_oom() -> None:
    # its CPU device's message: host memory, no "Device": not read as a device's out-of-memory
    crash = parse_crash_line("Memory isn't enough and alloc failed, kernel name: Default/Add-op1, alloc size: 64B.")
    assert crash is None or crash.kind.value != "cuda_oom"


_RAY_TABLE = ("(TorchTrainer pid=1138, ip=10.244.4.193) Started distributed worker processes:",
              ("(TorchTrainer pid=1138, ip=10.244.4.193) - (node_id=3ea81f12c0f7, ip=10.244.4.193, pid=1193) world_rank=0, "
              "local_rank=0, node_rank=0"),
              ("(TorchTrainer pid=1138, ip=10.244.4.193) - (node_id=2b00ea2b369c, ip=10.244.1.42, pid=1341) world_rank=1, "
              "local_rank=0, node_rank=1"))
_SEGV = ("*** SIGSEGV received at time=1717243200 on cpu 12 ***", "Fatal Python error: Segmentation fault")


# (6) Ray Train's table of its workers ("- (node_id=N, ip=A, pid=P) world_rank=R, local_rank=L, node_rank=K", older
# without node_id) ties each worker's pid to its rank: a "(RayTrainWorker pid=P, ip=A)" worker's failure, and the
# driver's ActorDiedError of that pid and ip, are rank R's (were a crash of unknown rank on that host)
@pytest.mark.parametrize("tagged", [True, False])
def test_ray_train_table_ties_a_worker_to_its_rank(tagged: bool) -> None:
    table = _RAY_TABLE if tagged else tuple(
        line.replace(", ip=10.244.4.193)", ")").replace("node_id=3ea81f12c0f7, ", "").replace("node_id=2b00ea2b369c, ",
                                                                                               "") for line in _RAY_TABLE)
    tag = "(RayTrainWorker pid=1341, ip=10.244.1.42) " if tagged else "(RayTrainWorker pid=1341) "
    result = report(*table, "(RayTrainWorker pid=1193, ip=10.244.4.193) epoch 0 step 10 loss 2.3",
                    *(tag + line for line in _SEGV))
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == (1,), result.verdict.summary


def test_ray_train_table_ties_the_drivers_actor_died_record_to_its_rank() -> None:
    result = report(*_RAY_TABLE, "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
                    "\tclass_name: RayTrainWorker", "\tactor_id: 5d8a0c3e1f6b2a7e9d4c1b0a01000000", "\tpid: 1341",
                    "\tnamespace: 2b6f1e0c", "\tip: 10.244.1.42",
                    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker "
                    "exit detail: Worker unexpectedly exits with a connection error code 2. End of file.")
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary


def test_ray_train_table_a_pid_on_another_node_is_not_that_rank() -> None:
    # the same pid on a node the table does not name for it: another process, no rank
    result = report(*_RAY_TABLE, "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
                    "\tclass_name: RayTrainWorker", "\tactor_id: 5d8a0c3e1f6b2a7e9d4c1b0a01000000", "\tpid: 1341",
                    "\tnamespace: 2b6f1e0c", "\tip: 10.244.9.9",
                    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker "
                    "exit detail: Worker unexpectedly exits with a connection error code 2. End of file.")
    assert result.verdict.culprit_ranks == (), result.verdict.summary


_AIC = ("EZ9999: [PID: 48211] 2024-05-06-10:12:33.117.100 The error from device(chipId:1, dieId:0), serial number is "
        "5, there is an {what}, core id is 12, error code = 0x800000, dump info: pc start: 0x1240c46650b8 "
        "[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_proc.cc][LINE:1100]")


# (7) Ascend CANN's AI Core error (its EZ9999 block: "The error from device(chipId:N, dieId:M), serial number is S,
# there is an aivec error exception", "... an exception of aicore error", the runtime's "Aicore kernel execute failed,
# device_id=N, ...") is a device fault of the process that printed it, with CANN's own tools as the next step (was the
# exception above it, "ACL stream synchronize failed", or a crash "the input does not say how it died")
@pytest.mark.parametrize(("prefix", "lines"), [
    ("[rank1]: ", ("RuntimeError: ACL stream synchronize failed, error code:507015", "EZ9999: Inner Error!",
                   _AIC.format(what="aivec error exception"))),
    ("", ("RuntimeError: Call rt api rtStreamSynchronize failed, ret: 507011", "EZ9999: Inner Error!",
          _AIC.format(what="exception of aicore error").replace("chipId", "chipid"))),
    ("3: ", (("        Aicore kernel execute failed, device_id=1, stream_id=450, report_stream_id=2, task_id=442, "
             "flip_num=0, fault kernel_name=Default/MatMul.op12/program id=20, hash=1629.[FUNC:GetError]"
             "[FILE:stream.cc][LINE:1467]"),)),
])
def test_cann_aicore_error_is_a_device_fault(prefix: str, lines: tuple[str, ...]) -> None:
    result = report(*_STEPS, *(prefix + line for line in lines))
    assert result.verdict.kind.value == "crash", result.verdict.summary
    rank = {"[rank1]: ": (1,), "3: ": (3,)}.get(prefix, ())
    assert result.verdict.culprit_ranks == rank, result.verdict.summary
    assert any("aicore_error" in step for step in excerpt_steps(result.verdict))


def test_cann_aicore_words_in_a_sentence_are_no_device_fault() -> None:
    result = report(*_STEPS, "0: tip: when the log says 'there is an aivec error exception', run msaicerr",
                    "0: Training finished.")
    assert result.verdict.kind.value != "crash", result.verdict.summary


# (8) PyTorch on ROCm's "HIP error: X" (its CUDA checks hipified) is what "CUDA error: X" is: a device error of the rank
# that raised it (was an exception where the same words under CUDA were a crash); its out-of-memory stays an OOM
@pytest.mark.parametrize("message", [
    "RuntimeError: HIP error: invalid device function",
    "RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    "torch.AcceleratorError: HIP error: an illegal memory access was encountered",
])
def test_hip_error_is_what_a_cuda_error_is(message: str) -> None:
    lines = ("[rank1]: Traceback (most recent call last):", '[rank1]:   File "train.py", line 9, in <module>',
             f"[rank1]: {message}", ("[rank1]: HIP kernel errors might be asynchronously reported at some other API "
             "call, so the stacktrace below might be incorrect."))
    result = report(*_STEPS, *lines)
    cuda = report(*_STEPS, *(line.replace("HIP error", "CUDA error") for line in lines))
    assert result.verdict.kind == cuda.verdict.kind and result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (1,)


def test_hip_out_of_memory_stays_an_oom_and_hip_words_in_prose_end_nothing() -> None:
    oom = report(*_STEPS, "[rank1]: RuntimeError: HIP error: out of memory")
    assert oom.verdict.subkind is not None and oom.verdict.subkind.value == "oom", oom.verdict.summary
    prose = report(*_STEPS, "0: on MI250 you may see HIP error: invalid device function if the arch is wrong",
                   *(f"{r}: step {n} loss 2.1" for n in (300, 400) for r in range(4)), "0: Training finished.")
    assert prose.verdict.kind.value not in ("crash", "exception"), prose.verdict.summary
