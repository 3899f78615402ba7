"""Issue 23: general readers for what first sight still misses (session 41). Variants written here, none taken from
a round's case.

2. A run's own line that it ended well (``Training finished``, ``Training complete``, ``Done.``, ``Saved
   checkpoint``, Lightning's ``Trainer.fit stopped: max_epochs reached``, a final evaluation's summary) after its
   only failure-looking line is "progress" (triage.parsing.progress): the all-clear that quotes the line, never a
   refusal; with progress's guards: a line no process went on after is still the failure.
4. MPICH's bare ``Abort(N) on node K`` (triage.parsing.mpi_errors): rank K's own abort with code N (K is MPICH's
   world rank), never SIGABRT, never a refusal; read once where its words are another row's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.progress import is_progress, mentions_progress

report = failure_verdict

_START = "loading dataset from /data/train\nbuilding the model\n"


# --- 2. a success line after the only failure-looking line ---------------------------------------------------------

_SUCCESS_LINES = [
    "Training finished",
    "Training complete.",
    "training completed in 3h 12m",
    "Training is done!",
    "Done.",
    "done",
    "All done!",
    "Saved checkpoint to /out/final.pt",
    "saving the final model checkpoint at /ckpt/last",
    "checkpoint saved: /out/step_final",
    "`Trainer.fit` stopped: `max_epochs=3` reached.",
    "***** eval metrics *****",
    "Final test accuracy: 0.913",
    "final_eval_loss = 1.204",
]


@pytest.mark.parametrize("line", _SUCCESS_LINES)
def test_success_lines_are_progress(line: str) -> None:
    assert is_progress(line)
    assert mentions_progress(line)       # the cheap pre-pass never hides one


@pytest.mark.parametrize("line", [
    "Training failed after 3 epochs",
    "Done. 3 errors",
    "Done with errors: the run was aborted",
    "checkpoint saved, then the rank was killed",
    "Final test loss: nan",
    "Done reading the config, now training",       # not alone on its line: no end of the run
    "Saving checkpoint skipped: the disk is full",
    "Training will be done on 8 GPUs",
])
def test_not_success_lines(line: str) -> None:
    assert not is_progress(line)


@pytest.mark.parametrize("failure", [
    "FOOLIB ERROR: registration failed",
    "FATAL: fabric init failed on mlx5_0",
    "[E] transport: qp entered error state",
    "fabric: could not open the device mlx5_2",
])
@pytest.mark.parametrize("success", _SUCCESS_LINES)
def test_unprefixed_success_after_the_only_failure_line_is_an_all_clear(failure: str, success: str,
                                                                         tmp_path: Path) -> None:
    code, out = report_log(f"{_START}{failure}\n{success}\n", tmp_path)
    assert code == 0, out
    assert failure in out["verdict"]["summary"]


@pytest.mark.parametrize("success", ["Training finished", "Saved checkpoint to /out/final.pt", "Done."])
def test_success_before_the_failure_line_leaves_it_the_failure(success: str, tmp_path: Path) -> None:
    verdict = report(f"{_START}{success}\nFATAL: fabric init failed on mlx5_0\n", tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_another_ranks_success_leaves_the_failing_rank_failed(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: epoch 1 loss 0.5\n[rank1]: Training complete\n")
    verdict = report(text, tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_each_rank_went_on_to_its_end_is_an_all_clear(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: Training complete\n[rank0]: Training complete\n")
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "fabric init failed" in out["verdict"]["summary"]


def test_progress_then_success_after_the_error_line_is_an_all_clear(tmp_path: Path) -> None:
    text = _START + "XPLIB ERROR: registration failed\nstep 30 loss 2.0\nTraining completed successfully\n"
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "XPLIB ERROR: registration failed" in out["verdict"]["summary"]


# --- 4. MPICH's bare "Abort(N) on node K": rank K's own abort -------------------------------------------------------

@pytest.mark.parametrize(("line", "rank", "code"), [
    ("Abort(1) on node 2", 2, "1"),
    ("Abort(3) on node 12 (rank 12 in comm 0): ", 12, "3"),
    ("Abort(1) on node 7 (rank 0 in comm 3): the solver diverged", 7, "1"),     # node K: the world rank
    ("[proxy:0:1@node2] Abort(255) on node 4", 4, "255"),
    ("  Abort(0x1) on node 1", None, None),                                       # no such head
])
def test_mpich_bare_abort_is_that_ranks_own(line: str, rank: int | None, code: str | None) -> None:
    records = [r for r in parse_mpi_errors(f"step 1\n{line}\n") if r.first]
    if rank is None:
        assert not records
        return
    assert [r.rank for r in records] == [rank]
    assert f"errorcode {code}" in records[0].text


def test_mpich_abort_with_its_words_is_read_once() -> None:
    text = "Abort(1) on node 2 (rank 2 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2\n"
    records = parse_mpi_errors(text)
    assert [r.rank for r in records] == [2]
    assert "MPI_COMM_WORLD" in records[0].text
    fatal = "Abort(805421327) on node 5 (rank 5 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, stack:\n"
    assert [r.text.startswith("failed in PMPI_Allreduce") for r in parse_mpi_errors(fatal)] == [True]


@pytest.mark.parametrize("line", ["Abort(1) on node 2", "[1,2]<stderr>:Abort(1) on node 2",
                                  "Abort(1) on node 2 (rank 0 in comm 5): bad input deck"])
def test_mpich_bare_abort_names_rank_k_not_sigabrt(line: str, tmp_path: Path) -> None:
    verdict = report(f"reading the input deck\n[1,0]<stdout>:step 3\n{line}\n", tmp_path)
    assert verdict["culprit_ranks"] == [2]
    assert "SIGABRT" not in verdict["summary"]
    assert verdict["kind"] != "crash"
