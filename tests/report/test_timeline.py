"""The run timeline strip: marks from a run directory's times, the stop decision (given, recorded
by the agent, or approximated and said to be), everything after it grey and labelled."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from triage.load.run_times import RankExit, RunTimes, load_run_times
from triage.report.timeline import AFTER, build_timeline, timeline_html
from triage.schemas import STOP_SCHEMA

T0 = 1_800_000_000.0
GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def hang_run(**overrides: object) -> RunTimes:
    """A 4-rank hang as `triage launch` records it: progress stops at +10 s, detected at +20 s."""
    fields: dict[str, object] = {
        "job_start": T0, "ranks_started": T0 + 3.5,
        "progress": ((0, T0 + 9.9), (1, T0 + 9.8), (2, T0 + 9.85), (3, T0 + 4.0)),
        "detected": (("node1", T0 + 20.0),), "bundles": (("node1", T0 + 21.0),),
        "stop_requested": T0 + 21.05,
        "exits": tuple(RankExit(r, T0 + 21.1 + r / 100, "signalled (faulthandler.log written)") for r in range(4)),
        "job_end": T0 + 21.6,
    }
    fields.update(overrides)
    return RunTimes(**fields)  # type: ignore[arg-type]


def labels(times: RunTimes, stop: float | None = None) -> list[tuple[str, bool]]:
    timeline = build_timeline(times, stop)
    assert timeline is not None
    return [(m.label, m.after_stop) for m in timeline.marks]


def test_a_hang_run_in_time_order_with_the_after_stop_marks_grey() -> None:
    assert labels(hang_run()) == [
        ("job started", False), ("first rank started", False), ("last progress: rank 3", False),
        ("last progress: ranks 0-2", False), ("hang detected (node1)", False), ("evidence saved (node1)", False),
        ("stop decision", False), ("ranks 0-3 signalled (faulthandler.log written)", True),
        ("job ended", True)]


def test_a_given_stop_time_wins_over_the_agents_record() -> None:
    timeline = build_timeline(hang_run(), stop_time=T0 + 20.5)
    assert timeline is not None and timeline.stop == T0 + 20.5 and timeline.stop_note == ""
    after = [m.label for m in timeline.marks if m.after_stop]
    assert after[0] == "evidence saved (node1)" and after[-1] == "job ended"


@pytest.mark.parametrize(("overrides", "stop", "note"), [
    ({"stop_requested": None}, T0 + 21.0, "approximate: when the hang bundle was saved"),
    ({"stop_requested": None, "bundles": ()}, T0 + 21.1, "approximate: the first rank exit after the hang"),
])
def test_without_a_recorded_stop_it_is_approximated_and_said_to_be(overrides: dict[str, object], stop: float,
                                                                    note: str) -> None:
    timeline = build_timeline(hang_run(**overrides))
    assert timeline is not None and timeline.stop == stop and timeline.stop_note.startswith(note)
    (mark,) = [m for m in timeline.marks if m.kind == "stop"]
    assert mark.label == f"stop decision ({timeline.stop_note})"
    assert all(m.after_stop == (m.time > stop) for m in timeline.marks if m.kind != "stop")


def test_a_run_that_ended_by_itself_has_no_stop_and_nothing_grey() -> None:
    done = RunTimes(job_start=T0, ranks_started=T0 + 2,
                    exits=tuple(RankExit(r, T0 + 30 + 5 * r, "ended (exit code 0)") for r in range(2)), job_end=T0 + 36)
    timeline = build_timeline(done)
    assert timeline is not None and timeline.stop is None
    assert [(m.label, m.after_stop) for m in timeline.marks] == [
        ("job started", False), ("first rank started", False), ("rank 0 ended (exit code 0)", False),
        ("rank 1 ended (exit code 0)", False), ("job ended", False)]
    assert AFTER not in timeline_html(timeline)


def test_ranks_group_by_time_and_by_how_they_ended() -> None:
    exits = (RankExit(0, T0 + 5, "ended (exit code 1)"), RankExit(1, T0 + 5.2, "ended (exit code 1)"),
             RankExit(2, T0 + 5.1, "ended (exception)"), RankExit(3, T0 + 9, "ended (exit code 1)"))
    assert [m.label for m in build_timeline(RunTimes(exits=exits)).marks] == [  # type: ignore[union-attr]
        "rank 2 ended (exception)", "ranks 0,1 ended (exit code 1)", "rank 3 ended (exit code 1)"]


def test_no_times_give_no_timeline_and_a_note() -> None:
    assert build_timeline(RunTimes()) is None
    assert timeline_html(None).startswith('<p id="timeline-none">')


def test_the_strip_greys_and_labels_what_came_after_the_stop() -> None:
    page = timeline_html(build_timeline(hang_run()))
    assert page.count('class="after-stop"') == 1 and f"{AFTER} ▸</text>" in page
    groups = re.findall(r'<g class="mark (\w+)( after)?">.*?</g>', page)
    assert [kind for kind, _ in groups] == ["start", "ranks", "progress", "progress", "detected", "bundle", "stop",
                                            "exit", "end"]
    assert [kind for kind, after in groups if after] == ["exit", "end"]
    assert re.findall(r'<li class="after"><span class="t">\+(\S+) s</span>', page) == ["21.13", "21.60"]
    assert "+0 s is 2027-01-15" not in page and "UTC" in page
    ticks = re.findall(r'fill="#9aa0a6">\+([^<]+)</text>', page)
    assert len(set(ticks)) == len(ticks) >= 3, ticks


def test_a_copied_run_directory_gives_its_records_not_its_file_times() -> None:
    # the golden crash run: exit.json times of ranks 1-3 are records; rank 0's faulthandler.log has the
    # checkout's modification time and no recorded job start to hold it against: left out
    times = load_run_times(GOLDEN / "crash" / "run")
    assert times is not None and times.job_start is None
    assert [(e.rank, e.how, e.from_mtime) for e in times.exits] == [
        (1, "ended (exit code 1)", False), (3, "ended (exit code 1)", False), (2, "ended (exit code 1)", False)]
    assert load_run_times(GOLDEN / "crash" / "job.log") is None


def test_the_stop_decision_record_gives_the_stop_time(tmp_path: Path) -> None:
    # a copy of a recorded run whose node agent wrote both its stop request (node.json) and, 0.2 s
    # earlier, the stop decision that fixed the verdict (stop.json): the decision is the stop
    run = tmp_path / "run"
    shutil.copytree(GOLDEN / "crash" / "run", run)
    (run / "node01" / "node.json").write_text(json.dumps({"started": T0, "stop_requested": T0 + 21.3}))
    (run / "node01" / "stop.json").write_text(json.dumps({
        "schema": STOP_SCHEMA, "time": T0 + 21.1, "host": "node01", "reason": "hang",
        "verdict": {"kind": "hang", "summary": "HANG: rank 3"}}))
    times = load_run_times(run)
    assert times is not None and times.stop_requested == T0 + 21.1
    (run / "node01" / "stop.json").unlink()
    times = load_run_times(run)
    assert times is not None and times.stop_requested == T0 + 21.3
