"""§3: secrets are redacted by value as well as by name, everywhere triage writes argv, environment
or tool output; ``--no-redact`` keeps them for debugging."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import running_program
from tests.security.sec_util import triage
from triage.collectors.redact import (
    REDACTED,
    is_secret_name,
    redact_argv,
    redact_env,
    redact_json,
    redact_text,
    set_redaction,
)

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SK = "sk-" + "proj-abcdefghijklmnopqrstuvwx0123"
SLACK = "xoxb-" + "123456789012-abcdefghijkl"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"

# (text as it appears, the secret that must be gone)
TEXT_CASES = [
    (f"GH_PAT={GH}", GH),
    (f"token is {GH} ok", GH),
    (f"x {PAT} y", PAT),
    (f"HF={HF}", HF),
    (f"aws {AWS}", AWS),
    (f"OPENAI {SK}", SK),
    (f"slack {SLACK}", SLACK),
    (f"jwt {JWT}", JWT),
    ("Authorization: Bearer abcdef0123456789xyz", "abcdef0123456789xyz"),
    ('"Authorization: Basic dXNlcjpodW50ZXIy\\r\\n"', "dXNlcjpodW50ZXIy"),
    ("DATABASE_URL=postgres://alice:hunter2@db.example/prod", "hunter2"),
    ("connect to https://bob:s3cr3t-pw@git.example.com/repo.git", "s3cr3t-pw"),
    ("MY_PASS=opensesame", "opensesame"),
    ("--password=letmein1", "letmein1"),
    ("--pass xyzzy42", "xyzzy42"),
    ("--token abcabc123", "abcabc123"),
    ("--api-key=k3y", "k3y"),
    ('{"secret": "shh-value"}', "shh-value"),
    ("DB_PWD=pw123", "pw123"),
    ("CREDENTIALS_FILE_CONTENT=c0ntent", "c0ntent"),
    ("SLACK_WEBHOOK_URL=https://example.com/x", "example.com/x"),
    ("posting to https://hooks.slack.com/services/T01/B02/sl4cks3cret failed", "sl4cks3cret"),
    ("NOTIFY=https://discord.com/api/webhooks/1234/d1sc0rd-s3cret", "d1sc0rd-s3cret"),
    ('"url": "https://acme.webhook.office.com/webhookb2/abc@def/IncomingWebhook/t3ams/x"', "t3ams"),
]


@pytest.mark.parametrize(("text", "secret"), TEXT_CASES)
def test_secret_values_are_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and REDACTED in out, out


def test_a_webhook_in_a_file_path_is_no_secret() -> None:
    text = 'File "/app/webhooks/views.py", line 3, in post; git hooks in .git/hooks/pre-commit'
    assert redact_text(text) == text


@pytest.mark.timeout(60)
def test_a_long_run_of_letters_before_a_scheme_is_read_in_one_pass() -> None:
    """Tried from every letter of the run, the URL-password rule was quadratic: 200 KB of letters
    before ``://`` took minutes (a process's argument or environment value, read by root's collect)."""
    text = "a" * 200_000 + "://u:pw@h/" + "b/" * 5000
    assert redact_text(text).endswith("://u:<redacted>@h/" + "b/" * 5000)


@pytest.mark.parametrize("name", ["PWD", "OLDPWD", "PATH", "KEYBOARD_LAYOUT", "GIT_AUTHOR_NAME", "SSH_AUTH_SOCK",
                                  "MASTER_ADDR", "LOCAL_RANK", "XAUTHORITY"])
def test_harmless_names_are_kept(name: str) -> None:
    assert not is_secret_name(name)
    assert redact_env({name: "/some/value"}) == {name: "/some/value"}


def test_argv_env_and_json_forms() -> None:
    argv = ["python", "train.py", "--pass", "x", "--password=p", "--token", "t0k", "--lr", "0.1",
            "postgres://u:pw@h/db", "--api-key", "--verbose"]
    out = redact_argv(argv)
    assert out == ["python", "train.py", "--pass", REDACTED, f"--password={REDACTED}", "--token", REDACTED,
                   "--lr", "0.1", f"postgres://u:{REDACTED}@h/db", "--api-key", "--verbose"]
    env = redact_env({"GH_PAT": GH, "DATABASE_URL": "mysql://a:b@c/d", "MY_PASS": "p", "HOME": "/root"})
    assert env == {"GH_PAT": REDACTED, "DATABASE_URL": f"mysql://a:{REDACTED}@c/d", "MY_PASS": REDACTED,
                   "HOME": "/root"}
    data = redact_json({"notes": {"arguments": "train.py --token abc123"}, "argv": ["x", "--secret", "s"],
                        "auth_token": "zzz", "n": 3})
    assert json.dumps(data).count(REDACTED) == 3 and "abc123" not in json.dumps(data)


def test_no_redact_turns_every_rule_off() -> None:
    set_redaction(False)
    try:
        assert redact_text(f"GH_PAT={GH}") == f"GH_PAT={GH}"
        assert redact_argv(["--pass", "x"]) == ["--pass", "x"]
    finally:
        set_redaction(True)


SECRET_PROGRAM = r"""
import sys, time
print('READY', flush=True)
deadline = time.time() + 120
with open('/dev/null', 'w') as sink:
    while time.time() < deadline:
        sink.write('GET / HTTP/1.1\r\nAuthorization: Bearer zzTOPSECRETzz0123456789\r\n'
                   'url https://carol:urlpass99@example.com/x\r\n')
        sink.flush()
        time.sleep(0.02)
"""

SECRETS = ("hunter2", GH, "opensesame", "xyzzy42", "letmein1", "tok3n-v4lue", "argvpass77",
           "zzTOPSECRETzz0123456789", "urlpass99", "d1sc0rdhook")


def _bundle_text(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


@pytest.mark.skipif(os.geteuid() != 0, reason="strace/py-spy of a child needs ptrace rights")
def test_dump_bundle_holds_no_secret(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": "postgres://alice:hunter2@db/prod", "GH_PAT": GH,
           "MY_PASS": "opensesame", "RANK": "0", "NOTIFY_URL": "https://discord.com/api/webhooks/12/d1sc0rdhook"}
    argv = [sys.executable, "-c", SECRET_PROGRAM, "--pass", "xyzzy42", "--password=letmein1",
            "--token", "tok3n-v4lue", "https://dave:argvpass77@example.com/"]
    with running_program(argv, env=env) as proc:
        run = triage("dump", "--pid", str(proc.pid), "--out", str(tmp_path / "red"), "--gdb", "always",
                     "--strace-seconds", "2", "--collector-timeout", "60", timeout=180)
        assert run.returncode == 0, run.stderr
        raw = triage("dump", "--pid", str(proc.pid), "--out", str(tmp_path / "raw"), "--gdb", "never",
                     "--strace-seconds", "0", "--no-redact", timeout=180)
        assert raw.returncode == 0, raw.stderr
    text = _bundle_text(tmp_path / "red")
    assert "strace.txt" in " ".join(p.name for p in (tmp_path / "red").rglob("*"))
    strace = "\n".join(p.read_text() for p in (tmp_path / "red").rglob("strace.txt"))
    assert "Authorization: Bearer" in strace or "Bearer" in strace, strace[:2000]
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, leaked
    assert "GH_PAT" in text and "DATABASE_URL" in text       # names are kept: the reader knows they were set
    kept = _bundle_text(tmp_path / "raw")
    assert "hunter2" in kept and GH in kept and "xyzzy42" in kept
