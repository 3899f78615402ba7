"""Pure crash classification: a parsed gdb backtrace plus context in, a classification out.

No I/O and no side effects on import: ``triage report`` calls these on bundles too.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from triage.lazy_regex import lazy_regex
from triage.model.backtrace import CrashLogFacts, GdbBacktrace, GdbFrame, GdbThread, PythonFrame
from triage.model.evidence import KernelEvent


class CrashKind(str, enum.Enum):
    SEGFAULT_USER_EXTENSION = "segfault_user_extension"
    SEGFAULT_NCCL = "segfault_nccl"
    SEGFAULT_CUDA_DRIVER = "segfault_cuda_driver"
    WATCHDOG_ABORT = "watchdog_abort"
    CUDA_ERROR = "cuda_error"
    PYTHON_FATAL_ERROR = "python_fatal_error"
    OOM_KILLED = "oom_killed"
    ASSERTION_ABORT = "assertion_abort"
    UNCAUGHT_CPP_EXCEPTION = "uncaught_cpp_exception"   # std::terminate without the c10d watchdog
    ABORT = "abort"                                     # SIGABRT, none of the above
    EXCEPTION_EXIT = "exception_exit"
    UNKNOWN = "unknown"


class ThreadRole(str, enum.Enum):
    MAIN_PYTHON = "main_python"
    MAIN = "main"                      # the main thread of a non-Python program
    NCCL_PROXY = "nccl_proxy"
    C10D_WATCHDOG = "c10d_watchdog"
    C10D_HEARTBEAT = "c10d_heartbeat"
    PG_CLEANUP = "pg_cleanup"
    GLOO = "gloo"
    AUTOGRAD = "autograd"
    FAULTHANDLER = "faulthandler"
    PYTHON_THREAD = "python_thread"
    OTHER = "other"


@dataclass(frozen=True)
class CrashContext:
    """What is known of a crashed process besides its stacks (its core, rank, host and signal)."""
    core_path: str | None = None
    pid: int | None = None
    rank: int | None = None
    host: str | None = None
    signal: str | None = None          # from the core notes or exit.json ("SIGSEGV")
    faulting_tid: int | None = None
    fault_address: int | None = None
    time: float | None = None          # best known crash time (banner, kernel line, core mtime)
    time_source: str | None = None
    executable: str | None = None
    kernel_events: tuple[KernelEvent, ...] = ()
    log_facts: CrashLogFacts = field(default_factory=CrashLogFacts)   # what its log tail says
    python_frames: tuple[PythonFrame, ...] = ()   # innermost first, when py-bt gave none
    python_method: str = "none"        # "py-bt" | "faulthandler.log" | "none"
    exit_code: int | None = None
    notes: tuple[str, ...] = ()        # degradations already known (stripped binary, truncated core)
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThreadInfo:
    """A thread of a crashed process, with the role its stack shows."""
    lwp: int | None
    role: ThreadRole
    name: str | None
    top: str | None


@dataclass(frozen=True)
class CrashClassification:
    """What kind of crash a process's stacks and signal show, in words."""
    kind: CrashKind
    signal: str | None
    summary: str
    next_step: str
    faulting_thread: int | None = None
    faulting_role: ThreadRole | None = None
    faulting_name: str | None = None
    crash_frame: str | None = None
    library: str | None = None         # of the crashing frame
    top_frames: tuple[str, ...] = ()
    python_frames: tuple[str, ...] = ()
    python_method: str = "none"
    stack_top: str | None = None       # innermost user Python frame, else the crashing frame
    threads: tuple[ThreadInfo, ...] = ()
    rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: float | None = None
    time_source: str | None = None
    kernel_events: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()


_ABORT_MACHINERY = lazy_regex(
    r"^(__pthread_kill\w*|pthread_kill|__GI_\w+|__GI_raise|raise|gsignal|__GI_abort|abort|__assert_fail\w*|"
    r"std::terminate|__cxxabiv1::__terminate|__gnu_cxx::__verbose_terminate_handler|__cxa_\w+|"
    r"_Unwind_\w+|std::rethrow_exception|fatal_error\w*|_Py_FatalError\w*|Py_FatalError|"
    r"faulthandler_\w+|\?\?|<signal handler called>|"
    r"std::__exception_ptr::\w+.*|__restore_rt)$"
)
_FATAL_FRAMES = ("_Py_FatalErrorFunc", "Py_FatalError", "fatal_error", "_Py_FatalErrorFormat")
_TERMINATE_FRAMES = ("std::terminate", "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler",
                     "__cxa_throw", "__cxa_rethrow")
