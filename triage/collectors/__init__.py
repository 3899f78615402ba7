"""Evidence collectors: each writes raw tool output into a node bundle (see triage.bundle).

``triage.collectors.node_bundle.collect_node_bundle`` runs all of them for every local rank in
parallel; ``triage.collectors.discover`` finds a job's ranks on a node without an agent.
"""
