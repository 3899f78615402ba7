"""Hang and stop: the node agent's monitor, its detection rules and watches, the actions it takes
(evidence, report) and the cluster-wide decision to stop the job."""
