"""Round 51's classes (issue 23), each on variants written for the test, with negatives."""

from __future__ import annotations

from triage.parsing.log_prefix import split_rank_prefix


def test_an_open_mpi_backtrace_frame_index_cut_at_the_line_end_is_a_pid_head_not_a_rank() -> None:
    # Open MPI's signal handler heads its lines "[host:pid] "; a reporter's wrap can leave the frame's index alone
    for line in ("[node17:40213] [ 7]", "[gpu-a:9] [12]", "[n01:5511] [ 3]  "):
        head = split_rank_prefix(line.rstrip())
        assert head.rank is None and head.pid is not None, line


def test_a_host_tag_before_other_text_keeps_its_rank() -> None:
    # negative: a "[host:N]" tag whose text is not Open MPI's record keeps its number as the tag's rank, also where
    # a bracketed number ends the line after other words
    for line in ("[worker2:3] step 5 done", "[worker2:3] epoch [5]"):
        assert split_rank_prefix(line).rank == 3, line


# Open MPI's "mpirun noticed that process rank N with PID P on node H exited on signal S (NAME)." broken over two lines
# by a reporter or a terminal after any of its words past the pid: still the record of rank N on H
def test_mpirun_noticed_record_wrapped_after_its_pid_is_read() -> None:
    from triage.parsing.launchers import parse_rank_deaths

    for text, rank, host, signal in (
        ("mpirun noticed that process rank 5 with PID 9001 on node \ncn17 exited on signal 11 (Segmentation fault).\n",
         5, "cn17", "SIGSEGV"),
        ("mpiexec noticed that process rank 12 with PID 0 on\nnode gpu-a3 exited on signal 9 (Killed).\n",
         12, "gpu-a3", "SIGKILL"),
        ("prterun noticed that process rank 1 with PID\n4242 on node n2 exited on signal 6 (Aborted).\n",
         1, "n2", "SIGABRT"),
    ):
        deaths = parse_rank_deaths(text)
        assert [(d.rank, d.host, d.signal) for d in deaths] == [(rank, host, signal)], text


def test_mpirun_noticed_words_split_by_a_blank_line_or_without_exited_are_not_a_record() -> None:
    from triage.parsing.launchers import parse_rank_deaths

    # two lines apart (a blank line between): not one record broken by a wrap
    assert parse_rank_deaths("mpirun noticed that process rank 5 with PID 9001 on node \n\ncn17 exited on signal 11 "
                             "(Segmentation fault).\n") == ()
    # the words in a sentence that says no exit
    assert parse_rank_deaths("I guess mpirun noticed that process rank 5 with PID 9001 on node cn17 was slow.\n") == ()


