"""A secret a rank writes in several calls (a PEM key in chunks, a token in two writes) is redacted
in strace output: the payloads of one stream are read together (triage/collectors/strace_redact.py)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.processes import running_program
from tests.security.sec_util import triage
from triage.collectors.strace_redact import redact_strace
from triage.redact import REDACTED, set_redaction

BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCsplitKEYbody0123456789"
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789splitKEYend")
KEY = f"-----BEGIN PRIVATE KEY-----\n{BODY}\n-----END PRIVATE KEY-----\n"
TOKEN = "ghp_" + "Splt9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k"


def _escape(data: str) -> str:
    return data.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _strace_of(chunks: list[str], fd: int = 5, call: str = "write", pid: int | None = None) -> str:
    head = f"[pid {pid:>5}] " if pid else ""
    return "\n".join(f'{head}01:02:03.{i:06d} {call}({fd}, "{_escape(c)}", {len(c)}) = {len(c)}'
                     for i, c in enumerate(chunks))


def _pieces(secret: str, size: int) -> list[str]:
    return [secret[i:i + size] for i in range(0, len(secret), size)]


@pytest.mark.parametrize("size", [1, 7, 16, 40, 64, 200])
def test_a_pem_key_in_chunks_loses_every_piece_of_its_body(size: int) -> None:
    out = redact_strace(_strace_of(_pieces(KEY, size)))
    for piece in _pieces(BODY, 8):
        assert piece not in out, (size, piece, out)
    assert out.count("\n") == len(_pieces(KEY, size)) - 1         # one line per call, as strace wrote it
    assert f") = {min(len(KEY), size)}" in out   # the syscall structure is kept


def test_the_pem_begin_marker_split_over_two_calls_still_starts_the_block() -> None:
    chunks = ["-----BEGIN RSA PRI", "VATE KEY-----\n", *_pieces(BODY + "\n", 30), "-----END RSA PRIVATE KEY-----\n"]
    out = redact_strace(_strace_of(chunks))
    assert not [p for p in _pieces(BODY, 8) if p in out], out


@pytest.mark.parametrize("size", [3, 10, 20])
def test_a_token_split_over_calls_is_redacted(size: int) -> None:
    out = redact_strace(_strace_of(["login with ", *_pieces(TOKEN, size), " done\n"]))
    assert not [p for p in _pieces(TOKEN[4:], 3) if p in out], out
    assert REDACTED in out and "login with" in out


def test_a_password_assignment_split_over_calls_is_redacted() -> None:
    out = redact_strace(_strace_of(["export DB_PASS", "WORD=hunter2", "secretvalue9\n"]))
    assert "hunter2" not in out and "secretvalue9" not in out, out


def test_other_fds_threads_and_reads_are_streams_of_their_own() -> None:
    text = "\n".join([_strace_of([KEY[:40]], fd=5, pid=11), _strace_of(["step 1 loss 0.25\n"], fd=1, pid=12),
                      _strace_of([KEY[40:90]], fd=5, pid=13), _strace_of(["epoch 3\n"], fd=5, call="read")])
    out = redact_strace(text)
    assert BODY[:8] not in out and KEY[40:90] not in out
    assert "step 1 loss 0.25" in out and "epoch 3" in out       # other streams untouched


def test_resumed_calls_and_vectored_writes_are_read_too() -> None:
    text = ('[pid 7] 01:00:00.000001 writev(3, [{iov_base="-----BEGIN EC PRIVATE KEY-----\\n", iov_len=31}, '
            f'{{iov_base="{BODY[:50]}", iov_len=50}}], 2) = 81\n'
            '[pid 7] 01:00:00.000002 write(3, <unfinished ...>\n'
            f'[pid 7] 01:00:00.000003 <... write resumed>"{BODY[50:]}", 70) = 70')
    out = redact_strace(text)
    assert BODY[:20] not in out and BODY[50:70] not in out, out


def test_plain_output_is_kept_verbatim_and_no_redact_keeps_everything() -> None:
    text = _strace_of(["iteration 12 loss=0.5\n", "allreduce done\n"]) + "\n01:02:03.000009 futex(0x7f, FUTEX_WAIT) = 0"
    assert redact_strace(text) == text
    set_redaction(False)
    try:
        assert redact_strace(_strace_of(_pieces(KEY, 10))) == _strace_of(_pieces(KEY, 10))
    finally:
        set_redaction(True)


SPLIT_PROGRAM = textwrap.dedent(f"""
    import os, time
    key = {KEY!r}
    token = {TOKEN!r}
    fd = os.open(os.devnull, os.O_WRONLY)
    print('READY', flush=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        for size in (16, 40, 64):
            for i in range(0, len(key), size):
                os.write(fd, key[i:i + size].encode())
        os.write(fd, b'token ' + token[:12].encode())
        os.write(fd, token[12:].encode() + b'\\n')
        time.sleep(0.02)
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="strace of another process needs ptrace rights")
def test_a_real_process_writing_a_key_in_pieces_leaves_no_piece_in_the_bundle(tmp_path: Path) -> None:
    program = tmp_path / "split_writer.py"          # a file, so the key is not in the argv too
    program.write_text(SPLIT_PROGRAM)
    with running_program([sys.executable, str(program)], env={**os.environ, "RANK": "0"}) as proc:
        run = triage("dump", "--pid", str(proc.pid), "--out", str(tmp_path / "b"), "--gdb", "never",
                     "--strace-seconds", "2", "--collector-timeout", "60", timeout=180)
        assert run.returncode == 0, run.stderr
    texts = {str(p): p.read_text(errors="replace") for p in (tmp_path / "b").rglob("*") if p.is_file()}
    strace = "\n".join(t for p, t in texts.items() if p.endswith("strace.txt"))
    assert "write(" in strace and REDACTED in strace, strace[:3000]        # the writes were traced
    leaks = [(piece, path) for path, text in texts.items() for piece in _pieces(BODY, 8) + _pieces(TOKEN[4:], 6)
             if len(piece) >= 6 and piece in text]
    assert not leaks, leaks[:5]
