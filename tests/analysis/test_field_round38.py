"""Classes of real pasted logs found by round 38 of the real-world corpus, each tested on a variant written here
(other barriers, jobs, hosts, files, messages, limits and programs than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


# JAX's coordination service timing out a barrier of start-up (jax.distributed.initialize's connect, the registration
# of every task) was named ranks missing after the start: the job never finished initialising (ayaka14732/llama-2-jax#20,
# AI-Hypercomputer/gpu-recipes#2; other tasks, ids and wording here)
def test_coordination_connect_barrier_is_an_init_hang() -> None:
    result = report("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
                    "PjRT_Client_Connect. Timed out task names:",
                    "/job:jax_worker/replica:0/task:2",
                    "/job:jax_worker/replica:0/task:5")
    assert result.verdict.kind.value == "init_hang", result.verdict.summary
    assert result.verdict.culprit_ranks == (2, 5), result.verdict


def test_coordination_registration_timeout_names_no_process() -> None:
    result = report("E0101 00:10:00.000 coordination_service.cc:123] Stopping coordination service as cluster "
                    "registration failed. This may be due to 1) some tasks crashed earlier before connecting.",
                    "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0.")
    assert result.verdict.kind.value == "init_hang", result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_a_barrier_after_the_start_still_names_missing_ranks() -> None:
    result = report("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
                    "checkpoint_sync7. Timed out task names:",
                    "/job:jax_worker/replica:0/task:1")
    assert result.verdict.kind.value == "missing_rank", result.verdict.summary
    assert result.verdict.culprit_ranks == (1,)


# dmlc-core's fatal "Check failed:" (ps-lite, MXNet, XGBoost) and a native library's own "ASSERT '...' FAILED" were read
# as failures of unknown kind: each ends its process (bytedance/byteps#357, intel/caffe#56; other files and checks here)
def test_dmlc_check_failed_is_a_crash() -> None:
    result = report("[11:02:03] src/van.cc:441: Bind to [role=worker, ip=10.0.0.8, port=40001]",
                    "[11:02:09] /opt/mxnet/3rdparty/dmlc-core/include/dmlc/logging.h:455: [11:02:09] "
                    "src/kvstore/kvstore_dist.h:87: Check failed: size == recv_size (4096 vs. 2048)",
                    "Stack trace returned 7 entries:")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "size == recv_size" in result.verdict.summary


def test_native_assert_failed_line_is_a_crash() -> None:
    line = parse_crash_line("(91877): /build/src/transport/ep_server.cpp:ServerInit:112: ASSERT 'fd >= 0' FAILED: "
                            "cannot open endpoint")
    assert line is not None and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal == "SIGABRT", line
    assert parse_crash_line("the docs say ASSERT is FAILED when wrong") is None


# The batch systems' own kills for memory: PBS's "job killed: mem ... exceeded limit" was refused, slurmstepd's "exceeded
# memory limit ..., being killed" before its CANCELLED line named a stop from outside (dask/dask-jobqueue#178,
# heronsystems/adeptRL#13; other jobs, limits and hosts here)
def test_pbs_memory_kill_is_a_sigkill() -> None:
    result = report("Running job 3 based on PBS_ARRAY_INDEX=3", "=>> PBS: job killed: mem 9123456kb exceeded limit "
                    "8388608kb")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "memory" in result.verdict.summary


def test_slurm_memory_kill_before_its_cancel_is_a_sigkill_on_that_node() -> None:
    result = report("step 120 loss 2.31",
                    "slurmstepd: error: Step 5521.0 exceeded memory limit (70211584 > 67108864), being killed",
                    "slurmstepd: error: *** STEP 5521.0 ON gpu-n07 CANCELLED AT 2026-03-01T10:00:00 ***")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_host == "gpu-n07", result.verdict
    assert "memory" in result.verdict.summary


def test_a_cancel_with_no_memory_kill_is_still_a_stop() -> None:
    result = report("step 120 loss 2.31",
                    "slurmstepd: error: *** JOB 5521 ON gpu-n07 CANCELLED AT 2026-03-01T10:00:00 ***")
    assert result.verdict.kind.value == "stopped", result.verdict.summary


# argparse's exit on a bad command line ("PROG: error: argument X: invalid int value"), of a launcher, was a failure of
# unknown kind (cfzd/FcaNet#12; other programs and arguments here)
def test_argparse_error_of_a_launcher_is_an_exception() -> None:
    result = report("torchrun: error: argument --nnodes: invalid int value: '2:'")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert not result.verdict.culprit_ranks
    required = parse_crash_line("finetune.py: error: the following arguments are required: --data_path")
    assert required is not None and required.kind is CrashLineKind.EXCEPTION, required
    assert parse_crash_line("srun: error: argument --gres: unknown resource") is None


# The shell's "Killed" set in Markdown bold by the reporter ("**Killed**") was refused (CharlesShang/FastMaskRCNN#172;
# other markup and signal here)
def test_markdown_bold_around_a_whole_line_is_read_through() -> None:
    result = report("epoch 3 iter 500 loss 0.91", "__Segmentation fault (core dumped)__")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert parse_crash_line("**not** a failure") is None


# The coordination error's list of task names quoted by the reporter ("> " before each line, which joins the list's
# first name to the head's line) was read up to its first name only (ayaka14732/llama-2-jax#20 decorated; other tasks)
def test_quoted_task_list_is_read_to_its_end() -> None:
    result = report("> jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
                    "PjRT_Client_Connect. Timed out task names:",
                    "> /job:jax_worker/replica:0/task:4",
                    "> /job:jax_worker/replica:0/task:1",
                    "> /job:jax_worker/replica:0/task:9")
    assert result.verdict.culprit_ranks == (1, 4, 9), result.verdict


def test_a_banner_of_stars_is_no_markdown_bold() -> None:
    line = parse_crash_line("*** SIGBUS received at time=1700000123 on cpu 5 ***")
    assert line is not None and line.signal == "SIGBUS", line
