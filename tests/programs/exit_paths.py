"""A rank that ends by the path named in argv[1] (rank 0 only; other ranks exit 0 at once).

Used by tests/launch/test_exit_status.py: exit.json and the report must give the status the parent
really sees (waitpid), not the number the code passed: sys.exit(256) exits 0, os._exit(300) exits 44.
"""

import os
import signal
import sys
import threading

how = sys.argv[1]
if os.environ.get("RANK") != "0":
    sys.exit(0)
print(f"rank 0 ends by {how}", flush=True)
if how == "sys.exit(256)":
    sys.exit(256)
elif how == "sys.exit(false)":
    sys.exit(False)
elif how == "sys.exit(-1)":
    sys.exit(-1)
elif how == "sys.exit(2**70)":
    sys.exit(2**70)
elif how == "sys.exit(text)":
    sys.exit("stopping: bad config")
elif how == "raise SystemExit(3)":
    raise SystemExit(3)
elif how == "exit(4)":
    exit(4)  # noqa: PLR1722 - the site builtin, as a script calls it
elif how == "os._exit(300)":
    os._exit(300)
elif how == "SIGKILL":
    os.kill(os.getpid(), signal.SIGKILL)
elif how == "caught sys.exit(3)":
    try:
        sys.exit(3)
    except SystemExit:
        print("rank 0 caught its own sys.exit(3) and goes on", flush=True)
elif how == "caught sys.exit(3) in a function":
    def main() -> None:
        try:
            sys.exit(3)
        except SystemExit as exc:
            print(f"rank 0 caught sys.exit({exc.code}) in main() and returns", flush=True)

    main()
elif how == "caught sys.exit(3), then raise SystemExit(5)":
    try:
        sys.exit(3)
    except SystemExit:
        print("rank 0 caught sys.exit(3), then raises SystemExit(5)", flush=True)
    raise SystemExit(5)
elif how == "sys.exit(3) through a finally":
    try:
        sys.exit(3)
    finally:
        print("rank 0 cleans up in a finally, and its sys.exit(3) goes on", flush=True)
elif how == "KeyboardInterrupt":
    raise KeyboardInterrupt
elif how == "thread sys.exit(5)":
    worker = threading.Thread(target=sys.exit, args=(5,))   # SystemExit in a thread ends only that thread
    worker.start()
    worker.join()
