"""`triage check`: a worker program every rank runs, the node-side runner, and the verdict."""
