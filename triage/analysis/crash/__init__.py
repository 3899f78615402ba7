"""Crashes, classified: the crash records the loaders parsed (triage.load.crash_records) in, the
crash kind, its summary and next step out, and the crash report of ``triage postmortem``.

- :mod:`.classify`: one crashed process from its parsed backtrace and context (pure rules);
- :mod:`.records`: each loaded :class:`~triage.model.evidence.CrashRecord` classified (cores with
  their rank's files, ranks without a core), and a run directory's records as report events;
- :mod:`.report`: the crash report (the first crash is the root cause) and its findings.
"""

from triage.analysis.crash.classify import (
    CrashClassification,
    CrashContext,
    CrashKind,
    ThreadInfo,
    ThreadRole,
    classify_backtrace,
    thread_role,
)
from triage.analysis.crash.records import (
    CrashAnalysis,
    OtherRank,
    analyse_crashes,
    classify_core_record,
    crash_record_events,
)
from triage.analysis.crash.report import classification_json, crash_analysis_report, crash_findings, crash_report

__all__ = ["CrashAnalysis", "CrashClassification", "CrashContext", "CrashKind", "OtherRank", "ThreadInfo",
           "ThreadRole", "analyse_crashes", "classification_json", "classify_backtrace", "classify_core_record",
           "crash_analysis_report", "crash_findings", "crash_record_events", "crash_report", "thread_role"]