def test_a_wrapped_mpirun_record_names_its_rank_in_the_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import contextlib
    import io
    import json

    from triage.cli import main

    log = tmp_path / "log.txt"
    log.write_text("With 96 processes on 6 nodes the output is:\n\nmpirun noticed that process rank 7 with PID 31337 on "
                   "node \nnid00042 exited on signal 11 (Segmentation fault).\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["report", str(log), "--format", "json"])
    verdict = json.loads(out.getvalue())["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [7]


def _verdict(tmp_path, text: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    import contextlib
    import io
    import json

    from triage.cli import main

    log = tmp_path / "log.txt"
    log.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["report", str(log), "--format", "json"])
    return json.loads(out.getvalue())["verdict"]  # type: ignore[no-any-return]


# srun's record that a task died by a signal comes after everything the task printed: a failure line of no rank after
# it is its caller's account of the step (a workflow manager's summary, a batch script's own error), not the task's
def test_a_callers_error_after_sruns_record_of_a_killed_task_is_not_the_tasks_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    oom = _verdict(tmp_path, (
        "[Tue Mar 3 09:12:40 2026]\nrule align:\n    jobid: 4\n"
        "slurmstepd: error: Detected 1 oom_kill event in StepId=881.0. Some of the step tasks have been OOM Killed.\n"
        "srun: error: cn042: task 0: Out Of Memory\n"
        "Error in rule align:\n    jobid: 4\n"
        "WorkflowError:\nAt least one job did not complete successfully.\n"))
    assert oom["kind"] == "crash" and oom["culprit_ranks"] == [0] and "Out Of Memory" in oom["summary"]
    segv = _verdict(tmp_path, (
        "srun: error: gpu7: task 0: Segmentation fault (core dumped)\n"
        "Traceback (most recent call last):\n  File \"submit.py\", line 40, in <module>\n    run_step(cmd)\n"
        "RuntimeError: training step failed with return code 139\n"))
    assert segv["kind"] == "crash" and segv["culprit_ranks"] == [0]


def test_the_tasks_own_error_before_sruns_record_is_still_its_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # negative: what the task printed before srun's record of its death is its own (the why of its end)
    verdict = _verdict(tmp_path, (
        "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    buf = load_all()\n"
        "MemoryError: cannot allocate 9.1 GiB for the feature table\n"
        "srun: error: cn042: task 0: Killed\n"))
    assert verdict["culprit_ranks"] == [0] and "MemoryError" in verdict["summary"]


# a program's own check that the job's process count does not fit its configuration: every rank runs it, the rank
# that reports it and aborts the job is not to blame (a job-wide configuration error of no rank)
def test_the_programs_process_count_check_is_read_in_its_shapes() -> None:
    from triage.parsing.job_config import process_count_misfit as misfit

    assert misfit("ERROR: the number of MPI ranks (6) does not match px*py*pz (8)\n") is not None
    assert misfit("lattice of 100 sites must be divisible by the number of processes\n") is not None
    assert misfit("Fatal: there is no decomposition for 12 processes compatible with the mesh\n") is not None
    assert misfit("threads per rank must be an integer\n   multiple of the number of ranks.\n") is not None
    # not the job's processes: a tensor's, a file's
    assert misfit("ValueError: the size of tensor a (4) does not match the size of tensor b (8)\n") is None
    assert misfit("number of lines in data.csv does not match the header\n") is None


def test_a_warning_the_job_went_on_after_is_not_the_check(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from triage.parsing.job_config import process_count_misfit as misfit

    text = ("Warning: number of ranks (4) does not match the number of GPUs (8); using 4\n"
            "Epoch 1/10 step 100 loss 2.31\nEpoch 1/10 step 200 loss 2.02\n")
    assert misfit(text) is None


def test_an_abort_after_the_process_count_check_names_no_rank(tmp_path) -> None:  # type: ignore[no-untyped-def]
    mpich = _verdict(tmp_path, (
        "$ mpiexec -n 7 ./lbm -c cavity.cfg\n"
        "lattice of 100 x 100 sites must be divisible by the number of processes\n"
        "Abort(1) on node 3 (rank 3 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n"))
    assert mpich["kind"] == "exception" and mpich["culprit_ranks"] == [] and "job-wide" in mpich["summary"]
    ompi = _verdict(tmp_path, (
        "ERROR: the number of MPI ranks (6) does not match px*py*pz (8)\n"
        "--------------------------------------------------------------------------\n"
        "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode 2.\n\n"
        "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
        "You may or may not see output from other processes, depending on\nexactly when Open MPI kills them.\n"
        "--------------------------------------------------------------------------\n"))
    assert ompi["kind"] == "exception" and ompi["culprit_ranks"] == [] and "px*py*pz" in ompi["summary"]


def test_another_ranks_failure_after_a_recovered_warning_keeps_its_rank(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # negative: the job went on after the words, and rank 2 then failed on its own
    verdict = _verdict(tmp_path, (
        "Warning: number of ranks (4) does not match the number of GPUs (8); using 4\n"
        "Epoch 1/10 step 100 loss 2.31\nEpoch 1/10 step 200 loss 2.02\n"
        "[rank2]: Traceback (most recent call last):\n[rank2]:   File \"train.py\", line 9, in <module>\n"
        "[rank2]: KeyError: 'label'\n"))
    assert verdict["culprit_ranks"] == [2] and "job-wide" not in verdict["summary"]
    # negative: a crash is the input's own story, whatever the check said
    crash = _verdict(tmp_path, (
        "number of processors used does not match number allocated\n"
        "mpirun noticed that process rank 1 with PID 77 on node n3 exited on signal 11 (Segmentation fault).\n"))
    assert crash["kind"] == "crash" and crash["culprit_ranks"] == [1]


def test_a_ranks_note_long_before_another_ranks_own_error_leaves_that_rank_the_culprit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # (review rev45: a process-count note rank 0 went on from, then rank 4's own error and abort)
    blocks = "".join(f"[0] loading tile {i} of terrain.nc\n" for i in range(40))
    verdict = _verdict(tmp_path, (
        "[0] Note: the number of ranks (12) does not match nx*ny (16); using a 12x1 split\n" + blocks
        + "[4] Traceback (most recent call last):\n[4]   File \"model.py\", line 210, in step\n"
        "[4] FloatingPointError: overflow in flux at cell 9120\n"
        "--------------------------------------------------------------------------\n"
        "MPI_ABORT was invoked on rank 4 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n"))
    assert verdict["culprit_ranks"] == [4] and "job-wide" not in verdict["summary"]
    # near the abort, but the culprit's failure is an error of its own: still its failure
    own = _verdict(tmp_path, (
        "[1,0]<stderr>:Note: the number of ranks (12) does not match nx*ny (16); using a 12x1 split\n"
        "[1,4]<stderr>:Traceback (most recent call last):\n[1,4]<stderr>:  File \"model.py\", line 210, in step\n"
        "[1,4]<stderr>:FloatingPointError: overflow in flux at cell 9120\n"
        "MPI_ABORT was invoked on rank 4 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n"))
    assert own["culprit_ranks"] == [4] and "job-wide" not in own["summary"]


def test_a_requeued_steps_own_error_after_an_earlier_kill_is_its_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # (review rev45: run 1 OOM-killed, the job requeued, run 2's own traceback and srun's record of its exit)
    verdict = _verdict(tmp_path, (
        "step 0 loss 0.9\nstep 1 loss 0.8\n"
        "srun: error: c17: task 0: Killed\n"
        "=== requeued, restarted on c23 ===\nresuming from checkpoint step 1\nstep 2 loss 0.7\n"
        "Traceback (most recent call last):\n  File \"fit.py\", line 51, in <module>\n    x = next(batches)\n"
        "KeyError: 'pixel_values'\n"
        "srun: error: c23: task 0: Exited with exit code 1\n"))
    assert verdict["kind"] == "exception" and "KeyError" in verdict["summary"]
