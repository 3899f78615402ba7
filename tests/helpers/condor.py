"""HTCondor's job event log as its manual prints it, for the tests of its readers (triage.parsing.frameworks).

``MANUAL``: htcondor/htcondor's docs/users-manual/when-job-wont-run.rst ("How To Debug an Always Idle Job"): a job the
execution point evicts as soon as it starts (event 001 executing, 007 "Shadow exception!" with its message, 001
executing again), its log's events with the manual's reStructuredText indent taken off; ``MANUAL_EVICTED`` its first
two events alone (the log's last event a shadow exception)."""

from __future__ import annotations

MANUAL_EVICTED = ("001 (781.000.000) 2022-01-30 15:15:36 Job executing on host: <127.0.0.1:42089?addrs=127.0.0.1-42089>",
                  "...",
                  "007 (781.000.000) 2022-01-30 15:15:37 Shadow exception!",
                  "     Error from slot1_2@bat: FATAL:    executable file not found in $PATH",
                  "     0  -  Run Bytes Sent By Job",
                  "     0  -  Run Bytes Received By Job",
                  "...")
MANUAL = (*MANUAL_EVICTED,
          "001 (781.000.000) 2022-01-30 15:15:37 Job executing on host: <127.0.0.1:42089?addrs=127.0.0.1-42089>",
          "...")
