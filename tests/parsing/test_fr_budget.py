"""The Flight Recorder parsers' work budget: a pickle decoded without the generic shape check
(``safe_pickle.restricted_loads``) is walked by its fixed schema only, and what that walk visits
is counted against a budget proportional to the file's size (``fr_walk``). Each bomb here is a
small pickle whose shared references describe a huge tree along that schema; each is refused
naming its cause, and real dumps (shared stack frames included) load as before."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.synthetic import fr_dump
from triage.errors import InputError
from triage.load.fr_files import load_compact
from triage.parsing.flight_recorder.compact import parse_fr_compact
from triage.parsing.flight_recorder.entries import MAX_FRAMES, BudgetExceeded, Walk, read_frames, text
from triage.parsing.flight_recorder.parse import decode_fr_bytes, fr_walk, load_fr_file, parse_fr_json
from triage.parsing.safe_pickle import MAX_NODES, restricted_loads

DATA = Path(__file__).parent / "data"
SHARED = "expands to more than"


def _entry(**fields: Any) -> dict[str, Any]:
    entry = fr_dump(0, 4, 1)["entries"][0]
    entry.update({"state": "scheduled", "retired": False, **fields})   # not completed: every parser keeps it
    return entry


def _bomb(tmp_path: Path, name: str, dump: dict[str, Any]) -> tuple[Path, int]:
    path = tmp_path / f"{name}_rank_0"
    path.write_bytes(pickle.dumps(dump, protocol=pickle.HIGHEST_PROTOCOL))
    return path, path.stat().st_size


def _dump(entries: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": entries, **top}


def _refused(path: Path) -> None:
    """Both readers (every entry; the compact one for thousands of ranks) refuse it, naming the file
    and the cause, as the one-line error every bad dump gets."""
    for load in (load_fr_file, load_compact):
        with pytest.raises(BudgetExceeded) as err:
            load(path, 0)
        assert str(path) in err.value.message and SHARED in err.value.message
        assert isinstance(err.value, InputError)


def test_entries_sharing_one_huge_shape_list_are_refused(tmp_path: Path) -> None:
    """The quadratic bomb: 100,000 entries (one dict, referenced 100,000 times) whose input_sizes
    is one list of 100,000 shapes: 10**10 shapes as a tree, from a file of a few hundred KB."""
    shapes = [[1]] * 100_000
    path, size = _bomb(tmp_path, "shapes", _dump([_entry(input_sizes=shapes, output_sizes=shapes)] * 100_000))
    assert size < 2_000_000
    _refused(path)


def test_entries_sharing_one_huge_frames_list_are_refused(tmp_path: Path) -> None:
    frame = {"name": "f", "filename": "/x.py", "line": 1}
    frames = [frame] * 100_000
    path, _size = _bomb(tmp_path, "frames", _dump([_entry(frames=frames)] * 100_000))
    _refused(path)


def test_groups_sharing_one_huge_member_list_are_refused(tmp_path: Path) -> None:
    members = list(range(100_000))
    groups = {str(i): {"name": str(i), "desc": "g", "ranks": members} for i in range(1_000)}
    path, _size = _bomb(tmp_path, "members", _dump([_entry()], pg_config=groups))
    _refused(path)


def test_shared_strings_and_deep_values_cost_a_bounded_walk(tmp_path: Path) -> None:
    """Strings are leaves, but a 1 MB string named by every entry would cost a copy per entry if a
    parser lowered, stripped or split it: each such step looks at a bounded prefix. A value nested
    deeper than safe_pickle.MAX_DEPTH where the schema wants a scalar or a shape list is never
    turned into text (which recurses): it reads as unknown."""
    big = " " * 1_000_000 + "1"
    deep: list[Any] = []
    for _ in range(300):
        deep = [deep]
    entry = _entry(profiling_name="nccl:" + big, state=big, op_id=big, thread_name=deep, input_dtypes=[deep],
                   pg_id=deep, output_sizes=deep)
    path, _size = _bomb(tmp_path, "strings", _dump([entry] * 20_000, version=deep, pg_status={"0": {
        "last_completed_collective": big}}))
    for load in (load_fr_file, load_compact):
        dump = load(path, 0)
        assert len(dump.collectives) == 20_000
        first = dump.collectives[0]
        assert len(first.op) < 300 and first.dtype == "?" and first.pg == "?" and first.output_sizes == ((),)
        assert dump.entries[0].thread_name == "?" and dump.version == ""


def test_real_dumps_and_shared_frames_load_within_the_budget(tmp_path: Path) -> None:
    """torch memoizes stack frames: 2,000 entries x 30 frames of one shared stack is an ordinary dump."""
    frame = {"name": "f", "filename": "/x.py", "line": 1}
    dump = fr_dump(0, 4, 2_000)
    for entry in dump["entries"]:
        entry["frames"] = [frame] * 30
    path, _size = _bomb(tmp_path, "real", dump)
    full = load_fr_file(path, 0)
    assert len(full.collectives) == 2_000 and len(full.frames_by_record[0]) == 30
    assert len(load_compact(path, 0).histories) == 1
    for name in ("fr_pickle_0", "fr_pickle_1"):
        data = (DATA / name).read_bytes()
        walk = fr_walk(data, name)
        assert parse_fr_json(decode_fr_bytes(data, name), 0, name, walk=walk).collectives
        assert walk.limit == MAX_NODES + len(data) and walk.left is not None and walk.left > MAX_NODES


def test_the_walk_charges_each_use_and_converts_each_list_once() -> None:
    shapes = [[2, 3], [4]]
    walk = Walk(10, "x")
    first = walk.shapes(shapes)
    assert first == (((2, 3), (4,)), 10)
    assert walk.left == 5                      # 2 shapes + 3 dimensions
    assert walk.shapes(shapes)[0] is first[0]  # converted once, charged again
    assert walk.left == 0
    with pytest.raises(BudgetExceeded, match=SHARED):
        walk.shapes(shapes)
    unlimited = Walk(None)
    for _ in range(1_000):
        unlimited.shapes(shapes)
    assert unlimited.left is None


def test_frames_are_read_up_to_the_cap_and_text_never_stringifies_a_container() -> None:
    frame = {"name": "f", "filename": "/x.py", "line": 1}
    assert len(read_frames([frame] * (MAX_FRAMES + 10))) == MAX_FRAMES
    assert text([1, 2]) == "?" and text({"a": 1}, "") == "" and text(3) == "3" and text(None) == "None"
    assert text(10 ** 5000) == "?"             # more digits than int -> str allows


def test_restricted_loads_still_refuses_code_and_bytearray_bombs() -> None:
    with pytest.raises(pickle.UnpicklingError, match="bytearray"):
        restricted_loads(b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x40\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        restricted_loads(pickle.dumps(Path("/x")))
    deep = restricted_loads(b"\x80\x04" + b"]" * 100_000 + b"a" * 99_999 + b".")   # no recursion: C stack
    assert isinstance(deep, list)
    with pytest.raises(InputError, match="not an object"):
        decode_fr_bytes(b"\x80\x04" + b"]" * 100_000 + b"a" * 99_999 + b".", "deep")


def test_compact_parse_without_a_walk_reads_json_as_before() -> None:
    dump = fr_dump(0, 4, 100)
    assert parse_fr_compact(dump, 0, "j").histories == parse_fr_compact(dump, 0, "j", Walk(10**6)).histories
