"""The schema ids of every file triage writes, in one place: the writers stamp them, the readers
check them. (triage.check's in-rank worker keeps its own copy: it imports nothing of triage; a test
holds the two equal.)"""

from __future__ import annotations

RUN_LAYOUT = "triage.run/1"                     # run.json of a run directory
BUNDLE_SCHEMA = "triage.bundle/1"               # manifest.json of a node bundle
CORE_SCHEMA = "triage.core/1"                   # core.json of the core collector
PYFRAMES_SCHEMA = "triage.pyframes/1"           # pystack's Python frames
TRIGGER_SCHEMA = "triage.trigger/1"             # a cluster-wide collection trigger
REPORT_SCHEMA = "triage.report/1"               # `triage report --format json`
COLLECT_SCHEMA = "triage.collect/1"             # collect.json of `triage collect`
CHECK_RESULT_FORMAT = "triage.check/1"          # a `triage check` rank's result, and its JSON output
CHECK_VERDICT_FORMAT = "triage.check-verdict/1"  # verdict.json of a check directory
TOP_SCHEMA = "triage.top/1"                     # `triage top --once --format json`
END_REPORT_SCHEMA = "triage.end_report/1"        # end_report.json: the node that printed a failed job's report
STOP_SCHEMA = "triage.stop/1"                   # <host>/stop.json: the agent's decision to stop the job
# the same decision as one record in <host>/merged.log, tagged "[<host>:triage] ", then this, then
# stop.json's JSON: a pasted merged.log tells that triage stopped the job, and with which verdict
STOP_LOG_RECORD = "triage stopped the job: "
NUMERICS_SCHEMA = "triage.numerics/1"            # numerics.json of a rank (triage.worker.numerics_record keeps a copy)
