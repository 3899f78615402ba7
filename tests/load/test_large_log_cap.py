"""The large-log excerpt's cap (triage.load.logs.large.MAX_MARKED_LINES) bounds the context kept around marked lines,
never the marked lines themselves: a log of thousands of lines holding a code's block phrase ("Fatal error:",
"*** ERROR ***", each widened to BLOCK_BEFORE + BLOCK_AFTER lines) keeps its middle, where the real failure is
(before: the widened lines filled the cap and the first and the last halves were kept - NO PROBLEM FOUND). Where the
marked lines alone are more than the cap, the lines not read are said in the report (a finding), never dropped
silently. The cap is made small here (the logs stay a few MB); the code is the same at 200,000."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from triage.analysis.analyze import analyze
from triage.load import inputs
from triage.load.inputs import load_inputs
from triage.load.logs import large

CAP = 20_000
CUDA = ('[rank3]: Traceback (most recent call last):\n[rank3]:   File "train.py", line 88, in <module>\n'
        "[rank3]:     loss.backward()\n[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n")
REAL = Path(__file__).resolve().parents[1] / "realworld" / "cases"


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 64 << 10)
    monkeypatch.setattr(large, "MAX_MARKED_LINES", CAP)


def _write(path: Path, middle: str, marked: str, lines: int = 36_000, every: int = 10) -> Path:
    """``lines`` lines, every ``every``-th one ``marked`` (a repeated phrase), ``middle`` half-way: steps before it,
    waiting (no progress) after it."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(lines):
            if i == lines // 2:
                handle.write(middle)
            handle.write(marked.format(i=i, r=i % 4) if i % every == 7 % every else
                         f"[rank{i % 4}]: step {i} loss {1.0 / (i + 1):.5f} lr 0.001\n" if i < lines // 2 else
                         f"[rank{i % 3}]: waiting for data loader worker {i % 8} (next batch in 30 s)\n")
    return path


def _report(path: Path) -> dict[str, Any]:
    return analyze(load_inputs([path])).to_json()


@pytest.mark.usefixtures("small_cap")
@pytest.mark.parametrize("phrase", ["Fatal error: could not read frame {i} from the NFS cache (retrying)",
                                    "*** ERROR *** frame {i}: checksum mismatch, reading it again",
                                    "CRITICAL ERROR: lost the connection to the file server {i}; retrying"])
def test_thousands_of_block_lines_keep_the_middles_failure(phrase: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "big.log", CUDA, "[rank{r}]: " + phrase + "\n")
    assert path.stat().st_size > inputs.LARGE_LOG_BYTES
    report = _report(path)
    verdict = report["verdict"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("crash", [3]), verdict
    assert "illegal memory access" in verdict["summary"], verdict
    assert not report["extra"]["skipped"], report["extra"]["skipped"]


@pytest.mark.usefixtures("small_cap")
def test_the_excerpt_holds_every_marked_line_and_stays_within_the_cap(tmp_path: Path) -> None:
    # (a block line every 5th line: widened whole, the excerpt would be the whole log, its starts one set of them all)
    path = _write(tmp_path / "big.log", CUDA, "[rank{r}]: Fatal error: frame {i} unreadable (retrying)\n",
                  lines=60_000, every=5)
    data = path.read_bytes()
    spans = large._spans(data, len(data))
    widened = 2 * large.BLOCK_ENDS * (large.BLOCK_BEFORE + large.BLOCK_AFTER)
    assert len(spans) <= CAP + widened
    kept = {data[start:stop] for start, stop in spans}
    marked = [line for line in data.split(b"\n") if b"Fatal error:" in line or b"RuntimeError" in line]
    assert len(marked) == 12_001 and all(line in kept for line in marked)


@pytest.mark.usefixtures("small_cap")
def test_marked_lines_over_the_cap_say_which_lines_were_not_read(tmp_path: Path) -> None:
    # 30,000 ordinary marked lines (a retry loop's ERROR lines) against a cap of 20,000: the middle's 10,000 go
    lines = 30_000
    path = _write(tmp_path / "big.log", CUDA, "[rank{r}]: ERROR: connection to the parameter server lost, retrying\n",
                  lines=lines, every=1)
    report = _report(path)
    notes = [note for note in report["extra"]["skipped"] if "not read" in note]
    assert len(notes) == 1, report["extra"]["skipped"]
    first, last = (int(number.replace(",", "")) for number in re.findall(r"lines ([\d,]+)-([\d,]+)", notes[0])[0])
    failure = path.read_text().splitlines().index(CUDA.splitlines()[-1]) + 1
    # (every line before the failure is marked: the first half of the cap is lines 1-10,000; the last half ends
    # where the last 256 KiB, read whole, start)
    assert first == CAP // 2 + 1 and first < failure < last < lines - CAP // 2, (first, failure, last)
    assert any("not read" in finding["detail"] for finding in report["findings"]), report["findings"]


@pytest.mark.usefixtures("small_cap")
@pytest.mark.parametrize("case", ["michellab__BioSimSpace__305", "vllm-project__vllm__6042"])
def test_a_real_failure_amid_thousands_of_block_lines_reads_as_when_pasted(case: str, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REAL / case / "log.txt").read_text()
    path = _write(tmp_path / "big.log", text if text.endswith("\n") else text + "\n",
                  "Fatal error: could not read frame {i} from the NFS cache (retrying)\n")
    big = _report(path)["verdict"]
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 1 << 30)      # the same text read line by line, whole
    pasted = _report(path)["verdict"]
    assert (big["kind"], big["culprit_ranks"]) == (pasted["kind"], pasted["culprit_ranks"]), (pasted, big)
    assert pasted["kind"] in ("crash", "exception"), pasted
