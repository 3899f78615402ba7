"""A raise statement shown in a code listing is code, not the last frame of a traceback."""

from __future__ import annotations

import pytest

from triage.parsing.raise_sites import in_code_listing


@pytest.mark.parametrize(("before", "after"), [
    ("if not torch.cuda.is_available():", None),
    ("    except KeyError as err:  # no RANK", "x"),
    (None, "else:"),
    ("x", "    return model"),
    ("x", "world_size = int(os.environ['WORLD_SIZE'])"),
])
def test_a_raise_between_source_lines_is_in_a_listing(before: str | None, after: str | None) -> None:
    assert in_code_listing(before, after)


@pytest.mark.parametrize(("before", "after"), [
    ('  File "/usr/lib/python3.10/os.py", line 679, in __getitem__', "KeyError: 'RANK'"),
    (None, None),
    ("I get the following error:", "what can I do?"),
    ("  File \"spawn.py\", line 160, in join", "torch.multiprocessing.spawn.ProcessRaisedException:"),
    ("    if world_size == 0: raise_now()", "RuntimeError: x == y"),
    ('  File "train.py", line 9, in step', "step=300 loss=2.31 lr=0.0001"),
])
def test_a_raise_after_a_frame_or_alone_is_no_listing(before: str | None, after: str | None) -> None:
    assert not in_code_listing(before, after)
