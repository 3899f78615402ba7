"""Readers that skip work on the lines or places that cannot match (speed only): each gives the answer of the
pattern it stands in front of, on every line and text of the field cases and on made shapes at its edges."""

from __future__ import annotations

from pathlib import Path

from triage.parsing import frameworks, job_config, launchers, mpi_errors, progress, regex_gate, solver_errors

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _texts() -> list[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in sorted(CASES.glob("*/log.txt"))]


def _by_patterns(line: str) -> bool:
    return ((progress._STEP.search(line) is not None or progress._SUCCESS.search(line) is not None)
            and progress._NOT_PROGRESS.search(line) is None)


def test_is_progress_answers_as_its_patterns() -> None:
    made = ["step 3 loss 0.2", "Step 3 ERROR: retry", "epoch 2 timed out", "iter 5 TimeOut", "loss=nan",
            "loss 0.3 inf", "Training finished", "TRAINING FINISHED but SKIPPED", "\u212aILLED step 4", "ſtep 4",
            "Done.", "epoch 1 overflow", "saved checkpoint", "step 9 Signal", "step 4 banana", "epoch 2 infinity"]
    lines = {line for text in _texts() for line in text.splitlines()} | set(made)
    assert len(lines) > 5000
    wrong = [line for line in lines if progress.is_progress(line) != _by_patterns(line)]
    assert not wrong, wrong[:3]


def _spans(matches: object) -> list[tuple[int, int]]:
    return [m.span() for m in matches]  # type: ignore[attr-defined]


def test_misfits_are_the_patterns_matches() -> None:
    made = ["x 8 ranks does not match 6", "[0] number of processors used does not match number allocated",
            "the NUMBER OF MPI RANKS (6) does not match px*py*pz (8)",
            "Number of virtual processes (threads*processes) must be an integer\n   multiple of the number of processes",
            "There is no domain decomposition for 54 ranks that is compatible", "no decomposition for 4 PEs",
            "a12 ranks does not fit", "12 ranks 13 ranks do not agree", "process 0number of processors used does not match",
            "MUST BE DIVISIBLE BY THE NUMBER OF TASKS", "8 MPI processes don't match the grid",
            "number of ranks\ndoes not match", "ünïcode: number of ranks does not match"]
    texts = _texts() + made + ["\n".join(made), " ".join(made)]
    found = 0
    for text in texts:
        expected = _spans(job_config._MISFIT.finditer(text))
        assert _spans(job_config._misfits(text)) == expected, text[:200]
        found += len(expected)
    assert found >= len(made)


def test_whole_text_passes_skipped_only_where_nothing_matches() -> None:
    patterns = [value for name, value in vars(solver_errors).items()
                if name.startswith("_") and name[1:].isupper() and hasattr(value, "finditer")]
    assert len(patterns) > 20
    texts = _texts()
    kept = 0
    for pattern in patterns:
        for text in texts:
            expected = _spans(pattern.finditer(text))
            assert _spans(regex_gate.finditer(pattern, text)) == expected, (pattern.pattern[:80], text[:200])
            kept += bool(expected)
    assert kept > 10            # (the field cases hold these codes' banners: the test compares matches, not nothing)


def test_holds_any_answers_as_the_substring_tests() -> None:
    filler = "[rank3]: step 7 ERROR: read of shard 12 failed, retry count exceeded (src/io.cpp:201)\n" * 14000
    assert len(filler) >= regex_gate._ONE_SCAN      # (a text large enough for the one scan)
    ascii_cases = [text for text in _texts() if text.isascii()]
    for module in (frameworks, launchers, mpi_errors, solver_errors):
        markers = module.MARKERS
        assert not regex_gate.holds_any(filler.replace("ERROR: ", "E "), markers)
        for marker in markers:                  # each one alone, at the text's end
            assert regex_gate.holds_any(filler + marker, markers)
        for text in ascii_cases[:200]:
            big = filler + text
            assert regex_gate.holds_any(big, markers) == any(marker in big for marker in markers)
    assert regex_gate.holds_any("ünïcode " * 200000 + "Evicted", frameworks.MARKERS)   # (not ASCII: the plain tests)
