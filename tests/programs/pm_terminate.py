"""Load libpm_terminate.so (argv[1]) with ctypes and call into it: an uncaught C++ exception
escapes a noexcept function, so std::terminate aborts the process (SIGABRT)."""

import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
print("READY", flush=True)
lib.pm_throw(7)