_LIBRARY_PY = ("/lib/python3", "/site-packages/", "/dist-packages/", "<frozen ")

NEXT_STEPS = {
    CrashKind.SEGFAULT_USER_EXTENSION: "open the crashing frame's library/extension: run the rank under gdb or "
                                       "with PYTHONFAULTHANDLER=1 and check the pointers passed to it",
    CrashKind.SEGFAULT_NCCL: "check NCCL/driver versions and the network: re-run with NCCL_DEBUG=INFO and "
                             "look for the first NCCL WARN line; try the NCCL version torch was built with",
    CrashKind.SEGFAULT_CUDA_DRIVER: "check `nvidia-smi` and dmesg for Xid errors on that host; if none, "
                                    "re-run with CUDA_LAUNCH_BLOCKING=1",
    CrashKind.WATCHDOG_ABORT: "the c10d watchdog aborted on an async NCCL error or timeout: find the rank "
                              "that failed first (its log or Flight Recorder dump), this one is often collateral",
    CrashKind.CUDA_ERROR: "re-run with CUDA_LAUNCH_BLOCKING=1 to see the failing kernel, then under "
                          "`compute-sanitizer --tool memcheck` to find the bad access",
    CrashKind.PYTHON_FATAL_ERROR: "read the 'Fatal Python error' line and the Python stack; a C extension "
                                  "calling the C API without the GIL is the usual cause",
    CrashKind.OOM_KILLED: "the kernel OOM killer ended it: lower host memory use (dataloader workers, "
                          "pinned memory, batch size) or ask for more memory",
    CrashKind.ASSERTION_ABORT: "a C/C++ assertion failed: read the 'Assertion ... failed' line and the "
                               "frame that called __assert_fail",
    CrashKind.UNCAUGHT_CPP_EXCEPTION: "a C++ exception escaped (std::terminate): read the 'what()' line in "
                                      "the rank's log and the frame that threw it",
    CrashKind.ABORT: "something called abort(): read the last lines of the rank's log and the frames "
                     "below abort in the faulting thread",
    CrashKind.EXCEPTION_EXIT: "read the Python traceback in the rank's log or torchelastic error file",
    CrashKind.UNKNOWN: "read the faulting thread's backtrace and the last lines of the rank's log",
}


def thread_role(thread: GdbThread, pid: int | None) -> ThreadRole:
    names = " ".join(thread.functions())
    label = (thread.name or "").lower()
    if "ncclProxy" in names or "proxyProgress" in names or "proxyService" in names or "nccl proxy" in label:
        return ThreadRole.NCCL_PROXY
    if "heartbeatMonitor" in names or "HeartbeatMonitor" in names:
        return ThreadRole.C10D_HEARTBEAT
    if re.search(r"ProcessGroup\w*::(\w+::)*(ncclCommWatchdog|watchdog|Watchdog)", names) or "Watchdog::run" in names:
        return ThreadRole.C10D_WATCHDOG
    if re.search(r"ProcessGroup\w*::(~|shutdown|abort|destroy|.*[cC]leanup)", names):
        return ThreadRole.PG_CLEANUP
    if "gloo::" in names:
        return ThreadRole.GLOO
    if "torch::autograd::Engine::thread_init" in names or label.startswith("pt_autograd"):
        return ThreadRole.AUTOGRAD
    if "faulthandler_thread" in names:
        return ThreadRole.FAULTHANDLER
    is_main = (pid is not None and thread.lwp == pid) or "Py_BytesMain" in names or "Py_RunMain" in names
    python = any(n in names for n in ("_PyEval_EvalFrame", "PyEval_EvalCode", "Py_RunMain", "pymain_"))
    if is_main:
        return ThreadRole.MAIN_PYTHON if python or "Py_BytesMain" in names else ThreadRole.MAIN
    if python or "thread_run" in names:
        return ThreadRole.PYTHON_THREAD
    return ThreadRole.OTHER


