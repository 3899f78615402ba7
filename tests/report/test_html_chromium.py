"""The HTML report opened in headless Chromium (Debian's chromium package), offline."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from triage.cli import main

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _dom(page: Path, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=90, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_html_report_renders_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", str(GOLDEN / "skipped/run"), "--format", "html", "-o", str(page)]) == 1
    dom = _dom(page, tmp_path)
    verdict = re.search(r'<div class="verdict" id="verdict">(.*?)</div>', dom, re.DOTALL)
    assert verdict is not None
    assert verdict.group(1).startswith("HANG: rank 1 (node01) skipped broadcast(count=4, float32) at seq 4")
    svg = re.search(r'<svg id="timeline".*?</svg>', dom, re.DOTALL)
    assert svg is not None
    assert svg.group(0).count("<rect") >= 12          # 3 lanes x 4-5 collectives
    assert '>rank 1</text>' in svg.group(0) and '>ranks 0,3</text>' in svg.group(0)
    assert 'fill="#f5b7b1"' in svg.group(0)           # the culprit's box at the verdict seq
    assert dom.count("<li") >= 3 and 'id="findings"' in dom
    assert "http" not in page.read_text()
