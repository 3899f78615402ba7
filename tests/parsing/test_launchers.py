"""Plain-word failure records of launchers other than torchrun (triage.parsing.launchers)."""

from __future__ import annotations

from triage.parsing.launchers import parse_rank_deaths


def test_mpirun_signal_record_wrapped_over_two_lines() -> None:
    (death,) = parse_rank_deaths("mpirun noticed that process rank 12 with PID 0 on node n04 exited on\n"
                                 "signal 6 (Aborted).\n")
    assert (death.rank, death.signal, death.host, death.first) == (12, "SIGABRT", "n04", True)


def test_plain_words_name_rank_and_signal_or_code() -> None:
    deaths = parse_rank_deaths("rank 4 died from signal SIGKILL\nRank=7 crashed\nrank 1 exited with exit code 137\n")
    assert [(d.rank, d.signal, d.exitcode) for d in deaths] == [(4, "SIGKILL", None), (7, None, None),
                                                                (1, None, 137)]


def test_negative_codes_are_signals_and_clean_exits_are_not_failures() -> None:
    deaths = parse_rank_deaths("rank 3 exited with return code -11\nrank 0 exited with exit code 0\nrank 2 exited\n")
    assert [(d.rank, d.signal) for d in deaths] == [(3, "SIGSEGV")]


def test_pytorchs_own_rank_messages_are_not_launcher_records() -> None:
    assert parse_rank_deaths("[PG ID 0 PG GUID 0 Rank 3] Process group watchdog thread terminated with exception\n"
                             "[Rank 1] Watchdog caught collective operation timeout\n"
                             "failed (exitcode: -9) local_rank: 3 (pid: 1) of binary\n") == ()


def test_vllm_and_ray_worker_deaths() -> None:
    deaths = parse_rank_deaths("Worker proc VllmWorker-2 died unexpectedly, shutting down executor.\n"
                               "Worker VllmWorkerProcess pid 4321 died, exit code: -15\n"
                               "The actor is dead because its worker process has died. Worker exit type: "
                               "SYSTEM_ERROR Worker exit detail: ...\n")
    assert [(d.rank, d.signal, d.pid) for d in deaths] == [(2, None, None), (None, "SIGTERM", 4321),
                                                          (None, None, None)]
