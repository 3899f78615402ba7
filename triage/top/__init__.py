"""`triage top`: the job at a glance, from its run directory (files only)."""
