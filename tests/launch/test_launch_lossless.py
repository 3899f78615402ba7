"""Losslessness: every byte each rank wrote is in its output.log and, tagged, in merged.log and
on the console. Compared by hashing each rank's byte stream (torchrun, 4 ranks)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, sha, torchrun
from tests.helpers.paths import program
from tests.helpers.tagged import iter_records, reconstruct
from tests.programs.launch_spew import expected_stream

LINES = 260_000     # per rank: 4 ranks -> 1.04M lines


def test_burst_big_line_binary_segv_and_sigkill(tmp_path: Path) -> None:
    """Rank 0: burst; 1: burst + binary + a 10 MiB line without newline; 2: burst + partial line +
    SIGSEGV; 3: burst + partial line + SIGKILL. The dying ranks wait until the others are done."""
    run = tmp_path / "run"
    markers = tmp_path / "markers"
    markers.mkdir()
    spew = program("launch_spew.py")
    # One script per rank role, through a tiny dispatcher on RANK.
    dispatcher = tmp_path / "dispatch.py"
    dispatcher.write_text(
        "import os, sys, runpy\n"
        "rank = int(os.environ['RANK'])\n"
        f"args = {{0: [], 1: ['--binary', '--big-line'], 2: ['--die', 'segv', '--wait-for', '4'],"
        f" 3: ['--die', 'kill', '--wait-for', '4']}}[rank]\n"
        f"sys.argv = [{spew!r}, '{LINES}', *args]\n"
        f"runpy.run_path({spew!r}, run_name='__main__')\n")
    result = run_launch(launch_argv(run, torchrun(str(dispatcher), 4), quick_hang=False, host=HOST),
                        job_env(SPEW_MARKERS=str(markers)), run, timeout=180)
    assert result.returncode != 0       # torchrun reports the failed ranks
    merged = (run / HOST / "merged.log").read_bytes()
    expected = {
        0: expected_stream(0, LINES, False, False, None),
        1: expected_stream(1, LINES, True, True, None),
        2: expected_stream(2, LINES, False, False, "segv"),
        3: expected_stream(3, LINES, False, False, "kill"),
    }
    for rank, stream in expected.items():
        own = (rank_dir(run, rank) / "output.log").read_bytes()
        assert sha(own) == sha(stream), f"rank {rank}: output.log differs ({len(own)} vs {len(stream)} bytes)"
        assert sha(reconstruct(merged, HOST, str(rank))) == sha(stream), f"rank {rank}: merged.log differs"
        assert sha(reconstruct(result.stdout_bytes, HOST, str(rank))) == sha(stream), f"rank {rank}: console differs"
    # records never exceed the partial-line bound by more than one read, lines are never cut
    records = [r for r in iter_records(merged) if r[1] == "1" and not r[2]]
    assert records and records[-1][3].endswith(b"1" * 100)
    assert b"Segmentation fault" in (rank_dir(run, 2) / "faulthandler.log").read_bytes()
    assert read_json(run / HOST / "node.json")["exit_code"] == result.returncode
