"""Session 58 (fmt58, issue 23 item 3: formats from the source): vLLM v1's engine cores that died before ready.

vllm/v1/engine/utils.py's ``wait_for_engine_startup`` raises "RuntimeError: Engine core initialization failed. See
root cause above. Failed core proc(s): {'EngineCore_DP0': -9}", each engine core process's multiprocessing exit code:
-N is its death by signal N (the kernel's OOM killer's SIGKILL, as a rule, while it loads the weights into host
memory), N > 0 its own exit after the exception the input shows above it, {} none had ended. An engine core is the
engine of one data-parallel rank, no rank of the model's group. Was an EXCEPTION of no rank (the RuntimeError's
words); now a signal names a CRASH of no rank, by that signal. Variants written from the template, and the template as
vllm-project/vllm#26898's paste gives it (its curly quotes)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths

_START = (
    "(APIServer pid=1) INFO 10-02 08:00:01 [api_server.py:1805] vLLM API server version 0.11.0",
    ("(EngineCore_DP0 pid=311) INFO 10-02 08:00:20 [core.py:76] Initializing a V1 LLM engine (v0.11.0) with config: "
    "model='Qwen/Qwen3-32B', tensor_parallel_size=1"),
    "(APIServer pid=1) Traceback (most recent call last):",
    ('(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 1153, in '
    "wait_for_engine_startup"),
    "(APIServer pid=1)     raise RuntimeError(",
)
_FAILED = "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "


def test_an_engine_core_killed_by_sigkill() -> None:
    verdict = report(*_START, _FAILED + "{'EngineCore_DP0': -9}").verdict
    assert verdict.kind.value == "crash" and verdict.culprit_ranks == (), verdict.summary
    assert "SIGKILL" in verdict.summary and "EngineCore_DP0" in verdict.summary


def test_curly_quotes_of_a_paste() -> None:
    deaths = parse_rank_deaths(_FAILED + "{\u2018EngineCore_DP0\u2019: -11}")
    assert [(d.rank, d.signal) for d in deaths] == [(None, "SIGSEGV")]


def test_two_cores_the_fault_not_the_teardown() -> None:
    verdict = report(*_START, _FAILED + "{'EngineCore_DP1': -11, 'EngineCore_DP0': -15}").verdict
    assert verdict.kind.value == "crash" and "SIGSEGV" in verdict.summary, verdict.summary


def test_an_exit_code_of_its_own_is_its_exception_above() -> None:
    assert parse_rank_deaths(_FAILED + "{'EngineCore_DP0': 1}") == ()
    assert parse_rank_deaths(_FAILED + "{}") == ()
    verdict = report("(Worker_TP1 pid=12701) ERROR 09-27 15:06:30 [multiproc_executor.py:585] WorkerProc failed to "
                     "start.",
                     "(Worker_TP1 pid=12701) ERROR 09-27 15:06:30 [multiproc_executor.py:585] torch.OutOfMemoryError: "
                     "CUDA out of memory. Tried to allocate 896.00 MiB. GPU 1 has a total capacity of 79.19 GiB of "
                     "which 402.06 MiB is free.",
                     *_START, _FAILED + "{'EngineCore_DP0': 1}").verdict
    assert verdict.kind.value == "exception" and verdict.culprit_ranks == (1,), verdict.summary


def test_a_worker_s_failure_before_the_kill_stays_the_verdict() -> None:
    verdict = report("(Worker_TP1 pid=12701) ERROR 09-27 15:06:30 [multiproc_executor.py:585] torch.OutOfMemoryError: "
                     "CUDA out of memory. Tried to allocate 896.00 MiB. GPU 1 has a total capacity of 79.19 GiB of "
                     "which 402.06 MiB is free.",
                     *_START, _FAILED + "{'EngineCore_DP0': -9}").verdict
    assert verdict.culprit_ranks == (1,), verdict.summary


# vllm/v1/executor/multiproc_executor.py's collective_rpc: "TimeoutError: RPC call to execute_model timed out." when
# the workers did not answer within VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: the model's forward stalled (a collective some
# worker never joined, a kernel that never ended), the engine core's own exception only its word for it. Was an
# EXCEPTION of no rank; now a HANG of no known culprit, and a worker's own failure beside it stays the verdict.
_CORE = "(EngineCore_DP0 pid=5120) ERROR 11-03 12:35:00 [core.py:710] "
_STALL = (
    ("(EngineCore_DP0 pid=5120) INFO 11-03 12:00:00 [core.py:76] Initializing a V1 LLM engine (v0.11.0) with config: "
    "tensor_parallel_size=8"),
    ("(EngineCore_DP0 pid=5120) WARNING 11-03 12:31:00 [shm_broadcast.py:466] No available shared memory broadcast block "
    "found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work "
    "(e.g. compilation, weight/kv cache quantization)."),
    _CORE + "EngineCore encountered a fatal error.",
    _CORE + "Traceback (most recent call last):",
    _CORE + '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 264, in '
    "collective_rpc",
    _CORE + '    raise TimeoutError(f"RPC call to {method} timed out.") from e',
    _CORE + "TimeoutError: RPC call to execute_model timed out.",
    ("(APIServer pid=4012) ERROR 11-03 12:35:00 [async_llm.py:416] vllm.v1.engine.exceptions.EngineDeadError: "
    "EngineCore encountered an issue. See stack trace (above) for the root cause."),
)


def test_the_executor_s_rpc_timeout_is_a_hang_of_no_known_culprit() -> None:
    verdict = report(*_STALL).verdict
    assert verdict.kind.value == "hang" and verdict.culprit_ranks == (), verdict.summary
    assert "execute_model" in verdict.summary and "vLLM's executor" in verdict.summary


def test_a_worker_s_error_before_the_timeout_stays_the_verdict() -> None:
    verdict = report("(VllmWorker TP3 pid=5304) ERROR 11-03 12:30:01 [multiproc_executor.py:654] WorkerProc hit an "
                     "exception.",
                     "(VllmWorker TP3 pid=5304) ERROR 11-03 12:30:01 [multiproc_executor.py:654] torch.AcceleratorError: "
                     "CUDA error: unknown error", *_STALL).verdict
    assert verdict.culprit_ranks == (3,), verdict.summary
