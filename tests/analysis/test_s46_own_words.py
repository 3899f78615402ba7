"""Products' own words (session 46), read from their sources (Horovod's stall inspector under horovodrun's own tags,
libfabric's log lines, TensorFlow's gRPC detail line, oneCCL's and Level Zero's device errors), each tested on variants
written here (numbers, hosts, prefixes) with a negative beside each class."""

from __future__ import annotations

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


_HVD_HEAD = ("One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
             "waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
             "trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause "
             "deadlock. ")


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
