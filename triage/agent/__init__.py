"""The node agent: runs beside the job on each node (``triage launch``)."""
