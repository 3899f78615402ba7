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


def test_hydra_termination_box_names_pid_host_and_the_signal_of_its_exit_code() -> None:
    # MPICH/Intel MPI's Hydra box (round 8's class); an exit code above 128 is 128 + the signal
    box = ("===========================================\n"
           "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
           "=   RANK 3 PID 4410 RUNNING AT gpu-b07\n"
           "=   EXIT CODE: 134\n"
           "=   CLEANING UP REMAINING PROCESSES\n"
           "===========================================\n")
    (death,) = parse_rank_deaths(box)
    assert (death.rank, death.pid, death.host, death.signal, death.exitcode) == (3, 4410, "gpu-b07", "SIGABRT", None)
    said = box.replace("RANK 3 ", "").replace("134", "255") + (
        "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)\n")
    (death,) = parse_rank_deaths(said)
    assert (death.rank, death.signal, death.host) == (None, "SIGBUS", "gpu-b07")
    (death,) = parse_rank_deaths(box.replace("134", "2"))
    assert (death.signal, death.exitcode) == (None, 2)


def test_petsc_handler_names_its_rank_and_signal() -> None:
    text = ("[5]PETSC ERROR: ------------------------------------------------------------------------\n"
            "[5]PETSC ERROR: Caught signal number 7 BUS: Bus Error, possibly illegal memory access\n")
    (death,) = parse_rank_deaths(text)
    assert (death.rank, death.signal) == (5, "SIGBUS")
    assert parse_rank_deaths("[5]PETSC ERROR: Argument out of range\n") == ()


def test_slurm_oom_kill_alone_is_a_sigkill_of_no_known_rank_and_gives_way_to_a_task_record() -> None:
    (death,) = parse_rank_deaths("slurmstepd: error: Detected 3 oom-kill event(s) in step 991.0 cgroup.\n")
    assert (death.rank, death.signal) == (None, "SIGKILL")
    (death,) = parse_rank_deaths("slurmstepd: error: Detected 1 oom_kill event in StepId=77.batch. Some of the "
                                 "step tasks have been OOM Killed.\n")
    assert death.signal == "SIGKILL"
    assert parse_rank_deaths("slurmstepd: error: Detected 1 oom_kill event in StepId=77.0.\n"
                             "srun: error: n12: task 4: Out Of Memory\n") == ()


def test_interrupted_by_signal_is_a_fatal_signal_of_no_known_rank() -> None:
    (death,) = parse_rank_deaths("Process finished with exit code 134 (interrupted by signal 6: SIGABRT)\n")
    assert (death.rank, death.signal) == (None, "SIGABRT")
    (death,) = parse_rank_deaths(" 40%|####      | 4/10 [00:03<00:04]\n139 (interrupted by signal 11:SIGSEGV)\n")
    assert death.signal == "SIGSEGV"
