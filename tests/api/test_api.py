"""The public Python API (triage.api) on golden runs of real gloo jobs, real logs, and a real
`triage launch` job that calls step()."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import triage
from triage import api

TESTS = Path(__file__).resolve().parent.parent
GOLDEN = TESTS / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
REALWORLD = TESTS / "realworld" / "cases"


@pytest.fixture
def in_case(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the golden case's directory: its expected paths are relative to it."""
    case_dir = GOLDEN / request.param
    monkeypatch.chdir(case_dir)
    return case_dir


@pytest.mark.parametrize("in_case", CASES, indirect=True)
def test_build_report_on_a_golden_run_is_the_expected_document(in_case: Path) -> None:
    report = api.build_report(["run"])
    assert isinstance(report, api.Report)
    expected = json.loads((in_case / "expected.json").read_text(encoding="utf-8"))
    assert api.report_json(report) == expected
    out = io.StringIO()
    api.render(report, "json", out)
    assert json.loads(out.getvalue()) == expected
    assert expected["schema"] == api.REPORT_SCHEMA
    assert api.exit_code(report) == (0 if report.verdict.kind is api.VerdictKind.NO_PROBLEM_FOUND else 1)


@pytest.mark.parametrize("in_case", CASES, indirect=True)
def test_render_text_at_a_fixed_width_is_the_snapshot(in_case: Path) -> None:
    out = io.StringIO()
    api.render(api.build_report([Path("run")]), "text", out, width=100)
    assert out.getvalue() == (in_case / "expected.txt").read_text(encoding="utf-8")


def test_a_mismatch_names_the_culprit_with_model_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "op_mismatch")
    verdict = api.build_report(["run"]).verdict
    assert isinstance(verdict, api.Verdict)
    assert (verdict.kind, verdict.subkind, verdict.culprit_ranks) == (
        api.VerdictKind.COLLECTIVE_MISMATCH, api.MismatchKind.OP, (3,))
    assert verdict.process_group == "0" and verdict.seq == 4


def test_the_real_torchrun_log_of_a_crashed_job() -> None:
    """job.log is the console output torchrun printed for the crash golden job."""
    report = api.build_report([GOLDEN / "crash" / "job.log"])
    assert report.verdict.kind in (api.VerdictKind.CRASH, api.VerdictKind.EXCEPTION)
    assert report.verdict.culprit_ranks
    assert api.exit_code(report) == 1
    assert report.extra["coverage"]["complete"] is False     # a log is an excerpt


def test_a_log_pasted_into_a_bug_report() -> None:
    report = api.build_report([REALWORLD / "NVIDIA__nccl__2076" / "log.txt"])
    assert report.verdict.kind is api.VerdictKind.NETWORK_ERROR
    assert report.verdict.culprit_ranks == ()
    assert api.exit_code(report) == 1


def test_the_verdict_does_not_depend_on_the_order_of_the_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "crash")
    one = api.build_report(["run", "job.log"])
    two = api.build_report(["job.log", "run"])
    assert one.verdict == two.verdict


def test_html_is_one_self_contained_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "op_mismatch")
    out = io.StringIO()
    api.render(api.build_report(["run"]), "html", out)
    page = out.getvalue()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "rank 3" in page
    assert "http://" not in page and "https://" not in page


def test_unknown_format_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "clean")
    report = api.build_report(["run"])
    with pytest.raises(ValueError, match="yaml"):
        api.render(report, "yaml", io.StringIO())
    assert set(api.FORMATS) == {"text", "json", "html", "chrome-trace"}


def test_unusable_input_raises_input_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(api.InputError) as info:
        api.build_report([missing])
    assert str(missing) in info.value.one_line() and info.value.hint
    assert info.value.exit_code == api.ExitCode.USAGE_OR_INPUT == 2
    garbage = tmp_path / "dumps"
    garbage.mkdir()
    (garbage / "fr_trace_0").write_text("{ this is not json")
    with pytest.raises(api.TriageError, match="dumps"):
        api.build_report([garbage])


def test_step_is_the_package_step_and_a_no_op_outside_a_launch() -> None:
    assert api.step is triage.step
    api.step()
    api.step(7)


def test_everything_in_all_is_importable() -> None:
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_step_moves_the_heartbeat_of_a_rank_under_triage_launch(tmp_path: Path) -> None:
    """A real `triage launch` of a real rank: step(41), then step(), show up in its heartbeat."""
    program = tmp_path / "steps.py"
    program.write_text(textwrap.dedent("""
        import json, os, sys, time
        from triage import api

        beat = os.path.join(os.environ["TRIAGE_RUN_DIR"], "apihost", "ranks", "0", "heartbeat.json")
        api.step(41)
        api.step()
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with open(beat) as f:
                    if json.load(f).get("step") == 42:
                        print("STEP SEEN", flush=True)
                        sys.exit(0)
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        print("STEP NOT SEEN", flush=True)
        sys.exit(3)
    """))
    run_dir = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    done = subprocess.run(
        [sys.executable, "-m", "triage", "launch", "--run-dir", str(run_dir), "--host", "apihost",
         "--heartbeat-interval", "0.2", "--console", "none", "--", sys.executable, str(program)],
        env=env, capture_output=True, timeout=180, check=False)
    output = (run_dir / "apihost" / "ranks" / "0" / "output.log").read_text(errors="replace")
    assert done.returncode == 0, (done.returncode, output, done.stderr.decode(errors="replace")[-2000:])
    assert "STEP SEEN" in output
    beat = json.loads((run_dir / "apihost" / "ranks" / "0" / "heartbeat.json").read_text())
    assert beat["step"] == 42
