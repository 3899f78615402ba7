"""Evidence paths: links in the HTML report (relative inside the run directory, file: URLs from
elsewhere, plain text for what does not exist), and one unwrapped line each in the text report."""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from triage.model import Finding, Report, Verdict, VerdictKind
from triage.report import render
from triage.report.html import render_html
from triage.report.text import render_text


def _run(tmp_path: Path) -> tuple[Path, list[str]]:
    run = tmp_path / "run"
    files = ["node1/ranks/0/output.log", "node1/bundles/2026-hang/rank-0/pyspy.json", "node1/odd #1?x=y:z%.log"]
    for name in files:
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text("x\n")
    return run, [str(run / name) for name in files]


def _report(run: Path, paths: list[str]) -> Report:
    verdict = Verdict(VerdictKind.CRASH, "CRASH: rank 0 (node1) was killed by SIGSEGV", culprit_ranks=(0,))
    finding = Finding("crash", (0,), "rank 0 was killed by SIGSEGV", evidence=(f"{paths[0]}:12", paths[1]),
                      root_cause=True)
    return Report(verdict, findings=(finding,), evidence=(*paths, str(run / "node1/ranks/0/gone.log")),
                  sources=(str(run),))


def _hrefs(page: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)">', page)


def test_inside_the_run_directory_the_links_are_relative_and_resolve(tmp_path: Path) -> None:
    run, paths = _run(tmp_path)
    page_file = run / "reports" / "report.html"
    page = render_html(_report(run, paths), out_dir=page_file.parent)
    hrefs = _hrefs(page)
    assert len(hrefs) == 5 and not any(urlparse(h).scheme or h.startswith("/") for h in hrefs), hrefs
    resolved = [Path(unquote(urlparse(urljoin(page_file.as_uri(), h)).path)) for h in hrefs]
    assert [str(p) for p in resolved] == [paths[0], paths[1], *paths]     # path:12 links to the file
    assert "odd%20%231%3Fx%3Dy%3Az%25.log" in hrefs[-1]                  # no fragment, query or scheme
    assert f"<li>{run / 'node1/ranks/0/gone.log'}</li>" in page           # no such file: no link


def test_outside_the_run_directory_or_on_stdout_the_links_are_file_urls(tmp_path: Path) -> None:
    run, paths = _run(tmp_path)
    for out_dir in (tmp_path / "elsewhere", None):
        hrefs = _hrefs(render_html(_report(run, paths), out_dir=out_dir))
        assert len(hrefs) == 5 and all(h.startswith("file:///") for h in hrefs)
        assert all(Path(unquote(urlparse(h).path)).is_file() for h in hrefs)


def test_render_to_a_named_file_links_relative_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, paths = _run(tmp_path)
    monkeypatch.chdir(tmp_path)
    report = _report(Path("run"), [str(Path(p).relative_to(tmp_path)) for p in paths])
    with open(run / "report.html", "w", encoding="utf-8") as handle:
        render(report, "html", handle)
    hrefs = _hrefs((run / "report.html").read_text(encoding="utf-8"))
    assert hrefs[:2] == ["node1/ranks/0/output.log", "node1/bundles/2026-hang/rank-0/pyspy.json"]


@pytest.mark.parametrize("width", [40, 60, 100])
def test_the_text_report_never_wraps_inside_a_path(tmp_path: Path, width: int) -> None:
    run, paths = _run(tmp_path)
    out = io.StringIO()
    render_text(_report(run, paths), out, width=width, color=False)
    lines = out.getvalue().splitlines()
    for path in paths:
        assert any(line.strip() == path for line in lines), path                      # the Evidence list
    assert any(line.strip() == f"evidence: {paths[0]}:12" for line in lines)        # under the finding
    assert any(line.strip() == f"evidence: {paths[1]}" for line in lines)


def test_a_path_in_a_finding_or_a_next_step_is_never_cut(tmp_path: Path) -> None:
    run, paths = _run(tmp_path)
    long_path = str(run / ("deep-" * 12) / "output.log")
    report = _report(run, paths)
    finding = Finding("exception", (1,), f"rank 1 wrote {long_path} then failed")
    report = Report(report.verdict, findings=(*report.findings, finding), evidence=report.evidence,
                    next_steps=(f"read {long_path} first",), sources=report.sources)
    out = io.StringIO()
    render_text(report, out, width=50, color=False)
    text = out.getvalue()
    assert sum(long_path in line for line in text.splitlines()) == 2, text
