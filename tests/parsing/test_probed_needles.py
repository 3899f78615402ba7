"""Needles a pass only looks out for (triage.parsing.needles.find_all's ``probe``, read back by ``seen``): the
large log's marker pass records whether the log holds any NCCL channel line, and the NCCL reader then leaves
out its own pass for them where there is none. What ``seen`` says is what a ``find`` over the same range says,
on window edges and with the needle cut by the range's end; the hits of the other needles are unchanged; and
the channel text the NCCL reader reads is the same with and without the probe."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

from tests.helpers.report import bytes_find_all
from triage.load.logs import large, records
from triage.parsing import needles, pages

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")
CHANNEL = records.CHANNEL
CHANNEL_LINE = b"gpu1:42:43 [0] NCCL INFO Channel 00/02 : 0 1\n"


def _log(seed: int, channels: int) -> bytes:
    rnd = random.Random(seed)
    words = [b"step 1 loss 2.0\n", b"NCCL INFO Chann", b"CUDA error: x\n", b"x" * 50, b"\n", b"NCCL WARN y\n"]
    parts = [rnd.choice(words) for _ in range(20_000)]
    for _ in range(channels):
        parts.insert(rnd.randrange(len(parts)), CHANNEL_LINE)
    return b"".join(parts)


@pytest.mark.parametrize("window", [4096, 1 << 20])
@pytest.mark.parametrize("channels", [0, 1, 40])
@pytest.mark.parametrize("seed", range(3))
def test_seen_says_what_a_find_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, channels: int,
                                    window: int) -> None:
    monkeypatch.setattr(pages, "WINDOW", window)
    data = _log(seed, channels)
    path = tmp_path / "job.log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for end in (len(data), len(data) // 2, len(data) - 7):
            needles._SEEN.pop(mapped, None)
            plain = needles.find_all(mapped, (b"rror", b"NCCL WARN"), 0, end)
            probed = needles.find_all(mapped, (b"rror", b"NCCL WARN"), 0, end, probe=(CHANNEL,))
            assert probed == plain
            assert probed is not None and probed[b"rror"] == bytes_find_all(data, b"rror", 0, end)
            assert needles.seen(mapped, CHANNEL) == (0, end, data.find(CHANNEL, 0, end) >= 0)
        assert needles.seen(mapped, b"other") is None
    assert needles.seen(data, CHANNEL) is None         # (bytes: nothing kept)


@pytest.mark.parametrize("where", ["none", "start", "middle", "tail", "cut by the pass's end"])
def test_the_channel_text_is_the_same_with_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     where: str) -> None:
    monkeypatch.setattr(pages, "WINDOW", 4096)
    data = _log(7, 0)
    end = len(data) - 1000     # where the probing pass ends (the tail after it); a cut needle starts at end - 5
    at = {"start": 0, "middle": len(data) // 2, "tail": len(data), "cut by the pass's end": end - 20}.get(where)
    if at is not None:
        data = data[:at] + CHANNEL_LINE + data[at:]
    path = tmp_path / "job.log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        own = records._channel_text(mapped)
        needles.find_all(mapped, large.MARKERS, 0, end, probe=(CHANNEL,))
        assert needles.seen(mapped, CHANNEL) == (0, end, data.find(CHANNEL, 0, end) >= 0)
        assert records._channel_text(mapped) == own
    assert (own != "") == (where != "none")
