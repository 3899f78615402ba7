"""`triage postmortem` on real cores: C threads, assert, C++ std::terminate, torch + ctypes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import PROGRAMS
from tests.helpers.postmortem import crash, report_json, triage_run
from tests.helpers.processes import running_program
from triage.analysis.crash import classification_json, records
from triage.analysis.crash.records import classify_core
from triage.bundle import CollectorStatus
from triage.collectors.core import collect_core
from triage.collectors.gdbrun import find_gdb, gdb_batch_argv, run_gdb
from triage.load import cores as cores_loader
from triage.load.cores import bundle_core_outputs
from triage.load.crash_records import core_record
from triage.parsing.elfcore import read_core_notes
from triage.parsing.gdb import parse_gdb_backtrace
from triage.postmortem.locate import find_core
from triage.postmortem.run import run_postmortem


def _details(data: dict) -> dict:
    items = data["extra"]["postmortem"]
    assert items, data
    return items[0]


def test_multithreaded_c_crash_names_thread_frame_and_library(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    notes = read_core_notes(result.core)
    assert notes.pid == result.pid and notes.signal_name == "SIGSEGV"
    assert notes.executable() == str(built["pm_mt_crash"])
    assert len(notes.thread_ids) == 3 and notes.faulting_tid != result.pid
    assert find_core(crash_dir, result.pid).path == result.core
    assert find_core(crash_dir, result.pid + 1).path is None

    run, data = report_json(str(result.core))
    assert run.returncode == 1, run.stderr
    assert data["schema"] == "triage.report/1" and data["verdict"]["kind"] == "crash"
    item = _details(data)
    assert item["kind"] == "segfault_user_extension" and item["signal"] == "SIGSEGV"
    assert item["faulting_thread"] == notes.faulting_tid
    assert item["crash_frame"].startswith("store_result (pm_mt_crash.c:")
    assert item["library"] == "pm_mt_crash"
    assert item["top_frames"][1].startswith("crasher ")
    assert {t["role"] for t in item["threads"]} >= {"main", "other"}
    assert any("not a Python program" in n for n in item["notes"])
    assert "core of a non-Python program" in run.stderr
    assert item["python_method"] == "none"
    # the kernel log names the faulting thread (cores keep no thread names)
    if item["kernel_events"]:
        assert item["faulting_name"] == "pm_crasher"
    assert "store_result" in data["verdict"]["summary"]
    assert data["findings"][0]["root_cause"] is True


def test_assertion_abort(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_assert"])], crash_dir)
    run, data = report_json(str(result.core))
    assert run.returncode == 1, run.stderr
    item = _details(data)
    assert item["kind"] == "assertion_abort" and item["signal"] == "SIGABRT"
    assert item["crash_frame"].startswith("check_shape (pm_assert.c:")
    assert "__assert_fail" in item["next_step"]


def test_cpp_terminate_through_ctypes_with_python_frames(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([sys.executable, str(PROGRAMS / "pm_terminate.py"), str(built["libpm_terminate.so"])], crash_dir)
    assert "terminate called after throwing" in result.output
    run, data = report_json(str(result.core))
    assert run.returncode == 1, run.stderr
    item = _details(data)
    assert item["kind"] == "uncaught_cpp_exception" and item["signal"] == "SIGABRT"
    assert item["crash_frame"].startswith("pm::validate_batch (pm_terminate.cpp:")
    assert item["library"] == "libpm_terminate.so"
    assert item["faulting_role"] == "main_python"
    # py-bt only from a system helper (docs/security.md); else pystack, which runs nothing of the target
    assert item["python_method"] in ("py-bt", "pystack", "none")
    if item["python_method"] == "pystack":
        assert item["python_frames"][0].startswith(f"{PROGRAMS / 'pm_terminate.py'}:")
    if item["python_method"] == "py-bt":
        assert item["python_frames"][0].startswith(f"{PROGRAMS / 'pm_terminate.py'}:")
        assert item["stack_top"].startswith("pm_terminate.py:")


def test_torch_process_segfault_via_ctypes(torch_core) -> None:  # type: ignore[no-untyped-def]
    run = triage_run("postmortem", str(torch_core.core), "--width", "120")
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    first_line = run.stdout.splitlines()[1]
    assert "segfault_user_extension" in first_line and "SIGSEGV" in run.stdout
    assert "called from string_at" in run.stdout
    assert "Crash details" in run.stdout and "main_python" in run.stdout

    _run, data = report_json(str(torch_core.core))
    item = _details(data)
    assert item["kind"] == "segfault_user_extension"
    assert item["library"] == "libc.so.6"
    assert any("libtorch" in lib or "torch" in lib for lib in _mapped(torch_core.core))
    if item["python_method"] == "py-bt":
        assert item["stack_top"].startswith("pm_torch_segv.py:") and "crash_in_native_code" in item["stack_top"]


def _mapped(core: Path) -> tuple[str, ...]:
    return read_core_notes(core).mapped_paths()


def test_gdb_parser_reads_live_gdb_output_with_thread_names(built: dict[str, Path], crash_dir: Path) -> None:
    """The same parser reads `gdb -p` output (live threads have names; cores do not)."""
    source = (PROGRAMS / "pm_mt_crash.c").read_text()
    sleeper = crash_dir / "sleeper.c"
    sleeper.write_text(source.replace("usleep(50000);", "sleep(600);"))
    subprocess.run(["gcc", "-g", "-O0", "-pthread", str(sleeper), "-o", str(crash_dir / "sleeper")], check=True)
    gdb = find_gdb()
    assert gdb is not None
    with running_program([str(crash_dir / "sleeper")]) as proc:
        time.sleep(0.2)   # let both threads set their names
        run = run_gdb(gdb_batch_argv(gdb, None, str(proc.pid), core=False), timeout=60)
    bt = parse_gdb_backtrace(run.text)
    assert bt.attached_pid == proc.pid
    names = {t.name for t in bt.threads}
    assert {"pm_crasher", "pm_idle"} <= names
    crasher = next(t for t in bt.threads if t.name == "pm_crasher")
    assert "crasher" in crasher.functions()
    assert any(f.library and f.library.endswith("libc.so.6") for f in crasher.frames)


def test_core_collector_into_a_bundle_and_bundle_classification(built: dict[str, Path], crash_dir: Path) -> None:
    """The interface `triage launch`/`triage report` use: collect_core into a bundle, classify it back."""
    result = crash([str(built["pm_assert"])], crash_dir)
    bundle = crash_dir / "bundle"
    record = collect_core(result.core, bundle, rank=3)
    assert record.status is CollectorStatus.OK, record
    assert record.name == "core" and record.rank == 3 and record.pid == result.pid
    assert set(record.files) == {"rank-3/core.json", "rank-3/gdb-core.txt"}
    [output] = bundle_core_outputs(bundle)
    item = classify_core(core_record(output, output.info.get("rank"), output.host), ())
    assert item.rank == 3 and item.kind.value == "assertion_abort"

    bogus = crash_dir / "not-a-core"
    bogus.write_bytes(b"\x7fELF" + b"\0" * 100)
    failed = collect_core(bogus, bundle, rank=4)
    assert failed.status is CollectorStatus.FAILED and "not-a-core" in (failed.error or "")


def test_dmesg_file_names_the_faulting_thread_and_gives_the_time(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    tid = read_core_notes(result.core).faulting_tid
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    # The same thread id's other segfault 900 s away: before the crash, or after it (a kernel log read later)
    # on a machine up for less than that (a fresh CI machine: the kernel's clock never goes below 0).
    far = uptime - 900 if uptime > 1000 else uptime + 900
    kernel_log = crash_dir / "kern.log"
    kernel_log.write_text(
        f"[{uptime - 1:12.6f}] worker_thread7[{tid}]: segfault at 0 ip 000055d0 sp 00007f00 error 6 in x[1000+1000]\n"
        f"[{far:12.6f}] other[{tid}]: segfault at 0 ip 000055d0 sp 00007f00 error 6 in x[1000+1000]\n")
    run, data = report_json(str(result.core), "--dmesg", str(kernel_log))
    assert run.returncode == 1, run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["faulting_name"] == "worker_thread7"
    assert item["time_source"] == "kernel log"
    assert len(item["kernel_events"]) == 1          # the far line is outside the correlation window


def test_postmortem_classifies_each_core_once(built: dict[str, Path], crash_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two real cores through run_postmortem: gdb's output of each is parsed exactly once, by the
    loader, and classified exactly once."""
    cores = [crash([str(built["pm_assert"])], crash_dir / name).core for name in ("a", "b")]
    real, real_parse = records.classify_core, cores_loader.parse_gdb_backtrace
    seen: list[object] = []
    parsed: list[str] = []

    def counted(record, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(record.core.info.get("core"))
        return real(record, *args, **kwargs)

    def counted_parse(text, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(text)
        return real_parse(text, *args, **kwargs)

    monkeypatch.setattr(records, "classify_core", counted)
    monkeypatch.setattr(cores_loader, "parse_gdb_backtrace", counted_parse)
    result = run_postmortem(cores, dmesg_text="")
    assert sorted(map(str, seen)) == sorted(str(c) for c in cores)
    assert len(parsed) == 2 and all("Thread" in text for text in parsed)
    assert len(result.classifications) == 2
    assert result.report.extra["postmortem"] == [classification_json(c) for c in sorted(
        result.classifications, key=lambda c: (c.time is None, c.time or 0.0))]


def test_a_dmesg_t_kernel_log_is_correlated_by_its_wallclock_stamps(built: dict[str, Path], crash_dir: Path) -> None:
    """A kernel log saved with `dmesg -T` (local wallclock stamps, no seconds since boot) gives the
    crash time as well as plain `dmesg` does."""
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    tid = read_core_notes(result.core).faulting_tid
    now = time.time()
    kernel_log = crash_dir / "kern-T.log"
    kernel_log.write_text("".join(
        f"[{time.strftime('%a %b %d %H:%M:%S %Y', time.localtime(when))}] worker_thread7[{tid}]: segfault at 0 "
        f"ip 000055d0 sp 00007f00 error 6 in x[1000+1000]\n" for when in (now - 1, now - 900)))
    run, data = report_json(str(result.core), "--dmesg", str(kernel_log))
    assert run.returncode == 1, run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["time_source"] == "kernel log"
    assert len(item["kernel_events"]) == 1          # the far line is outside the correlation window
    assert abs(item["time"] - (now - 1)) < 2
