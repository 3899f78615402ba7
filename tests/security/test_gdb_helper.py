"""§1: gdb never sources Python that the target's owner controls; pystack gives the Python frames.

The attacker is uid 65534. It copies the system python3.11 into a directory it owns and puts a
``python3.11-gdb.py`` next to it, which writes a marker file when gdb sources it. Root then runs
triage on the attacker's core and on the attacker's live process: the marker must never appear.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.helpers.processes import running_program
from tests.security.sec_util import (
    AS_NOBODY,
    SYSTEM_PYTHON,
    as_nobody,
    attacker_dir,
    can_drop_privileges,
    plant_python,
    pwn_code,
    triage,
)
from triage.collectors.common import Target
from triage.collectors.gdb import collect_gdb, gdb_argv
from triage.collectors.gdbhelper import helper_candidates, helper_problem, python_gdb_helper
from triage.collectors.gdbrun import gdb_batch_argv
from triage.collectors.pyframes import pystack_available, run_pystack
from triage.options import CollectSettings
from triage.parsing.pyframes import parse_pyframes

pytestmark = pytest.mark.skipif(not can_drop_privileges() or not SYSTEM_PYTHON.is_file(),
                                reason="needs root, setpriv and /usr/bin/python3.11")

CRASHER = "def inner():\n    import os\n    os.abort()\n\ndef outer():\n    inner()\n\nouter()\n"


def _core_in(where: Path) -> Path:
    cores = sorted(where.glob("core*"))
    assert cores, f"no core in {where}: {sorted(p.name for p in where.iterdir())}"
    return cores[0]


def test_crafted_core_next_to_attacker_helper_runs_nothing(tmp_path: Path) -> None:
    with attacker_dir() as evil:
        marker = evil / "pwned"
        exe = plant_python(evil, pwn_code(marker))
        (evil / "crash.py").write_text(CRASHER)
        os.chown(evil / "crash.py", 65534, 65534)
        as_nobody([str(exe), "crash.py"], cwd=evil)
        core = _core_in(evil)
        # The old lookup would have picked the attacker's helper: it is a candidate ...
        assert evil / "python3.11-gdb.py" in helper_candidates(str(exe))
        # ... and is refused now.
        assert python_gdb_helper(str(exe)) is None
        keep = tmp_path / "keep"
        run = triage("postmortem", str(core), "--format", "json", "--keep", str(keep))
        assert "Traceback" not in run.stderr, run.stderr
        assert not marker.exists(), "gdb ran the attacker's python3.11-gdb.py as root"
        data = json.loads(run.stdout)
        item = data["details"]["crashes"][0] if "details" in data else data
        text = json.dumps(data)
        assert "py-bt" not in json.dumps(item.get("python_method", ""))
        if pystack_available():
            assert '"python_method": "pystack"' in text, text[:2000]
            assert "crash.py:3 in inner" in text and "crash.py:6 in outer" in text
        info = json.loads(next(keep.rglob("core.json")).read_text())
        assert info["gdb"]["py_helper"] is None
        assert any("not under a system directory" in r for r in info["gdb"]["py_helper_refused"])
        assert "set auto-load off" in info["gdb"]["argv"]


def test_libpython_named_by_a_core_in_a_writable_dir_is_refused() -> None:
    """The 600-byte core variant: the core's file list names a libpython in a world-writable dir."""
    with attacker_dir() as evil:
        os.chown(evil, 0, 0)           # like /tmp itself: root's, but sticky and world-writable
        evil.chmod(0o1777)
        lib = evil / "libpython3.11.so.1.0"
        lib.write_bytes(b"\x7fELF")
        helper = evil / "libpython3.11.so.1.0-gdb.py"
        helper.write_text("raise SystemExit('pwned')\n")
        # Even a root-owned helper is refused in a world-writable directory (swapped in a moment later).
        assert helper in helper_candidates(None, (str(lib),))
        assert python_gdb_helper(None, (str(lib),)) is None
        assert "not under a system directory" in (helper_problem(helper, "3.11") or "")


def test_symlinked_helper_is_judged_by_where_it_points(tmp_path: Path) -> None:
    with attacker_dir() as evil:
        real = evil / "python3.11-gdb.py"
        real.write_text("pass\n")
        os.chown(real, 65534, 65534)
        link_dir = tmp_path / "bin"
        link_dir.mkdir()
        (link_dir / "python3.11-gdb.py").symlink_to(real)
        assert helper_problem(link_dir / "python3.11-gdb.py", "3.11") is not None


def test_trusted_root_helper_is_still_used() -> None:
    """py-bt stays available from a helper root installed (here: the interpreter running the tests)."""
    exe = os.path.realpath(os.sys.executable)  # type: ignore[attr-defined]
    helper = python_gdb_helper(exe)
    if helper is None:
        pytest.skip("no CPython gdb helper installed for this interpreter")
    info = os.stat(helper)
    assert info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o600   # triage's private copy
    assert stat.S_IMODE(os.stat(os.path.dirname(os.path.dirname(helper))).st_mode) == 0o700
    assert f"source {helper}" in gdb_batch_argv("gdb", exe, "core", helper)


