"""A rank that fails with token-shaped secrets (a Sentry DSN, a bare-token URL, GitLab/npm/PyPI/Google/Stripe
keys, a cloud URL's signature) in its exception message, started with more of them in its argv and environment.

Used by tests/security/test_token_shapes.py: worker.json, exit.json and every report format must hold none.
"""

import os
import sys

print(f"rank {os.environ.get('RANK')}: argv has {len(sys.argv)} items", flush=True)
raise RuntimeError("report failed: sentry https://0123456789abcdef0123456789abcdef@o77.ingest.sentry.io/4501 "
                   "clone https://c0ffee1234567890deadbeefc0ffee1234567890@github.com/org/repo.git "
                   "gitlab glpat-EXCglpatTOKEN0123456789 npm npm_EXCnpmTOKEN0123456789abcdefghijklmno "
                   "google AIzaSyEXCgoogleKEY0123456789abcdefghijk "
                   "blob https://acct.blob.core.windows.net/c/x?sv=2022&sig=EXCazureSIG0123456789%3D")
