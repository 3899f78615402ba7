"""A rank that fails with secrets in its exception message, started with secrets in its argv.

Used by tests/security/test_secrets.py: worker.json (argv), exit.json (the exception) and every report
format must hold none of them. One rank, no process group: the failure is the exception itself.
"""

import os
import sys

print(f"rank {os.environ.get('RANK')}: argv has {len(sys.argv)} items", flush=True)
raise RuntimeError("upload failed: token=tokVALUE7788 via https://eve:excpass55@store.example/x "
                   "and Authorization: Bearer excbearer0123456789 with DB_PASSWORD=excdb56 aws AKIAEXCEXAMPLE123456")
