"""Redaction of a long hostile text: every rule must read it in one pass (docs/security.md).

A local user's process can hold a 1 MB argument or environment value that root's ``triage collect``
redacts; each shape below repeats a piece that starts a rule's match, so a rule tried from every
position of a run (quadratic) shows as minutes. Prints the seconds of two passes per shape (the text,
and the text followed by ``@h``), slowest first.

    python bench/bench_redaction.py [--bytes 1000000]
"""

from __future__ import annotations

import argparse
import time

from triage.redact import redact_text

PIECES = ["glpat-", "a-", "a.", "eyJ-", "eyJa.", "--a", "-a ", "a://", "a://b", "https://x", "x@", "?sig=",
          "wandb login ", "token", "token-", "TOKEN=", "a=", "'a':", "'token'", "\\n", "password ", "Bearer ",
          "hooks", "/webhooks/", "sk-", "hf_", "ghp_", "AKIA", "-----BEGIN A-----", "a:", "X-Key:", "login x ", "//",
          "dapi", "AIza", "r8_", "npm_", "pypi-", "xapp-", "sk_live_", "https://a@", "a@b:", "X-token", "X-a-", "a = ",
          "/webhooks/ ", "authorauthor-", "'a': '", "a=b=", "--a x "]
HEADS = ["X-", "--", "a-"]          # followed by one long run of "token"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000)
    size = parser.parse_args().bytes
    texts = {repr(p): p * (size // len(p)) for p in PIECES}
    texts.update({f"{h!r} + 'token' * n": h + "token" * (size // 5) for h in HEADS})
    rows = []
    for name, text in texts.items():
        started = time.perf_counter()
        redact_text(text)
        redact_text(text + "@h")
        rows.append((time.perf_counter() - started, name))
    for seconds, name in sorted(rows, reverse=True):
        print(f"{seconds:8.3f} s  {name}")
    print(f"{len(rows)} shapes of {size} bytes")


if __name__ == "__main__":
    main()
