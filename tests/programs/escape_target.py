"""A process whose own strings carry terminal escapes, for the bundle's text files (tests/collectors).

argv[1]: a directory. A module whose file name holds ESC and BEL is written there and imported; its
function, renamed to carry an OSC title escape, runs in a thread whose name carries a colour escape and
holds a local string with a screen-clearing one. Prints READY, then sleeps until killed.
"""

import importlib.util
import os
import sys
import threading
import time

where = sys.argv[1]
path = os.path.join(where, "evil\x1b[2Jfile\x07.py")
with open(path, "w") as handle:
    handle.write("import time\n\ndef wait(ready):\n    secret = 'local\\x1b[2Jvalue'\n    ready.set()\n"
                 "    while True:\n        time.sleep(0.05)\n    return secret\n")
spec = importlib.util.spec_from_file_location("evil_module", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
name = "wait\x1b]0;pwned\x07here"
changes = {"co_name": name, "co_qualname": name} if sys.version_info >= (3, 11) else {"co_name": name}
module.wait.__code__ = module.wait.__code__.replace(**changes)
ready = threading.Event()
threading.Thread(target=module.wait, args=(ready,), name="thread\x1b[31mred", daemon=True).start()
ready.wait(30)
print("READY", flush=True)
while True:
    time.sleep(1)
