"""§7: redaction everywhere triage writes, with one set of rules (triage.redact).

33 secrets are planted where a job's owner might keep them: the job's argv (``--password=``, a
password in a URL, ``--token x``), its exception message (``token=...``, a URL password, a bearer
header), and what strace sees the process read and write (``key = value`` config lines, a netrc,
a PEM private key, ``X-Api-Key:`` headers, tokens by shape). None may appear in a file triage writes
(run.json, node.json, worker.json, exit.json, every report format, the bundle with strace output).
The ranks' own output.log/merged.log are the user's output and stay verbatim.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import triage.redact as rules
import triage.worker.redact as worker_rules
from tests.helpers.launch import TORCHRUN, job_env, launch_argv, run_launch
from tests.helpers.paths import PROGRAMS
from tests.helpers.processes import running_program
from tests.security.sec_util import triage
from triage.redact import REDACTED, redact_text

GH = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
PEM_BODY = "MIIEowIBAAKCAQEAsecretPEMbody1234567890abcdefABCDEF"
HF = "hf_" + "argvHFtoken0123456789ab"
AKIA = "AKIA" + "ARGVEXAMPLE12345"
SK = "sk-" + "argvOPENAIkey0123456789"
SLACK = "xoxb-" + "111122223333-argvslack"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJhcmd2IjoiMSJ9.argvJWTsig0123456789"
ARGV = ["--password=argvpw11", "https://x:argvurl22@h/", "--token", "argvtok33", "--api-key=argvkey44",
        "--db-pass", "argvdb55", f"HF_TOKEN={HF}", AKIA, SK, SLACK, JWT, "mysql://root:argvmy66@db/x",
        "--secret", "argvsec77"]
ARGV_SECRETS = ("argvpw11", "argvurl22", "argvtok33", "argvkey44", "argvdb55", HF, AKIA, SK, SLACK, JWT,
                "argvmy66", "argvsec77")
EXC_SECRETS = ("tokVALUE7788", "excpass55", "excbearer0123456789", "excdb56", "AKIA" + "EXCEXAMPLE123456")
STREAM_SECRETS = ("awsSECRETkey9", "netrcPW66", PEM_BODY, "apikeyHDR77", "cfgtoken88", GH,
                  "pypiPASS99", "authHDR4455667788", "cookieVAL12", "strpw90", "hf_strHFtoken0123456789ab",
                  "strAUTH12345", "AKIA" + "STRMEXAMPLE12345", "strBEARER6789012", "strPW34", "strSK78")
ALL_SECRETS = ARGV_SECRETS + EXC_SECRETS + STREAM_SECRETS
NEW_FORMS = [
    ("aws_secret_access_key = awsSECRETkey9", "awsSECRETkey9"),
    ('read(3, "[default]\\naws_secret_access_key = awsSECRETkey9\\n", 4096) = 40', "awsSECRETkey9"),
    ("machine pypi.org login me password netrcPW66", "netrcPW66"),
    ('read(4, "machine h\\n  login me\\n  password netrcPW66\\n", 64)', "netrcPW66"),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY),
    (f'write(1, "-----BEGIN OPENSSH PRIVATE KEY-----\\n{PEM_BODY}\\n-----END', PEM_BODY),
    ("X-Api-Key: apikeyHDR77", "apikeyHDR77"),
    ('sendto(3, "GET / HTTP/1.1\\r\\nX-Api-Key: apikeyHDR77\\r\\nHost: h\\r\\n", 50)', "apikeyHDR77"),
    ("Cookie: session=cookieVAL12", "cookieVAL12"),
    ("password = pypiPASS99", "pypiPASS99"),
]


@pytest.mark.parametrize(("text", "secret"), NEW_FORMS)
def test_new_forms_are_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and REDACTED in out, out
    assert worker_rules.redact_text(text) == out


@pytest.mark.parametrize("text", ["KeyError: 'lr'", "RuntimeError: Incorrect password for user bob",
                                  "X-Request-Id: 42", "learning_rate = 0.1", "-----END RSA PRIVATE KEY-----"])
def test_harmless_lines_are_kept(text: str) -> None:
    assert redact_text(text) == text


def test_33_distinct_secrets_are_planted() -> None:
    assert len(set(ALL_SECRETS)) == len(ALL_SECRETS) >= 33


def test_the_rules_have_one_home_and_one_switch() -> None:
    """triage.redact re-exports the in-worker agent's rules (that package may import nothing of triage):
    one set of patterns, and --no-redact turns off both."""
    assert rules.redact_text is worker_rules.redact_text and rules.redact_argv is worker_rules.redact_argv
    try:
        rules.set_redaction(False)
        assert not worker_rules.redaction_enabled()
    finally:
        rules.set_redaction(True)


STREAM_PROGRAM = r"""
import time
print('READY', flush=True)
# one write each (strace shows the first bytes of a write); a key file is read whole
writes = ['[default]\naws_secret_access_key = awsSECRETkey9\n',
          'machine pypi.org login me password netrcPW66\n',
          '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretPEMbody1234567890abcdefABCDEF\n-----END RSA',
          'X-Api-Key: apikeyHDR77\r\n', 'Authorization: Basic authHDR4455667788\r\n',
          'Cookie: session=cookieVAL12\r\n', 'token = cfgtoken88\n',
          'GH ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2\n', '[pypi]\npassword = pypiPASS99\n',
          'db mysql://u:strpw90@h/db\n', 'HF hf_strHFtoken0123456789ab\n', 'X-Auth-Token: strAUTH12345\r\n',
          'aws_access_key_id = AKIASTRMEXAMPLE12345\n', 'Authorization: Bearer strBEARER6789012\r\n',
          'run --password=strPW34\n', 'secret_key = strSK78\n']
