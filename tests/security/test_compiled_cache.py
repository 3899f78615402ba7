"""triage.compiled_cache: the dataclasses' compiled code kept between starts in the user's own cache.

Read back only from a private directory, from a regular file of the user's own that no one else can read
or write, for this interpreter, whose content matches its hash: a planted, linked, shared, truncated or
foreign file is ignored (compiled as before), never read. A real `triage report` writes it once and then
reads it, with the same report byte for byte as a start that compiles everything."""

from __future__ import annotations

import _sre
import dataclasses
import hashlib
import marshal
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from triage import compiled_cache


@pytest.fixture()
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(compiled_cache, "_no_bytecode", lambda: False)
    monkeypatch.setattr(compiled_cache, "_loaded", None)
    monkeypatch.setattr(compiled_cache, "_new", {})
    monkeypatch.setattr(compiled_cache, "_used", set())
    monkeypatch.setattr(compiled_cache, "_regex_loaded", None)
    monkeypatch.setattr(compiled_cache, "_regex_new", {})
    monkeypatch.setattr(compiled_cache, "_regex_used", set())
    monkeypatch.setattr(compiled_cache, "_re_compile", compiled_cache.RE_OWN_COMPILE)   # (as install() sets it)
    monkeypatch.setattr(compiled_cache, "_memo_loaded", None)
    monkeypatch.setattr(compiled_cache, "_memo_new", {})
    monkeypatch.setattr(compiled_cache, "_memo_used", set())
    return tmp_path / "xdg" / "triage"


def _file(home: Path) -> Path:
    return home / compiled_cache._file()


def test_the_directory_follows_xdg_and_a_relative_one_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/me")
    assert compiled_cache.directory() == Path("/var/cache/me/triage")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    assert compiled_cache.directory() == Path("/home/someone/.cache/triage")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "")
    assert compiled_cache.directory() is None


def test_a_write_is_read_back_private(cache_home: Path) -> None:
    assert compiled_cache.write("x.bin", b"payload")
    assert compiled_cache.read("x.bin") == b"payload"
    assert os.stat(cache_home).st_mode & 0o777 == 0o700
    assert os.stat(cache_home / "x.bin").st_mode & 0o777 == 0o600
    assert [p.name for p in cache_home.iterdir()] == ["x.bin"]       # no temporary file left


def test_what_fails_a_check_is_never_read(cache_home: Path, tmp_path: Path) -> None:
    assert compiled_cache.write("x.bin", b"payload")
    target = cache_home / "x.bin"
    good = target.read_bytes()

    target.write_bytes(good[:-1] + b"P")                  # content that does not match its hash
    assert compiled_cache.read("x.bin") is None
    target.write_bytes(good[:-3])                         # truncated
    assert compiled_cache.read("x.bin") is None
    target.write_bytes(good.replace(sys.implementation.cache_tag.encode(), b"cpython-299"))   # another interpreter
    assert compiled_cache.read("x.bin") is None

    target.write_bytes(good)
    os.chmod(target, 0o644)                               # readable by others: not ours alone
    assert compiled_cache.read("x.bin") is None
    os.chmod(target, 0o600)
    assert compiled_cache.read("x.bin") == b"payload"
    if os.geteuid() == 0:                                 # a file another user planted
        os.chown(target, 4242, 4242)
        assert compiled_cache.read("x.bin") is None
        os.chown(target, 0, 0)

    elsewhere = tmp_path / "planted.bin"                  # a link to a file of the right content
    elsewhere.write_bytes(good)
    os.chmod(elsewhere, 0o600)
    target.unlink()
    target.symlink_to(elsewhere)
    assert compiled_cache.read("x.bin") is None

    target.unlink()
    os.mkfifo(target, 0o600)                              # a pipe: no hang, not read
    done: list[bytes | None] = []
    reader = threading.Thread(target=lambda: done.append(compiled_cache.read("x.bin")), daemon=True)
    reader.start()
    reader.join(60)
    assert done == [None]
    target.unlink()

    target.write_bytes(good)
    os.chmod(target, 0o600)
    os.chmod(cache_home, 0o770)  # noqa: S103  (a directory others can write to: neither read nor written)
    assert compiled_cache.read("x.bin") is None
    assert not compiled_cache.write("y.bin", b"other")
    assert not (cache_home / "y.bin").exists()
    os.chmod(cache_home, 0o700)
    assert compiled_cache.read("x.bin") == b"payload"


def test_nothing_is_written_where_python_writes_no_bytecode(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled_cache, "_no_bytecode", lambda: True)
    assert not compiled_cache.write("x.bin", b"payload")
    assert not cache_home.exists()