def test_live_attacker_process_with_rank_runs_nothing(tmp_path: Path) -> None:
    """The fake ``python3.11`` with RANK set: gdb and pystack on it as root never run its helper."""
    with attacker_dir() as evil:
        marker = evil / "pwned"
        exe = plant_python(evil, pwn_code(marker))
        script = "import time; print('READY', flush=True); time.sleep(120)"
        env = {"RANK": "0", "PATH": "/usr/bin:/bin"}
        with running_program([*AS_NOBODY, str(exe), "-c", script], env=env, cwd=evil) as proc:
            pid = next((c.pid for c in __import__("psutil").Process(proc.pid).children(recursive=True)), proc.pid)
            pid = pid if os.readlink(f"/proc/{pid}/exe") == str(exe) else proc.pid
            assert os.readlink(f"/proc/{pid}/exe") == str(exe)
            argv = gdb_argv("gdb", pid)
            assert not any(a.startswith("source ") for a in argv)
            out = tmp_path / "rank-0"
            out.mkdir()
            record = collect_gdb(Target(rank=0, pid=pid), out, tmp_path, CollectSettings(collector_timeout=60))
            assert record.status.value in ("ok", "partial"), record
            assert not marker.exists(), "gdb ran the attacker's helper against a live process"
            if pystack_available():
                frames = run_pystack("remote", str(pid), timeout=60)
                assert frames.error is None, frames.error
                assert any("<string>" in f[0] for f in frames.frames_for(pid)), frames.threads
            assert not marker.exists()


def test_pyframes_output_is_bounded_and_never_raises() -> None:
    assert parse_pyframes("not json").error
    assert parse_pyframes('{"error": "x"}').error == "x"
    many = {"threads": [{"tid": i, "frames": [{"file": "f", "line": 1, "function": "g"}] * 2000}
                        for i in range(5000)]}
    parsed = parse_pyframes(json.dumps(many))
    assert len(parsed.threads) == 4096 and all(len(f) == 512 for f in parsed.threads.values())
    assert parse_pyframes('{"threads": [{"tid": "x"}, 5, {"tid": 3, "frames": [7]}]}').threads == {3: ()}


def test_helper_in_an_attacker_mount_namespace_is_never_sourced() -> None:
    """The namespace race: a path through ``/proc/<attacker pid>/root`` that realpath and the kernel
    resolve differently, bind-mounted by the attacker and unmounted once gdb starts. No such path is
    ever opened: only the system allowlist, walked with O_NOFOLLOW from root's own ``/``."""
    with attacker_dir() as evil:
        marker = evil / "pwned"
        (evil / "libpython3.11.so.1.0").write_bytes(b"\x7fELF")
        (evil / "libpython3.11.so.1.0-gdb.py").write_text(pwn_code(marker))
        for path in evil.iterdir():
            os.chown(path, 65534, 65534)
        script = f"mount --bind {evil} /mnt && echo READY && exec sleep 120"
        with running_program([*AS_NOBODY, "unshare", "-Urm", "sh", "-c", script]) as proc:
            pid = _sleep_in(proc.pid)
            lib = f"/proc/{pid}/root/mnt/libpython3.11.so.1.0"
            assert os.path.exists(lib + "-gdb.py"), "the attacker's bind mount is visible through /proc/PID/root"
            assert python_gdb_helper(None, (lib,)) is None
            assert "not under a system directory" in (helper_problem(Path(lib + "-gdb.py"), "3.11") or "")
            auto = Path("/usr/share/gdb/auto-load") / (lib.lstrip("/") + "-gdb.py")
            assert auto in helper_candidates(None, (lib,)) and helper_problem(auto, "3.11") is not None
            argv = gdb_batch_argv("gdb", None, "core", python_gdb_helper(None, (lib,)))
            assert not any(a.startswith("source") for a in argv)
        assert not marker.exists()


def _sleep_in(pid: int, timeout: float = 60.0) -> int:
    """The ``sleep`` the attacker's shell execs after it prints READY: READY comes before the exec,
    so wait (on the process table, with a deadline) until the program or a descendant is ``sleep``."""
    import time

    import psutil

    deadline = time.monotonic() + timeout
    while True:
        root = psutil.Process(pid)
        for proc in (root, *root.children(recursive=True)):
            try:
                if proc.name() == "sleep":
                    return proc.pid
            except psutil.NoSuchProcess:
                continue
        assert time.monotonic() < deadline, f"no sleep under pid {pid} after {timeout}s"
        time.sleep(0.02)


def test_flipping_symlink_to_the_helper_never_runs(tmp_path: Path) -> None:
    """A helper symlink that the attacker flips between a root-owned file and its own code while
    root runs postmortem on the attacker's core: the attacker's code never runs."""
    with attacker_dir() as evil:
        marker = evil / "pwned"
        exe = plant_python(evil, "pass\n")
        (evil / "pwn.py").write_text(pwn_code(marker))
        trusted = tmp_path / "trusted"
        trusted.mkdir(mode=0o755)
        (trusted / "python3.11-gdb.py").write_text("pass\n")
        (evil / "crash.py").write_text(CRASHER)
        for path in evil.iterdir():
            os.chown(path, 65534, 65534)
        as_nobody([str(exe), "crash.py"], cwd=evil)
        core = _core_in(evil)
        (evil / "python3.11-gdb.py").unlink()
        flip = (f"cd {evil}; echo READY; while true; do ln -sfn {trusted}/python3.11-gdb.py python3.11-gdb.py; "
                f"ln -sfn {evil}/pwn.py python3.11-gdb.py; done")
        with running_program([*AS_NOBODY, "bash", "-c", flip]):
            for _ in range(3):
                run = triage("postmortem", str(core), "--format", "json")
                assert "Traceback" not in run.stderr, run.stderr
                assert not marker.exists(), "gdb ran the attacker's helper as root"
