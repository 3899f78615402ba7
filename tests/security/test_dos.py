"""§4: tiny inputs that used to hang triage or make it allocate gigabytes."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import pickle
import random
import resource
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.security.sec_util import triage
from triage.errors import RemoteError
from triage.parsing.elfcore import CoreFormatError, elf_debug_state, read_core_notes
from triage.parsing.safe_pickle import MAX_DEPTH, MAX_NODES, check_bounds, check_shape, safe_unpickle
from triage.postmortem.context import read_tail, run_dir_ranks
from triage.remote.gather import bounded_communicate
from triage.remote.transfer import unpack

FR_DATA = REPO / "tests" / "parsing" / "data"
BYTEARRAY_1G = b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x40\x85R."
DEEP = b"\x80\x04" + b"]" * 100000 + b"a" * 99999 + b"."


def _dag(levels: int = 60) -> bytes:
    """``l0 = []; l(i) = (l(i-1), l(i-1))``: 600 bytes that describe a tree of 2**60 values."""
    ops = bytearray(b"\x80\x04]q\x00")
    for i in range(1, levels):
        ops += b"h" + bytes([i - 1]) + b"h" + bytes([i - 1]) + b"\x86q" + bytes([i])
    return bytes(ops + b".")


def _cycle() -> bytes:
    items: list[object] = []
    items.append(items)
    return pickle.dumps(items, protocol=4)


@pytest.mark.parametrize(("data", "words"), [(BYTEARRAY_1G, "bytearray"), (DEEP, "deeper"),
                                             (_dag(), "shared references"), (_cycle(), "cycle")])
def test_pickle_bombs_are_refused(data: bytes, words: str) -> None:
    """Each bomb is refused for what it is (no time asserted: a bomb that got through would allocate
    gigabytes or walk 2**60 values, and the suite's timeout ends that)."""
    with pytest.raises(pickle.UnpicklingError, match=words):
        safe_unpickle(data)


def test_real_flight_recorder_pickles_still_load_and_shared_data_is_counted_once() -> None:
    assert isinstance(safe_unpickle((FR_DATA / "fr_pickle_0").read_bytes()), dict)
    shared = [list(range(100))] * 1000            # one list referenced 1000 times: 101_001 values
    check_bounds(shared)
    with pytest.raises(pickle.UnpicklingError):
        check_bounds([shared] * 100, max_nodes=MAX_NODES // 1000)


def test_the_level_check_sees_what_the_exact_walk_sees() -> None:
    """Shared leaves (torch memoizes stack frames) pass; a long path that a depth-first walk meets
    by a short one first, a deep tuple nest and a shared subtree too large as a tree are refused."""
    frame = {"name": "f", "filename": "/x.py", "line": 1}
    dump = {"entries": [{"frames": [frame] * 8, "sizes": [[1024]]} for _ in range(2000)]}
    check_shape(dump)
    assert safe_unpickle(pickle.dumps(dump, protocol=4)) == dump
    chain: list[list[object]] = [[] for _ in range(MAX_DEPTH + 50)]
    for outer, inner in itertools.pairwise(chain):
        outer.append(inner)
    with pytest.raises(pickle.UnpicklingError, match="deeper"):
        check_shape(list(reversed(chain)))          # depth-first meets every link at depth 2 first
    nest: tuple[object, ...] = ()
    for _ in range(MAX_DEPTH + 1):
        nest = (nest, 1)
    with pytest.raises(pickle.UnpicklingError, match="deeper"):
        safe_unpickle(pickle.dumps(nest, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="values"):
        check_shape([[list(range(100))] * 100] * 1000, max_nodes=MAX_NODES // 10)


def test_one_bad_dump_among_good_ones_is_skipped_and_named(tmp_path: Path) -> None:
    shutil.copy(FR_DATA / "fr_pickle_0", tmp_path / "nccl_trace_rank_0")
    shutil.copy(FR_DATA / "fr_pickle_1", tmp_path / "nccl_trace_rank_1")
    for rank, bomb in ((2, DEEP), (3, _dag()), (4, BYTEARRAY_1G)):
        (tmp_path / f"nccl_trace_rank_{rank}").write_bytes(bomb)
    run = triage("report", str(tmp_path), "--width", "120", timeout=60)
    assert run.returncode == 1, run.stderr          # the hang is still reported
    assert "Traceback" not in run.stdout + run.stderr
    for rank in (2, 3, 4):
        assert f"nccl_trace_rank_{rank}" in run.stdout
    assert "disagree at seq 4" in run.stdout


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _fast_one_line(run: subprocess.CompletedProcess[str], code: int = 2) -> None:
    assert run.returncode == code, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr
    assert len([line for line in run.stderr.splitlines() if line.startswith("triage: error:")]) >= 1


def test_fifo_as_core_dmesg_or_config_never_hangs(fifo: Path, tmp_path: Path) -> None:
    for args in (["postmortem", str(fifo)],
                 ["postmortem", str(FR_DATA / "fr_pickle_0"), "--dmesg", str(fifo)],
                 ["launch", "--config", str(fifo), "--", "true"]):
        run = triage(*args, timeout=60)       # (a fifo that blocked the read would never answer)
        _fast_one_line(run)
        assert "fifo" in run.stderr
    with pytest.raises(CoreFormatError, match="not a regular file"):
        read_core_notes(fifo)
    assert elf_debug_state(fifo) == "unreadable"


def test_fifo_worker_json_in_a_run_dir_does_not_hang_postmortem(fifo: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    rank = run / "h" / "ranks" / "0"
    rank.mkdir(parents=True)
    (run / "run.json").write_text('{"layout": "triage.run/1"}')
    os.mkfifo(rank / "worker.json")
    os.mkfifo(rank / "output.log")
    [files] = run_dir_ranks(run)
    assert files.worker == {} and read_tail(rank / "output.log") == ""


def test_crafted_cores_give_one_error_never_an_exception(tmp_path: Path) -> None:
    """Random damage to the headers and notes of a real ELF core (the file's first 64 KiB)."""
    base = _small_core(tmp_path)
    rng = random.Random(10)
    target = tmp_path / "fuzzed"
    for _ in range(400):
        data = bytearray(base)
        for _ in range(rng.randint(1, 12)):
            data[rng.randrange(0, min(len(data), 4096))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[: rng.randrange(0, len(data))]
        target.write_bytes(bytes(data))
        with contextlib.suppress(CoreFormatError):
            read_core_notes(target)
        assert elf_debug_state(target) in ("debug_info", "symbols", "debuglink", "stripped", "unreadable")


def _small_core(tmp_path: Path) -> bytes:
    """A real core of a tiny process (sleep killed with SIGABRT), its first 64 KiB."""
    proc = subprocess.Popen(["sleep", "30"], cwd=tmp_path, preexec_fn=_cores_on)  # noqa: PLW1509
    time.sleep(0.3)
    proc.send_signal(6)
    proc.wait(timeout=30)
    cores = sorted(tmp_path.glob("core*"))
    if not cores:
        pytest.skip("no core written (core_pattern is not 'core'?)")
    data = cores[0].read_bytes()[:65536]
    for core in cores:
        core.unlink()
    return data


def _cores_on() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def test_remote_stream_is_bounded_while_reading() -> None:
    """A node that streams without end is cut at the bound, not buffered first."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 65536)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with pytest.raises(RemoteError, match="larger than 1048576 bytes"):
        bounded_communicate(proc, 60, 1 << 20, "node9")
    assert proc.poll() is not None
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]


def test_host_directory_comes_from_the_node_asked(tmp_path: Path) -> None:
    """A node that claims to be another host in its tar stream is stored under its own name."""
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w|") as tar:
        for name, data in (("otherhost/bundles/b1/manifest.json", b"{}"), ("otherhost/node.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bundle = unpack(stream.getvalue(), tmp_path, label="node1", node="root@node1")
    assert bundle == tmp_path / "node1" / "bundles" / "b1"
    assert not (tmp_path / "otherhost").exists() and (tmp_path / "node1" / "node.json").is_file()


def _fr_pickles_with_sizes(root: Path, sizes: object) -> Path:
    """Two ranks' real-format Flight Recorder pickles whose first entry's input_sizes is ``sizes``."""
    from tests.helpers.synthetic import fr_dump

    root.mkdir()
    for rank in range(2):
        data = fr_dump(rank, 2, 4)
        data["entries"][0]["input_sizes"] = sizes
        (root / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(data, protocol=4))
    return root


def test_one_shared_shape_named_many_times_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    """~600 KB of pickle: one 100,000-dimension shape, named 100,000 times in one entry's sizes
    (10^10 dimensions once expanded). The dimensions are charged from the lengths before any is
    copied, so the dump is refused as the memo bomb it is (no time asserted: copying first would run
    for many minutes and the suite's timeout ends it)."""
    shape = list(range(100_000))
    root = _fr_pickles_with_sizes(tmp_path / "fr", [shape] * 100_000)
    assert (root / "nccl_trace_rank_0").stat().st_size < 2_000_000
    done = triage("report", str(root), "--format", "json")
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr
    assert "refused" in done.stdout + done.stderr


def test_dimensions_no_tensor_can_have_give_no_element_count(tmp_path: Path) -> None:
    """Dimensions past int64, negative ones and a shape of 5,000 dimensions: their product (or a
    product of thousands of huge ints) is never taken; the shapes are said as unknown counts."""
    from triage.parsing.flight_recorder.entries import MAX_DIMS, numel

    assert numel([[10**40, 2]]) == (((2,),), None)
    assert numel([[-4, 8]]) == (((8,),), None)
    assert numel([[3, 4], [5]]) == (((3, 4), (5,)), 17)
    many = [2**62] * 5_000
    shapes, count = numel([many])
    assert count is None and len(shapes[0]) == MAX_DIMS
    root = _fr_pickles_with_sizes(tmp_path / "fr", [[2**62] * 50_000, [10**300]])
    done = triage("report", str(root), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
