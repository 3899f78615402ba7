"""Session 55 (fix55a item 4): a line that happens to be as long as a terminal's width (WRF's 80-column
" alloc_space_field: domain 1 , N bytes allocated") is no wrapped line where the next one opens a record of its own:
a box's or banner's head, a rule with words inside it ("-------------- FATAL CALLED ---------------", "==== ERROR
====", "***** ERROR *****"). The banner's head was joined onto it and WRF's fatal error
lost (a failure of unknown place). Only a rest that cannot stand alone is joined."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.textclean import clean_text


def _at(body: str, width: int) -> str:
    return body + "x" * (width - len(body))


@pytest.mark.parametrize("width", [80, 100, 120, 132])
@pytest.mark.parametrize("banner", ["-------------- FATAL CALLED ---------------", "===== ERROR =====",
                                    "***** ERROR *****", "### Abort ###"])
def test_a_banner_after_a_line_at_a_width_stands_alone(width: int, banner: str) -> None:
    wide = _at(" alloc_space_field: domain            2 ,   ", width)
    lines = clean_text(f"starting\n{wide}\n{banner}\nafter\n").lines
    assert wide.strip() in [line.strip() for line in lines] and banner in [line.strip() for line in lines]


def test_a_plain_rest_is_still_joined() -> None:
    wide = _at("RuntimeError: the shard of rank 3 could not be loaded from /scratch/ckpt/", 80)
    lines = clean_text(f"{wide}\nmodel-00003.safetensors: checksum mismatch\n").lines
    assert len(lines) == 1 and lines[0].endswith("checksum mismatch")


def test_a_rule_cut_with_its_line_runs_on() -> None:
    # (the cut line ends in the rule's own marks: its rest is the rule's, a rule of dashes only, not a banner)
    wide = "Epoch 3 done " + "-" * 67
    lines = clean_text(f"{wide}\n----------\nnext\n").lines
    assert lines[0].endswith("-" * 70)


def test_wrf_fatal_box_after_an_eighty_column_line(tmp_path: Path) -> None:
    line = " alloc_space_field: domain            1 ,              16471424  bytes allocated"
    assert len(line) == 80
    text = (f"{line}\n-------------- FATAL CALLED ---------------\n"
            "FATAL CALLED FROM FILE:  <stdin>  LINE:      70\n"
            " program wrf: error opening wrfinput_d02 for reading ierr=       -1021\n"
            "-------------------------------------------\n")
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    assert got["verdict"]["kind"] == "exception" and "wrfinput_d02" in got["verdict"]["summary"]


def test_real_wrf_benchmark(tmp_path: Path) -> None:
    # aws-samples/aws-hpc-workshops#7
    log = (REPO / "tests/realworld/cases/aws-samples__aws-hpc-workshops__7/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and "wrfinput_d01" in got["verdict"]["summary"]