deadline = time.time() + 120
with open('/dev/null', 'w') as sink:
    while time.time() < deadline:
        for data in writes:
            sink.write(data)
            sink.flush()
        time.sleep(0.02)
"""


def _files_text(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {str(p): p.read_text(errors="replace") for p in root.rglob("*")
            if p.is_file() and p.name not in skip}


def _leaks(texts: dict[str, str], secrets: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(secret, path) for path, text in texts.items() for secret in secrets if secret in text]


@pytest.mark.skipif(os.geteuid() != 0, reason="strace of another process needs ptrace rights")
def test_strace_and_bundle_hold_none_of_the_stream_secrets(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", STREAM_PROGRAM, *ARGV]
    with running_program(argv, env={**os.environ, "RANK": "0"}) as proc:
        run = triage("dump", "--pid", str(proc.pid), "--out", str(tmp_path / "red"), "--gdb", "never",
                     "--strace-seconds", "2", "--collector-timeout", "60", timeout=180)
        assert run.returncode == 0, run.stderr
    texts = _files_text(tmp_path / "red")
    strace = "\n".join(t for p, t in texts.items() if p.endswith("strace.txt"))
    assert "X-Api-Key" in strace and "aws_secret_access_key" in strace, strace[:3000]
    assert not _leaks(texts, STREAM_SECRETS + ARGV_SECRETS)


def test_launch_run_files_and_every_report_format_hold_no_secret(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "1", str(PROGRAMS / "sec_secret_raise.py"), *ARGV]
    finished = run_launch(launch_argv(run_dir, job, host="secnode"),
                          job_env(), run_dir, timeout=180)
    assert finished.returncode != 0, finished.stderr
    own = ("output.log", "merged.log", "launcher.log")          # the ranks' and torchrun's own output: verbatim
    texts = _files_text(run_dir, skip=own)
    assert "verdict: EXCEPTION" in finished.stderr and "RuntimeError" in finished.stderr, finished.stderr
    texts["the agent's own lines"] = finished.stderr      # its verdict line quotes the exception
    names = {Path(p).name for p in texts}
    assert {"run.json", "node.json", "worker.json", "exit.json"} <= names, sorted(names)
    assert "RuntimeError" in next(t for p, t in texts.items() if p.endswith("exit.json"))
    for fmt in ("text", "json", "html"):
        out = tmp_path / f"report.{fmt}"
        run = triage("report", str(run_dir), "--format", fmt, "-o", str(out))
        assert run.returncode == 1, run.stderr
        texts[str(out)] = out.read_text()
        texts[f"stdout {fmt}"] = run.stdout + run.stderr
    assert "RuntimeError" in texts[str(tmp_path / "report.text")]
    leaked = _leaks(texts, ARGV_SECRETS + EXC_SECRETS)
    assert not leaked, leaked
    merged = "\n".join(p.read_text(errors="replace") for p in run_dir.rglob("output.log"))
    assert "tokVALUE7788" in merged          # the rank's own output is kept verbatim
