"""Session 58 (fix58c): a traceback frame's source line is code under every launcher's rank tag.

Python prints the source line of each frame under its ``File "...", line N, in f`` line, indented deeper; its words
(``raise RuntimeError(f"NCCL error: {error_str}")``, ``assert ok, f"..."``) say what the program could raise, the
exception line after the frames what it raised (triage.parsing.raise_sites.frame_source_line, read in
triage/load/logs/text.py). Session 57's first take lost the exception line under horovodrun's ``[N]<stderr>:`` tags:
a source line that happened to be as long as a terminal's width (120) was taken for a line the terminal cut, and the
tagged exception line after it for its rest (triage.parsing.textclean's heads a launcher puts on every line lacked
Open MPI's and horovodrun's tags, Lightning's and Determined's): it was read as the code's rest, and unread. A line
that opens with a launcher's own tag is a line of its own, never the rest of a cut one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.report import report_log
from tests.realworld.test_launchers import REPLACE
from triage.parsing.textclean import clean_text

# torchrun's own tag, then every other launcher's tag test_launchers.py puts on a corpus case's lines
TAGS: dict[str, Callable[[int], str]] = {"torchrun": lambda r: f"[rank{r}]: ", **REPLACE}

WIDTH = 120     # a terminal's usual width: the source line under its tag made exactly this long


def _traceback(tag: str, code: str, raised: str) -> list[str]:
    frame = '  File "/srv/exp/launch.py", line 212, in setup'
    source = f"{tag}    {code}"
    if "# pad" in source:       # (a comment that fills the line to the terminal's width)
        source = source.replace("# pad", "# " + "-" * (WIDTH - len(source) - 2 + len("# pad")))
    return [f"{tag}Traceback (most recent call last):",
            f'{tag}  File "/srv/exp/launch.py", line 300, in <module>',
            f"{tag}    setup(cfg)",
            f"{tag}{frame}",
            source,
            f"{tag}{raised}"]


@pytest.mark.parametrize("name", sorted(TAGS))
def test_the_exception_line_after_a_source_line_of_the_terminals_width_is_read(name: str, tmp_path: Path) -> None:
    # a variant: ranks 1 and 2 fail the same assert, whose source line under the tag is 120 columns long
    lines: list[str] = ["config: pipeline_size=6 world_size=4"]
    for rank in (1, 2):
        tag = TAGS[name](rank)
        lines += _traceback(tag, 'assert cfg.pp * cfg.tp <= cfg.world, f"pipeline stages exceed the ranks" # pad',
                            "AssertionError: pipeline stages exceed the ranks")
    assert any(len(line) == WIDTH for line in lines), lines
    _code, got = report_log("\n".join(lines) + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [1, 2], verdict
    assert "AssertionError: pipeline stages exceed the ranks" in verdict["summary"], verdict


@pytest.mark.parametrize("name", ["openmpi_tag_output", "horovodrun", "lightning", "determined", "vllm_worker_tp"])
def test_a_line_that_opens_with_a_launchers_tag_is_no_cut_lines_rest(name: str) -> None:
    tag = TAGS[name](3)
    first = f"{tag}    x = compute_something_long(alpha, beta, gamma) # "
    first += "-" * (WIDTH - len(first))
    text = "\n".join([first, f"{tag}ValueError: bad shape", f"{tag}done"] * 3)
    clean = clean_text(text)
    assert clean.joined == 0 and len(clean.lines) == 9, clean.lines


def test_a_cut_line_without_a_tag_is_still_joined() -> None:
    # (the terminal's cut: the rest carries no tag of its own)
    first = "[0]<stderr>:RuntimeError: something went wrong in the collective while waiting for the peers to arrive a"
    first += "x" * (WIDTH - len(first))
    text = "\n".join([first, "nd the timeout passed", "[0]<stderr>:next"] * 3)
    clean = clean_text(text)
    assert clean.joined == 3, clean.lines


@pytest.mark.parametrize("name", sorted(TAGS))
def test_an_f_string_template_under_its_frame_is_code_under_every_tag(name: str, tmp_path: Path) -> None:
    # vLLM's and SGLang's pynccl wrapper raises every NCCL error from one f-string template
    tag = TAGS[name](2)
    lines = _traceback(tag, 'raise RuntimeError(f"NCCL error: {error_str}")',
                       "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
    _code, got = report_log("\n".join(lines) + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "network_error", verdict
    assert "unhandled system error" in verdict["summary"] and "{error_str}" not in verdict["summary"], verdict
