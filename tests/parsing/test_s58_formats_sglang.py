"""Session 58 (fmt58, issue 23 item 3: formats from the source): SGLang's scheduler watchdog.

python/sglang/srt/managers/scheduler.py's ``watchdog_thread``: when the scheduler's current batch made no forward
progress for ``--watchdog-timeout`` seconds it logs "Watchdog timeout (self.watchdog_timeout=300)" (with the batch's
size and requests, and a py-spy dump of the schedulers in newer releases) under its "[time TPn]" head, then SIGQUITs
the server, whose handler logs "Received sigquit from a child process. It usually means the child failed." and kills
its own process tree (the shell's "Killed"). Every TP rank's scheduler runs that batch: the model's forward hung, and
the head names the rank whose watchdog saw it, not the rank that held it up. Was a CRASH of the shell's "Killed" (or
a log refused); now a HANG of no known culprit. Variants written from the templates, and real text from
sgl-project/sglang#5034 (its lines under DP and TP heads)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.watchdog import WatchdogKind, parse_watchdog_line

_RUN = (
    "[2025-06-10 12:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', tp_size=4, watchdog_timeout=300)",
    "[2025-06-10 12:00:31 TP2] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=52.10 GB",
    ("[2025-06-10 12:31:02 TP0] Decode batch. #running-req: 64, #token: 90000, token usage: 0.22, cuda graph: True, "
    "gen throughput (token/s): 2101.33, #queue-req: 3"),
)
_BATCH = ("self.cur_batch.batch_size()=64, self.cur_batch.reqs=[Req(rid=5e1d), Req(rid=77ab)], "
          "self.token_to_kv_pool_allocator.available_size()=410000, self.tree_cache.evictable_size()=1200, ")
_END = ("", "[2025-06-10 12:36:45] Received sigquit from a child process. It usually means the child failed.", "Killed")


def test_every_rank_s_watchdog_is_a_hang_of_no_known_culprit() -> None:
    lines = [f"[2025-06-10 12:36:40 TP{n}] Watchdog timeout (self.watchdog_timeout=300)" for n in (1, 0, 3, 2)]
    verdict = report(*_RUN, f"[2025-06-10 12:36:40 TP1] {_BATCH}", *lines, *_END).verdict
    assert verdict.kind.value == "hang" and verdict.culprit_ranks == (), verdict.summary
    assert "SGLang's scheduler watchdog" in verdict.summary and "300 s" in verdict.summary


def test_one_rank_s_watchdog_names_no_culprit_either() -> None:
    # (the server kills every scheduler 5 s after the first watchdog: the others may never print theirs; rank 0 saw
    # the stall, its quiet peers are not the ones that held it up for that)
    verdict = report(*_RUN, f"[2025-06-10 12:36:40 TP0] {_BATCH}", "[2025-06-10 12:36:40 TP0] Pyspy dump for PID 8812:",
                     'Thread 8812 (idle): "MainThread"', "    synchronize (torch/cuda/streams.py:224)",
                     "    event_loop_overlap (sglang/srt/managers/scheduler.py:802)", "",
                     "[2025-06-10 12:36:40 TP0] Watchdog timeout (self.watchdog_timeout=300)", *_END).verdict
    assert verdict.kind.value == "hang" and verdict.culprit_ranks == (), verdict.summary


def test_real_text_under_dp_heads() -> None:
    # sgl-project/sglang#5034 (its lines as the report gives them)
    verdict = report("2025-04-03 19:59:12,086 - INFO - flashinfer.jit: Loading JIT ops: cascade",
                     "[2025-04-03 20:06:34 DP1 TP0] Watchdog timeout (self.watchdog_timeout=300)",
                     "[2025-04-03 20:06:34 DP1 TP0] self.cur_batch.batch_size()=1, self.cur_batch.reqs=[Req(rid=71d70"
                     "2268ab8458b98bc40e7667f80ec, input_ids=[3838, 374, 279, 6722, 315, 9625, 30], output_ids=[])], self."
                     "token_to_kv_pool_allocator.available_size()=2468326, self.tree_cache.evictable_size()=0, ",
                     "[2025-04-03 20:06:34 DP0 TP0] Watchdog timeout (self.watchdog_timeout=300)").verdict
    assert verdict.kind.value == "hang" and verdict.culprit_ranks == (), verdict.summary


def test_a_rank_s_own_exception_stays_the_verdict() -> None:
    verdict = report(*_RUN, "[2025-06-10 12:35:11 TP3] Scheduler hit an exception: Traceback (most recent call last):",
                     '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2402, in '
                     "run_scheduler_process",
                     "RuntimeError: CUDA error: an illegal memory access was encountered", *_END).verdict
    assert verdict.culprit_ranks == (3,), verdict.summary


def test_the_line_and_no_other() -> None:
    event = parse_watchdog_line("[2025-06-10 12:36:40 TP0] Watchdog timeout (self.watchdog_timeout=120)")
    assert event is not None and event.kind is WatchdogKind.SERVING_STALL and event.timeout_ms == 120_000
    assert parse_watchdog_line("[2025-06-10 12:00:00] server_args=ServerArgs(watchdog_timeout=300)") is None


def test_a_healthy_server_is_no_problem() -> None:
    verdict = report(*_RUN, "[2025-06-10 12:31:05] INFO:     127.0.0.1:51234 - \"POST /generate HTTP/1.1\" 200 OK").verdict
    assert verdict.kind.value == "no_problem_found", verdict.summary
