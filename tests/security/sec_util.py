"""Helpers of the attack tests: an unprivileged attacker (uid 65534) with a directory of its own."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.helpers.paths import REPO

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
SYSTEM_PYTHON = Path("/usr/bin/python3.11")


def can_drop_privileges() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@contextlib.contextmanager
def attacker_dir(prefix: str = "sec-attacker-") -> Iterator[Path]:
    """A directory under /tmp that uid 65534 owns (what a local user can make); removed at the end."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def as_nobody(argv: Sequence[str], cwd: Path | None = None, timeout: float = 60.0,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as uid/gid 65534 with no supplementary groups, cores enabled."""
    shell = "ulimit -c unlimited; exec \"$@\""
    return subprocess.run([*AS_NOBODY, "bash", "-c", shell, "bash", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)


def nobody_popen(argv: Sequence[str], cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> list[str]:
    """The argv that starts ``argv`` as uid 65534 (for support.running_program)."""
    del cwd, env
    return [*AS_NOBODY, *argv]


def triage(*args: str, env: dict[str, str] | None = None, timeout: float = 120.0,
           cwd: Path | None = None, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    """The real CLI, as root (the caller), in a subprocess."""
    return subprocess.run([sys.executable, "-m", "triage", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or REPO, env={**os.environ, **(env or {})}, check=False, stdin=stdin)


def plant_python(where: Path, helper_code: str) -> Path:
    """The attacker's copy of the system python3.11 and, next to it, a ``python3.11-gdb.py`` that
    runs ``helper_code`` when gdb sources it. Returns the copy."""
    exe = where / "python3.11"
    shutil.copy2(SYSTEM_PYTHON, exe)
    (where / "python3.11-gdb.py").write_text(helper_code, encoding="utf-8")
    for path in (exe, where / "python3.11-gdb.py"):
        os.chown(path, NOBODY, NOBODY)
    return exe


def pwn_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('ran as uid %d' % __import__('os').getuid())\n"
