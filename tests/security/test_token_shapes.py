"""Redaction of the secrets session 38 left out: Sentry DSNs (``https://<key>@o1.ingest.sentry.io/2``,
``SENTRY_DSN``), any URL whose userinfo is a bare token (no ``:password``), and more token shapes
(GitLab ``glpat-``, npm ``npm_``, PyPI ``pypi-``, Google ``AIza``, Stripe ``sk_live_``, Slack ``xapp-``,
Replicate ``r8_``, Databricks ``dapi``, a signed URL's ``sig=``/``X-Amz-Signature=``, ``wandb login KEY``).

Held on real processes: a torchrun job whose argv, environment and exception carry them (worker.json,
exit.json, run.json, node.json, every report format) and ``triage dump`` of a live process (proc.json's
argv and environment). The rules stay linear: a 1 MB argument is read in one pass.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.launch import TORCHRUN, job_env, launch_argv, run_launch
from tests.helpers.paths import PROGRAMS
from tests.helpers.processes import running_program
from tests.security.sec_util import triage
from triage.redact import REDACTED, is_secret_name, redact_argv, redact_env, redact_text

DSN_KEY = "0123456789abcdef0123456789abcdef"
DSN = f"https://{DSN_KEY}@o77.ingest.sentry.io/4501"
BARE = "c0ffee1234567890deadbeefc0ffee1234567890"
GLPAT = "glpat-" + "xYz0123456789abcdefGH"
NPM = "npm_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
PYPI = "pypi-" + "AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
STRIPE = "sk_live_" + "51H0abcdefGHIJKLmnopQRST"
XAPP = "xapp-" + "1-A0123456789-0123456789012-abcdef0123"
REPLICATE = "r8_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"
DATABRICKS = "dapi" + "0123456789abcdef0123456789abcdef"
WANDB = "0123456789abcdef0123456789abcdef01234567"

# (text as it appears, the secret that must be gone)
CASES = [
    (f"Sentry is attached to DSN {DSN}", DSN_KEY),
    (f"SENTRY_DSN={DSN}", DSN_KEY),
    (f"git clone https://{BARE}@github.com/org/repo.git", BARE),
    ("fetch https://oauth2token9876543210@gitlab.example.com/x", "oauth2token9876543210"),
    ("pull from https://shorttok1@git.example.com/x.git", "shorttok1"),   # http(s): a bare user is basic auth
    (f"redis://{BARE}@cache:6379/0", BARE),                               # any scheme: a long user with a digit
    (f"GitLab {GLPAT}", GLPAT),
    (f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    (f"twine upload -p {PYPI}", PYPI),
    (f"maps key {GOOGLE} denied", GOOGLE),
    (f"stripe {STRIPE}", STRIPE),
    (f"slack app {XAPP}", XAPP),
    (f"replicate {REPLICATE}", REPLICATE),
    (f"databricks {DATABRICKS}", DATABRICKS),
    ("GET https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=AzUrEsIg0123%2Bx%3D&se=2026", "AzUrEsIg0123"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=f00dbabe0123456789&x=1", "f00dbabe0123456789"),
    ("https://storage.googleapis.com/b/o?X-Goog-Signature=beef0123456789abcd", "beef0123456789abcd"),
    (f"+ wandb login {WANDB}", WANDB),
    (f"$ wandb login --relogin {WANDB}", WANDB),
    ("docker run --env=HF_TOKEN=envtok3n9 img", "envtok3n9"),     # a name that is no secret's swallows none
    ("a = b = c; api_key = cfgk3y77", "cfgk3y77"),
]
KEPT = [
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "postgres://postgres@localhost:5432/db",
    "https://github.com/org/repo/commit/0123456789abcdef0123456789abcdef01234567",
    "mail alice@example.com about https://example.com/a?b=1&sig_level=3",
    "wandb: logged in as alice; run wandb login to switch",
    "ValueError: user@host:22 unreachable",
]


@pytest.mark.parametrize(("text", "secret"), CASES)
def test_token_shapes_and_bare_userinfo_are_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and REDACTED in out, out


@pytest.mark.parametrize("text", KEPT)
def test_urls_and_hashes_without_a_secret_are_kept(text: str) -> None:
    assert redact_text(text) == text


def test_a_dsn_variable_and_a_wandb_login_argv_are_redacted() -> None:
    assert is_secret_name("SENTRY_DSN") and is_secret_name("DATABASE_DSN")
    env = redact_env({"SENTRY_DSN": DSN, "GIT_REMOTE": f"https://{BARE}@github.com/x", "HOME": "/root"})
    assert env == {"SENTRY_DSN": REDACTED, "GIT_REMOTE": f"https://{REDACTED}@github.com/x", "HOME": "/root"}
    assert redact_argv(["wandb", "login", WANDB]) == ["wandb", "login", REDACTED]
    assert redact_argv(["/usr/bin/wandb", "login", "--relogin", WANDB]) == ["/usr/bin/wandb", "login", "--relogin",
                                                                              REDACTED]
    assert redact_argv(["git", "login", "x"]) == ["git", "login", "x"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", ["a" * 1_000_000 + "://", "a://" + "b" * 1_000_000, "a://b" * 200_000,
                                   "https://" + "x1" * 500_000, "?sig=" * 200_000, "wandb login " * 80_000,
                                   "glpat-" * 160_000, "x@" * 500_000])
def test_a_1_mb_argument_is_read_in_one_pass(shape: str) -> None:
    """Each rule scans once: a 1 MB argument or environment value (a local user's process can hold one,
    root's ``triage collect`` reads it) costs well under a second, not minutes. The figure is printed."""
    started = time.perf_counter()
    redact_argv([shape])
    redact_text(shape + "@h")
    print(f"{shape[:12]!r}: {time.perf_counter() - started:.3f} s")


ARGV = [f"--sentry-dsn={DSN}", f"https://{BARE}@github.com/o/r.git", GLPAT, NPM, PYPI, GOOGLE, STRIPE, XAPP,
        REPLICATE, DATABRICKS, "https://a.blob.core.windows.net/c?sig=ArgvAzureSig012345"]
ARGV_SECRETS = (DSN_KEY, BARE, GLPAT, NPM, PYPI, GOOGLE, STRIPE, XAPP, REPLICATE, DATABRICKS, "ArgvAzureSig012345")
EXC_SECRETS = ("0123456789abcdef0123456789abcdef", "c0ffee1234567890deadbeefc0ffee1234567890",
               "glpat-EXCglpatTOKEN0123456789", "npm_EXCnpmTOKEN0123456789abcdefghijklmno",
               "AIzaSyEXCgoogleKEY0123456789abcdefghijk", "EXCazureSIG0123456789")
ENV_SECRETS = {"SENTRY_DSN": "https://feedface0123456789feedface0123@o9.ingest.sentry.io/9",
               "GIT_REMOTE": "https://envBareTok0123456789@github.com/o/r.git", "NPM_CONFIG_REGISTRY_AUTH": NPM}


def _texts(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {str(p): p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.name not in skip}


def _leaks(texts: dict[str, str], secrets: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(secret, path) for path, text in texts.items() for secret in secrets if secret in text]


def test_launch_files_and_reports_hold_no_token_shaped_secret(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "1", str(PROGRAMS / "sec_token_shapes_raise.py"), *ARGV]
    finished = run_launch(launch_argv(run_dir, job, host="secnode"), job_env(**ENV_SECRETS), run_dir, timeout=180)
    assert finished.returncode != 0, finished.stderr
    texts = _texts(run_dir, skip=("output.log", "merged.log", "launcher.log"))   # the job's own output: verbatim
    texts["the agent's own lines"] = finished.stderr
    assert {"run.json", "worker.json", "exit.json"} <= {Path(p).name for p in texts}
    assert "RuntimeError" in next(t for p, t in texts.items() if p.endswith("exit.json"))
    for fmt in ("text", "json", "html"):
        out = tmp_path / f"report.{fmt}"
        run = triage("report", str(run_dir), "--format", fmt, "-o", str(out))
        assert run.returncode == 1, run.stderr
        texts[str(out)] = out.read_text()
        texts[f"stdout {fmt}"] = run.stdout + run.stderr
    assert "o77.ingest.sentry.io" in texts[str(tmp_path / "report.text")]   # the host is kept, the key is not
    leaked = _leaks(texts, ARGV_SECRETS + EXC_SECRETS + tuple(ENV_SECRETS.values()))
    assert not leaked, leaked


SLEEPER = "import time; print('READY', flush=True); time.sleep(120)"


def test_a_dumped_process_argv_and_environment_hold_no_token_shaped_secret(tmp_path: Path) -> None:
    env = {**os.environ, "RANK": "0", **ENV_SECRETS}
    with running_program([sys.executable, "-c", SLEEPER, *ARGV], env=env) as proc:
        run = triage("dump", "--pid", str(proc.pid), "--out", str(tmp_path / "red"), "--gdb", "never",
                     "--strace-seconds", "0", "--collector-timeout", "60", timeout=180)
        assert run.returncode == 0, run.stderr
    texts = _texts(tmp_path / "red")
    proc_json = "\n".join(t for p, t in texts.items() if p.endswith("proc.json"))
    assert "SENTRY_DSN" in proc_json and "GIT_REMOTE" in proc_json, proc_json[:2000]   # names kept
    leaked = _leaks(texts, ARGV_SECRETS + tuple(ENV_SECRETS.values()) + ("envBareTok0123456789",))
    assert not leaked, leaked
