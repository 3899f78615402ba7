"""Session 53: a job script's own words after its program failed (`set -x`'s trace "+ echo done" and the "done" that
echo printed) are no word of the run's end: a script without `set -e` runs on past a failed mpirun. Open MPI's daemon
box followed by them was refused (read as a run that went on and ended well)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict
from triage.parsing.progress import went_on_after

BOX = ("+ mpirun -np 8 --hostfile hosts ./a.out\n"
       "--------------------------------------------------------------------------\n"
       "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n\n"
       "* not finding the required libraries and/or binaries on\n  one or more nodes. Please check your PATH and "
       "LD_LIBRARY_PATH\n  settings, or configure OMPI with --enable-orterun-prefix-by-default\n"
       "--------------------------------------------------------------------------\n")


@pytest.mark.parametrize("after", ["+ echo done\ndone\n", "+ echo Done.\nDone.\n",
                                   "+ echo 'Training finished'\nTraining finished\n",
                                   "++ echo -e 'all done'\nall done\n", "+(job.sh:14): echo done\ndone\n",
                                   "+ echo done\ndone\n+ exit 0\n"])
def test_a_traced_echo_after_the_box_does_not_undo_it(after: str, tmp_path: Path) -> None:
    text = BOX + after
    assert not went_on_after(text, text.index("ORTE was unable"))
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "could not start its daemons" in got["summary"]


def test_the_runs_own_end_word_still_counts() -> None:
    # (untraced: the program's own "Training finished" after a step, as before)
    text = BOX + "step 10 loss 0.3\nTraining finished\n"
    assert went_on_after(text, text.index("ORTE was unable"))
    # (a traced command other than echo does not hide the line after it)
    text = BOX + "+ python train.py\nstep 10 loss 0.3\nTraining finished\n"
    assert went_on_after(text, text.index("ORTE was unable"))


def test_real_daemon_box_under_a_traced_script(tmp_path: Path) -> None:
    # zhijian-liu/torchpack#24's box (ssh could not resolve the host), under a script run with `set -x` that echoes
    # its end
    log = (REPO / "tests/realworld/cases/zhijian-liu__torchpack__24/log.txt").read_text(encoding="utf-8")
    text = "+ torchpack dist-run -np 4 python train.py\n" + log.rstrip("\n") + "\n" + "-" * 40 + "\n+ echo done\ndone\n"
    got = failure_verdict(text, tmp_path)
    assert "could not start its daemons" in got["summary"]
    assert "Could not resolve hostname" in got["summary"]
