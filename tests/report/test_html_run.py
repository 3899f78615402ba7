"""The HTML report of a real hang under `triage launch` (the demo's job), opened in headless Chromium
offline: a lag chart with round, distinct ticks and a colour per rank that its legend repeats, the
run's timeline with the stop decision and the grey after-stop part, evidence links that open."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example
from tests.helpers.processes import triage_cmd
from tests.report.test_html_chromium import CHROMIUM, _dom
from triage.exitcodes import ExitCode

pytestmark = pytest.mark.timeout(240)
NO_CHROMIUM = "chromium is not installed (apt-get install chromium)"


@pytest.fixture(scope="module")
def hang_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("html-run") / "run"
    done = run_launch(launch_argv(run_dir, torchrun(example("mismatch_hang.py"), 4)), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    return run_dir


def _page(run_dir: Path, out: Path) -> str:
    proc = subprocess.run(triage_cmd("report", str(run_dir), "--format", "html", "-o", str(out)),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    return out.read_text(encoding="utf-8")


def _svg(dom: str, ident: str) -> str:
    found = re.search(rf'<svg id="{ident}".*?</svg>', dom, re.DOTALL)
    assert found is not None, dom[:3000]
    return found.group(0)


def _offline(page: str) -> None:
    assert not re.search(r"\bsrc\s*=", page)
    assert not re.search(r"""href\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_lag_chart_has_distinct_ticks_and_a_colour_per_rank(hang_run: Path, tmp_path: Path) -> None:
    page = hang_run / "report.html"
    _offline(_page(hang_run, page))
    chart = _svg(_dom(page, tmp_path), "lag-chart")
    ticks = re.findall(r'<text class="ytick"[^>]*>([^<]+)</text>', chart)
    assert len(ticks) >= 3 and len(set(ticks)) == len(ticks), ticks
    assert all(re.fullmatch(r"\d+(\.\d+)? (µs|ms|s)", t) for t in ticks), ticks
    assert ">arrival lag</text>" in chart and "collective seq: " in chart
    lines = re.findall(r'<polyline[^>]*stroke="([^"]+)"[^>]*>', chart)
    keys = re.findall(r'<line class="key"[^>]*stroke="([^"]+)"', chart)
    names = re.findall(r'<line class="key"[^>]*>(?:</line>)?<text[^>]*>([^<]+)</text>', chart)
    assert len(lines) == 4 and len(set(lines)) == 4 and keys == lines, (lines, keys)
    assert names == ["rank 0", "rank 1", "rank 2", "rank 3"]


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_timeline_shows_the_stop_and_greys_what_came_after(hang_run: Path, tmp_path: Path) -> None:
    page = hang_run / "report.html"
    _page(hang_run, page)
    strip = _svg(_dom(page, tmp_path), "run-timeline")
    kinds = re.findall(r'<g class="mark (\w+)( after)?">', strip)
    assert [k for k, _ in kinds][:1] == ["start"]
    assert {"progress", "detected", "bundle", "stop", "exit", "end"} <= {k for k, _ in kinds}, kinds
    stop = [k for k, _ in kinds].index("stop")
    assert all(not after for _, after in kinds[:stop]) and {k for k, a in kinds[stop + 1:] if a} >= {"exit", "end"}
    assert "after triage stopped the job ▸</text>" in strip and 'class="after-stop"' in strip
    assert re.search(r">last progress: ranks? [0-9,-]+</text>", strip)
    assert ">stop decision</text>" in strip            # the agent recorded it: not approximate


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_evidence_links_open_from_the_run_directory_and_from_elsewhere(hang_run: Path, tmp_path: Path) -> None:
    inside = hang_run / "report.html"
    page = _page(hang_run, inside)
    hrefs = re.findall(r'<a href="([^"]+)">', page)
    assert len(hrefs) >= 10 and all(not urlparse(h).scheme and not h.startswith("/") for h in hrefs), hrefs
    targets = [Path(unquote(urlparse(urljoin(inside.as_uri(), h)).path)) for h in hrefs]
    assert all(t.exists() and hang_run in t.parents for t in targets), targets
    assert {t.name for t in targets} >= {"fr.json", "pyspy.json", "output.log", "faulthandler.log"}
    # the link, resolved against the page as Chromium does, opens the rank's output.log
    log = Path(unquote(urlparse(urljoin(inside.as_uri(), next(h for h in hrefs if h.endswith("/output.log")))).path))
    first = next(line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip())
    assert html.escape(first, quote=False) in _dom(log, tmp_path)
    # written outside the run directory: absolute file: URLs to the same files
    outside = tmp_path / "elsewhere" / "report.html"
    outside.parent.mkdir()
    far = re.findall(r'<a href="([^"]+)">', _page(hang_run, outside))
    assert far and all(h.startswith("file:///") and Path(unquote(urlparse(h).path)).exists() for h in far)
