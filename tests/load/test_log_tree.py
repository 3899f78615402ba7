"""`triage report DIR` on a directory of per-rank logs as launchers write them (triage.load.log_tree)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.launch import TORCHRUN, job_env
from tests.helpers.processes import triage_cmd
from triage.errors import InputError
from triage.load.inputs import load_inputs
from triage.load.log_tree import find_rank_logs, rank_of

VALUE_ERROR = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
               "    step(batch)\nValueError: a batch of the wrong shape\n")
GLOO_COLLATERAL = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
                   "[10.0.0.2]:4781\n")


@pytest.mark.parametrize(("relative", "rank", "local"), [
    ("1/rank.3/stdout", 3, False),                          # Open MPI 4 --output-filename
    ("prterun-host-123@1/rank.12/stderr", 12, False),       # PRRTE's --output dir=
    ("run_ab12/attempt_0/5/stderr.log", 5, True),           # torchrun --log-dir: a local rank
    ("run_ab12/attempt_1/0/stdout.log", 0, True),
    ("node1/rank_7.log", 7, False),
    ("rank-2/train.out", 2, False),
    ("logs/7/stderr.log", None, False),                     # a bare number not under attempt_N names nothing
    ("notes.txt", None, False),
])
def test_the_rank_comes_from_the_layout(relative: str, rank: int | None, local: bool) -> None:
    assert rank_of(Path(relative)) == (rank, local)


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_open_mpi_output_filename_tree_names_the_first_failure(tmp_path: Path) -> None:
    _write(tmp_path, "1/rank.0/stdout", "epoch 0 step 10 loss 2.31\n")
    _write(tmp_path, "1/rank.0/stderr", GLOO_COLLATERAL)
    _write(tmp_path, "1/rank.1/stdout", "epoch 0 step 10 loss 2.29\n")
    _write(tmp_path, "1/rank.1/stderr", VALUE_ERROR)
    evidence = load_inputs([tmp_path])
    failed = {r.rank: r.exit for r in evidence.ranks if r.exit is not None}
    assert failed[1] is not None and "ValueError" in (failed[1].message or "")
    assert {r.rank for r in evidence.ranks} == {0, 1}


def test_other_text_files_below_the_top_are_not_read(tmp_path: Path) -> None:
    _write(tmp_path, "rank3.log", VALUE_ERROR)
    _write(tmp_path, "src/requirements.txt", "ValueError: this is not a log\n")
    tree = find_rank_logs(tmp_path)
    assert [log.path.name for log in tree.logs] == ["rank3.log"]


def test_several_torchrun_runs_are_said_to_share_local_numbers(tmp_path: Path) -> None:
    for run in ("a_1", "b_2"):
        _write(tmp_path, f"{run}/attempt_0/0/stderr.log", VALUE_ERROR)
    assert "local ranks" in (find_rank_logs(tmp_path).note or "")
    evidence = load_inputs([tmp_path])
    assert any("local ranks" in note for note in evidence.skipped)


def test_a_directory_loop_through_a_link_is_not_followed(tmp_path: Path) -> None:
    _write(tmp_path, "1/rank.0/stderr", VALUE_ERROR)
    (tmp_path / "1" / "rank.0" / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert len(find_rank_logs(tmp_path).logs) == 1


def test_a_directory_with_nothing_of_a_log_is_refused_in_one_line(tmp_path: Path) -> None:
    _write(tmp_path, "src/model.py", "print('hi')\n")
    with pytest.raises(InputError, match="not a run directory"):
        load_inputs([tmp_path])


def test_real_torchrun_log_dir_names_the_rank_that_raised(tmp_path: Path) -> None:
    """A real 2-rank gloo job under `torchrun --log-dir --redirects 3`: rank 1 raises, rank 0 fails after it in its
    barrier; `triage report LOG_DIR` names rank 1 and its exception, rank 0 collateral."""
    script = tmp_path / "job.py"
    script.write_text(
        "import torch.distributed as dist\n"
        "from torch.distributed.elastic.multiprocessing.errors import record\n"
        "@record\n"
        "def main():\n"
        "    dist.init_process_group('gloo')\n"
        "    if dist.get_rank() == 1:\n"
        "        raise ValueError('bad batch on rank 1')\n"
        "    dist.barrier()\n"
        "main()\n")
    logs = tmp_path / "logs"
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "2", "--log-dir", str(logs), "--redirects", "3", str(script)]
    done = subprocess.run(job, cwd=tmp_path, env=job_env(), capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode != 0, done.stdout + done.stderr
    assert list(logs.glob("*/attempt_0/1/stderr.log")), sorted(str(p) for p in logs.rglob("*"))
    report = subprocess.run(triage_cmd("report", "--format", "json", str(logs)), capture_output=True, text=True,
                            timeout=120, check=False)
    verdict = json.loads(report.stdout)["verdict"]
    assert verdict["kind"] == "exception", report.stdout
    assert verdict["culprit_ranks"] == [1]
    assert "bad batch on rank 1" in verdict["summary"]
