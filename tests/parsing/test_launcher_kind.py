"""Which launcher a log shows (triage.parsing.launcher_kind): a name's marks are searched only where the text
holds one of the literals every match of them holds, and the answers are those of searching every name's marks."""

from __future__ import annotations

import re
from pathlib import Path
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest

from triage.parsing import launcher_kind
from triage.parsing.launcher_kind import LAUNCHERS, launcher_of

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _searched(text: str) -> str | None:
    """The answer with no literal check: the first name whose marks match."""
    return next((name for name, marks in launcher_kind._MARKS if marks.search(text) is not None), None)


def _runs(items: Any) -> list[str]:
    """The runs of consecutive literal characters in a parsed sequence (nested groups read as their own runs)."""
    runs, run = [], ""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
            continue
        runs.append(run)
        run = ""
        if op is sre_constants.SUBPATTERN:
            runs.extend(_runs(arg[-1]))
    runs.append(run)
    return [r for r in runs if r]


def test_every_branch_of_every_name_holds_one_of_its_literals() -> None:
    """Each alternative of each name's pattern has a literal run that holds one of the name's literals (in lower
    case for the caseless marks): a text holding none of them cannot match."""
    assert set(launcher_kind._HOLDS) == set(LAUNCHERS)
    for name, marks in launcher_kind._MARKS:
        caseless = bool(marks.flags & re.IGNORECASE)
        assert caseless == (name in launcher_kind._CASELESS), name
        holds = launcher_kind._HOLDS[name]
        if caseless:
            assert all(word == word.lower() for word in holds), name
        parsed = list(sre_parse.parse(marks.pattern, marks.flags))
        branches = parsed[0][1][1] if len(parsed) == 1 and parsed[0][0] is sre_constants.BRANCH else [parsed]
        assert len(branches) >= 1
        for branch in branches:
            runs = [run.lower() if caseless else run for run in _runs(branch)]
            assert any(word in run for run in runs for word in holds), (name, runs)


ODD = [
    "x\n[default3]: hi\n",
    "PROCESS 3 TERMINATED WITH SIGNAL 9\n",
    "torch.multiproceſsing.spawn failed\n",                  # long s: Python's caseless "s" (not ASCII: searched)
    "torch.multiprocessing.\u212Aspawn\n",                    # a Kelvin sign where no literal wants it
    "Traceback:\n  torch/multiprocessing/spawn.py line 3\n",
    "[launch.py:12:main] hi\n",
    "[proxy:0:1@node3] exit\n",
    "Primary job  terminated normally\n",
    "(RayTrainWorker pid=4411, ip=10.0.0.1) boom\n",
    "  srun: error: node3: task 2: Exited\n",
    "[1,3]<stderr>: x\n", "[3]<stdout>: x\n",
    "horovodrun -np 4\n", "mpiexec -n 2\n", "torchx run\n", "ray::Worker.run()\n",
    "rank 3 crashed\n", "",
    "ERROR: LoadError: ProcessExitedException(3)\n", "      From worker 2:\tx\n", "  From worker 2:   x\n",
    " [1] f at ./remotecall.jl:465\n", "torch.multiprocessing.spawn.ProcessExitedException: process 1\n",
    "ERROR YarnClusterScheduler: Lost executor 9 on n1: Container killed by YARN for exceeding memory limits.\n",
    ("WARN org.apache.hadoop.yarn.server.nodemanager.containermanager.monitor.ContainersMonitorImpl: Container "
     "[pid=4711,containerID=container_1511635920000_0001_01_000010] is running beyond physical memory limits.\n"),
    "yarn install v1.22.19\n",     # (the JavaScript package manager: no YARN)
]


@pytest.mark.parametrize("text", ODD)
def test_odd_texts_give_the_searched_answer(text: str) -> None:
    assert launcher_of(text) == _searched(text)


def test_every_name_is_found() -> None:
    found = {launcher_of(text) for text in ODD}
    assert set(LAUNCHERS) <= found


def test_the_realworld_corpus_gives_the_searched_answer() -> None:
    logs = sorted(CASES.glob("*/*.txt")) + sorted(CASES.glob("*/*.log"))
    assert len(logs) > 100
    named = 0
    for log in logs:
        body = log.read_text(encoding="utf-8", errors="replace")
        answer = launcher_of(body)
        assert answer == _searched(body), log
        named += answer is not None
    assert named > 50
