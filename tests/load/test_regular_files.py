"""Only regular files are read: a FIFO, socket or device never blocks a reader."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from triage.regular_files import NotRegularFile, TooLargeFile, is_special_file, open_regular, read_regular_bytes


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)                     # nobody writes: a plain open() would block forever
    with pytest.raises(NotRegularFile):
        open_regular(fifo)
    assert is_special_file(fifo)


def test_a_socket_and_a_device_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert is_special_file(path)
    finally:
        server.close()
    with pytest.raises(NotRegularFile):
        open_regular("/dev/zero")


def test_regular_files_and_directories(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"hello\n")
    with open_regular(log) as handle:
        assert handle.read() == b"hello\n"
    assert not is_special_file(log) and not is_special_file(tmp_path)
    assert not is_special_file(tmp_path / "missing")
    with pytest.raises(NotRegularFile):
        open_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")


def test_read_regular_bytes_reads_what_the_file_holds_up_to_the_limit(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.write_bytes(bytes(range(256)) * 40)
    assert read_regular_bytes(dump, 10_240) == bytes(range(256)) * 40
    with pytest.raises(TooLargeFile):
        read_regular_bytes(dump, 10_239)
    # a file longer than its size says (here /proc's, size 0; a file that grew after fstat is the
    # same case) is read on to the limit, and refused past it
    status = read_regular_bytes("/proc/self/status", 1 << 20)
    assert status.startswith(b"Name:") and b"\nPid:" in status
    with pytest.raises(TooLargeFile):
        read_regular_bytes("/proc/self/status", 16)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_directory_owners_are_remembered_only_where_no_other_user_can_swap_them(tmp_path: Path) -> None:
    from triage.regular_files import _OURS, _other_users_directory

    shared = tmp_path / "shared"          # ours, but anyone may rename entries in it
    inner = shared / "inner"
    inner.mkdir(parents=True)
    shared.chmod(0o777)
    target = str(inner / "worker.json")
    assert _other_users_directory(target) is None
    assert _OURS[(0, str(shared))] is False       # remembered, its entries are not safe
    assert (0, str(inner)) not in _OURS            # looked up again each time
    os.chown(inner, 12345, 12345)                  # as if another user had put their directory there
    assert _other_users_directory(target) == (inner, 12345)