def _frames_after_handler(frames: tuple[GdbFrame, ...]) -> tuple[GdbFrame, ...]:
    """Skip signal-handler frames (faulthandler's) so the crash frame is the one that faulted."""
    for pos in range(len(frames) - 1, -1, -1):
        if frames[pos].signal_handler:
            return frames[pos + 1:]
    return frames


_RUNTIME_LIBS = lazy_regex(r"/(libc|libpthread|libstdc\+\+|libgcc_s|libc\+\+abi|libunwind)[.-][^/]*$")


def _crash_frame(frames: tuple[GdbFrame, ...], aborted: bool = False) -> GdbFrame | None:
    """The frame that crashed; for an abort, the first frame below the abort/unwind machinery."""
    if not aborted:
        return frames[0] if frames else None
    for frame in frames:
        if _ABORT_MACHINERY.match(frame.function):
            continue
        if frame.library and _RUNTIME_LIBS.search(frame.library):
            continue
        return frame
    return frames[0] if frames else None


def _basename(path: str | None) -> str | None:
    return path.rsplit("/", 1)[-1] if path else None


def _segfault_kind(library: str | None, functions: str) -> CrashKind:
    lib = (library or "").lower()
    if "libnccl" in lib or "nccl" in functions.split(" ", 1)[0].lower():
        return CrashKind.SEGFAULT_NCCL
    if any(name in lib for name in ("libcuda.so", "libcudart", "libnvidia", "libcublas", "libcudnn")):
        return CrashKind.SEGFAULT_CUDA_DRIVER
    return CrashKind.SEGFAULT_USER_EXTENSION


def _kind(signal: str | None, funcs: tuple[str, ...], library: str | None,
          ctx: CrashContext) -> tuple[CrashKind, str | None]:
    """The crash kind and a short detail for the summary."""
    joined = " ".join(funcs)
    if any(e.kind == "oom" and (e.pid is None or e.pid == ctx.pid) for e in ctx.kernel_events):
        return CrashKind.OOM_KILLED, "killed by the kernel OOM killer"
    facts = ctx.log_facts
    if any(f in _FATAL_FRAMES for f in funcs) or (facts.fatal_python_error and not facts.fatal_is_signal):
        return CrashKind.PYTHON_FATAL_ERROR, facts.fatal_python_error
    if facts.cuda_error or any(e.kind == "xid" and (e.pid is None or e.pid == ctx.pid) for e in ctx.kernel_events):
        detail = facts.cuda_error or "GPU Xid error in the kernel log"
        if facts.watchdog_abort:
            detail += " (the c10d watchdog aborted on it)"
        return CrashKind.CUDA_ERROR, detail
    if facts.watchdog_abort or (re.search(r"ProcessGroupNCCL\w*::\w*[wW]atchdog", joined)
                                and any(t in joined for t in _TERMINATE_FRAMES)):
        return CrashKind.WATCHDOG_ABORT, "c10d watchdog abort (std::terminate on an async NCCL error)"
    if "__assert_fail" in joined or facts.assertion:
        return CrashKind.ASSERTION_ABORT, f"assertion `{facts.assertion}' failed" if facts.assertion else None
    if any(t in joined for t in _TERMINATE_FRAMES) or facts.terminate_type:
        return CrashKind.UNCAUGHT_CPP_EXCEPTION, (f"uncaught {facts.terminate_type}" if facts.terminate_type
                                                  else "uncaught C++ exception")
    if signal == "SIGABRT":
        return CrashKind.ABORT, None
    if signal in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"):
        if not funcs:
            return CrashKind.UNKNOWN, f"{signal} (no backtrace, so the faulting library is unknown)"
        return _segfault_kind(library, joined), None
    if signal is None and ctx.exit_code not in (None, 0):
        if facts.last_exception:
            name, message = facts.last_exception
            return CrashKind.EXCEPTION_EXIT, f"{name}: {message[:157] + '...' if len(message) > 160 else message}"
        return CrashKind.EXCEPTION_EXIT, f"exit code {ctx.exit_code}"
    return CrashKind.UNKNOWN, None