def test_code_is_compiled_once_then_read_back(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "def __create_fn__(a):\n def f(self):\n  return a + 1\n return f"
    code = compiled_cache.compiled(source)
    assert marshal.dumps(code) == marshal.dumps(compile(source, "<string>", "exec"))
    assert compiled_cache.save()
    assert not compiled_cache.save()                      # nothing new: not written again
    monkeypatch.setattr(compiled_cache, "_loaded", None)
    monkeypatch.setattr(compiled_cache, "_new", {})
    again = compiled_cache.compiled(source)
    assert compiled_cache._new == {}                      # read back, not compiled
    assert marshal.dumps(again) == marshal.dumps(code)
    table = marshal.loads(compiled_cache.read(compiled_cache._file()) or b"")  # noqa: S302 (the test's own)
    assert table == {hashlib.sha256(source.encode()).digest(): code}


def test_a_table_of_other_things_is_ignored(cache_home: Path) -> None:
    key = hashlib.sha256(b"x = 1").digest()
    assert compiled_cache.write(compiled_cache._file(), marshal.dumps({key: "not code", b"k": 3}))
    assert compiled_cache._codes() == {}
    assert compiled_cache.write(compiled_cache._file(), marshal.dumps([1, 2]))
    compiled_cache._loaded = None
    assert compiled_cache._codes() == {}


def test_dataclasses_made_through_the_cache_behave_the_same(cache_home: Path) -> None:
    def make() -> type:
        @dataclasses.dataclass(frozen=True, order=True)
        class Point:
            x: int
            y: tuple[int, ...] = ()
            z: list[int] = dataclasses.field(default_factory=list, compare=False)
        return Point

    plain = make()
    before = {name: getattr(plain, name) for name in ("__init__", "__repr__", "__eq__", "__hash__", "__lt__")}
    had = vars(dataclasses).get("exec")
    dataclasses.exec = compiled_cache._exec  # type: ignore[attr-defined]
    try:
        cached = make()
        read_back = make()
    finally:
        if had is None:
            del dataclasses.exec  # type: ignore[attr-defined]
    for name, method in before.items():
        assert getattr(cached, name).__code__.co_code == method.__code__.co_code, name
        assert getattr(read_back, name).__code__ is getattr(cached, name).__code__ or \
            getattr(read_back, name).__code__ == getattr(cached, name).__code__
    a, b = cached(1, (2,)), cached(1, (2,))
    assert a == b and hash(a) == hash(b) and repr(a) == repr(plain(1, (2,)))
    assert cached(0) < cached(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        cached()  # type: ignore[call-arg]


PATTERNS = [
    (r"a(?P<x>b)+c", re.IGNORECASE), (r"(?i)Watchdog caught .* (\d+) ms", 0), (rb"[\x80-\xff]", 0),
    (r"^\[rank(\d+)\]:", re.MULTILINE), (r"(?P<a>\w+)(?:-(?P<b>\d+))?|(?P<c>é+)", re.UNICODE),
    (r"(?x) a  b # a comment", 0), (r"K\u212a", re.IGNORECASE), (rb"(?s).", 0), ("", 0),
]


def test_patterns_are_compiled_once_then_built_from_their_kept_parts(cache_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = [compiled_cache._regex(source, int(flags)) for source, flags in PATTERNS]
    assert len(compiled_cache._regex_new) == len(PATTERNS)
    assert compiled_cache.save()
    assert not compiled_cache.save()
    monkeypatch.setattr(compiled_cache, "_regex_loaded", None)
    monkeypatch.setattr(compiled_cache, "_regex_new", {})
    again = [compiled_cache._regex(source, int(flags)) for source, flags in PATTERNS]
    assert compiled_cache._regex_new == {}                # built from the file's parts, not compiled
    for (source, flags), one, other in zip(PATTERNS, first, again):
        own = re._compiler.compile(source, flags)
        assert one == own and other == own, source       # (a pattern compares its flags, source and code words)
        assert (other.groups, other.groupindex, other.flags) == (own.groups, own.groupindex, own.flags)
    assert again[0].fullmatch("ABbc").group("x") == "b"
    assert again[3].findall("[rank3]: x\n[rank12]: y") == ["3", "12"]


def test_parts_the_engine_refuses_or_of_another_shape_are_not_used(cache_home: Path) -> None:
    source, flags = r"a+b", 0
    good = compiled_cache._parts(source, flags)
    table = {(source, flags): (good[0], [999_999, 3], *good[2:]),     # code words the engine's check refuses
             ("x", 0): ("not parts",), (b"y", "0"): good}
    assert compiled_cache.write(compiled_cache._regex_file(), marshal.dumps(table))
    assert list(compiled_cache._regexes()) == [(source, flags)]
    pattern = compiled_cache._regex(source, flags)
    assert pattern == re._compiler.compile(source, flags) and pattern.match("aab")
    assert compiled_cache._regex_new == {(source, flags): good}   # compiled as before, its own parts kept instead


def test_the_patterns_compiled_while_a_cache_file_is_read_are_compiled_as_before(tmp_path: Path) -> None:
    # the first dataclass reads its file; that read's imports (json's patterns) compile patterns, which must not
    # read the patterns' file in the middle of it: a fresh process, with both files there from a first run
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["PYTHONPATH"] = str(Path(compiled_cache.__file__).resolve().parents[1])
    script = ("import sys; from triage import compiled_cache; compiled_cache.install(); import triage.options; "
              "import json, re; re.compile('a test (of) the cache+'); compiled_cache.save(); assert 'json' in sys.modules")
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300, check=False)
        assert out.returncode == 0, out.stderr
    assert (tmp_path / "xdg" / "triage" / compiled_cache._regex_file()).is_file()


def test_a_real_report_writes_the_cache_once_then_reads_it(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: step 1 loss 2.0\n" * 50
                   + "[rank1]:[E1001 10:00:00.1 901 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
                   "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, "
                   "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n"
                   "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["PYTHONPATH"] = str(Path(compiled_cache.__file__).resolve().parents[1])

    def report(extra: dict[str, str]) -> str:
        out = subprocess.run([sys.executable, "-m", "triage", "report", str(log), "--format", "json"],
                             cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=300,
                             check=False)
        assert out.returncode == 1, out.stderr
        return out.stdout

    compiling = report({"PYTHONDONTWRITEBYTECODE": "1"})      # nothing kept: every class compiled
    cache = tmp_path / "xdg" / "triage" / compiled_cache._file()
    assert not cache.exists()
    first = report({})
    assert cache.is_file() and cache.stat().st_mode & 0o777 == 0o600
    written = cache.stat()
    regexes = tmp_path / "xdg" / "triage" / compiled_cache._regex_file()
    assert regexes.is_file() and regexes.stat().st_mode & 0o777 == 0o600
    regexes_written = regexes.stat()
    second = report({})
    assert (cache.stat().st_ino, cache.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # not rewritten
    assert compiling == first == second
    assert (regexes.stat().st_ino, regexes.stat().st_mtime_ns) == (regexes_written.st_ino, regexes_written.st_mtime_ns)
    table = marshal.loads(regexes.read_bytes()[len(compiled_cache.MAGIC + compiled_cache._tag()) + 32:])  # noqa: S302
    assert len(table) > 50
    for (source, flags), parts in table.items():        # every pattern the report compiled, built from its parts
        assert _sre.compile(source, *parts) == re._compiler.compile(source, flags), source


def test_a_second_install_or_re_s_compile_as_its_own_never_recurses(monkeypatch: pytest.MonkeyPatch) -> None:
    # (once the CLI ran in this process, re's compile is compiled_cache's own: a stand-in taken from it, or a second
    # install, must still compile through re's real compiler, never through itself: CI died of that recursion)
    compiled_cache.install()
    monkeypatch.setattr(compiled_cache, "_installed", False)
    compiled_cache.install()
    monkeypatch.setattr(compiled_cache, "_re_compile", re._compiler.compile)
    assert re.compile("a pattern (seen) only in this test[0-9]+ x{2,5}").match("a pattern seen only in this test7 xx")


def test_the_gates_literals_are_found_once_then_read_back_the_same(cache_home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """triage.parsing.regex_gate.required_literals through compiled_cache.memo: within a command (install() called)
    the parse's answer is kept and read back at the next start, the same for every pattern of crashlog's gates; a kept
    value of another shape is not used (found anew); outside a command nothing is kept."""
    from triage.parsing import crashlog, regex_gate

    patterns = sorted({(str(g.pattern.pattern), int(g.pattern.flags)) for g in vars(crashlog).values()
                       if isinstance(g, regex_gate.Gated)})
    assert len(patterns) >= 5
    parsed = [regex_gate._required_literals(source, flags) for source, flags in patterns]
    monkeypatch.setattr(compiled_cache, "_installed", False)
    assert [regex_gate.required_literals(s, f) for s, f in patterns] == parsed
    assert compiled_cache._memo_new == {}                  # (not a command: nothing kept)
    monkeypatch.setattr(compiled_cache, "_installed", True)
    assert [regex_gate.required_literals(s, f) for s, f in patterns] == parsed
    assert len(compiled_cache._memo_new) == len(patterns)
    assert compiled_cache.save()
    monkeypatch.setattr(compiled_cache, "_memo_loaded", None)
    monkeypatch.setattr(compiled_cache, "_memo_new", {})
    calls: list[str] = []
    real = regex_gate._required_literals
    monkeypatch.setattr(regex_gate, "_required_literals", lambda s, f=0: calls.append(s) or real(s, f))
    assert [regex_gate.required_literals(s, f) for s, f in patterns] == parsed
    assert calls == []                                      # read back, not parsed
    key = next(iter(compiled_cache._memos()))
    compiled_cache._memos()[key] = ("not", "literals")      # a kept value of another shape: found anew
    assert regex_gate.required_literals(key[3], key[4]) == real(key[3], key[4])
    assert calls == [key[3]]