def _user_python_frame(frames: tuple[PythonFrame, ...]) -> str | None:
    """The innermost Python frame outside the standard library and site-packages, shortened."""
    for frame in frames:
        if not any(marker in frame.filename for marker in _LIBRARY_PY):
            return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.line} in {frame.function}"
    return None


def _caller(frames: tuple[GdbFrame, ...], frame: GdbFrame | None) -> str | None:
    """For a crash inside libc/libstdc++ (memcpy, strlen...), the first frame outside them."""
    if frame is None or not frame.library or not _RUNTIME_LIBS.search(frame.library):
        return None
    for other in frames[frames.index(frame) + 1:]:
        if other.function != "??" and not (other.library and _RUNTIME_LIBS.search(other.library)):
            lib = _basename(other.library)
            return other.function + (f" ({lib})" if lib else "")
    return None


def _who(ctx: CrashContext) -> str:
    parts = []
    if ctx.rank is not None:
        parts.append(f"rank {ctx.rank}")
    if ctx.host:
        parts.append(f"on {ctx.host}")
    if ctx.pid is not None:
        parts.append(f"(pid {ctx.pid})" if parts else f"pid {ctx.pid}")
    return " ".join(parts) or "the process"


def classify_backtrace(bt: GdbBacktrace, context: CrashContext) -> CrashClassification:
    """Classify one crashed process from its gdb backtrace (possibly empty) and context."""
    thread = bt.thread(context.faulting_tid) or bt.faulting_thread()
    frames = thread.frames if thread else ()
    after = _frames_after_handler(frames)
    signal = bt.signal or context.signal
    frame = _crash_frame(after, aborted=signal == "SIGABRT")
    library = _basename(frame.library) if frame else None
    funcs = tuple(f.function for f in frames)
    kind, detail = _kind(signal, funcs, library, context)
    role = thread_role(thread, context.pid) if thread else None
    name = thread.name if thread else None
    if thread and not name:
        name = next((e.comm for e in context.kernel_events if e.kind == "segfault" and e.pid == thread.lwp), None)
    python = thread.python_frames if thread and thread.python_frames else context.python_frames
    method = "py-bt" if thread and thread.python_frames else (context.python_method if python else "none")
    where = ""
    if frame is not None:
        where = f" in {frame.function}" + (f" ({library})" if library else "")
    py_top = _user_python_frame(python)
    py_where = f"; Python: {py_top}" if py_top else ""
    caller = _caller(after, frame)
    if caller:
        where += f" called from {caller}"
    thread_text = ""
    if thread is not None:
        thread_text = f", thread {thread.lwp}" + (f" '{name}'" if name else "") + (f" [{role.value}]" if role else "")
    what = detail or (f"{signal}" if signal else kind.value)
    verb = "failed" if kind is CrashKind.EXCEPTION_EXIT else "crashed"
    summary = f"{_who(context)} {verb}: {kind.value} - {what}{where}{thread_text}{py_where}"
    if signal and detail and signal not in summary:
        summary += f" ({signal})"
    notes = list(context.notes)
    nodebug = set(bt.no_debug_info) | {lib.path for lib in bt.libraries if not lib.debug_info}
    if frame is not None and frame.library in nodebug:
        notes.append(f"no debug info for {library} (the crashing frame's library): no source lines there; "
                     "install its -dbg/-debuginfo package for more")
    return CrashClassification(
        kind=kind, signal=signal, summary=summary, next_step=NEXT_STEPS[kind],
        faulting_thread=thread.lwp if thread else None, faulting_role=role, faulting_name=name,
        crash_frame=frame.describe() if frame else None, library=library,
        top_frames=tuple(f.describe() for f in after[:8]),
        python_frames=tuple(p.describe() for p in python[:8]), python_method=method,
        stack_top=py_top or (frame.describe() if frame else None),
        threads=tuple(ThreadInfo(t.lwp, thread_role(t, context.pid), t.name,
                                 _crash_frame(t.frames).describe() if t.frames else None)  # type: ignore[union-attr]
                      for t in bt.threads),
        rank=context.rank, host=context.host, pid=context.pid, time=context.time,
        time_source=context.time_source,
        kernel_events=tuple(e.text for e in context.kernel_events), notes=tuple(notes),
        evidence=context.evidence,
    )
