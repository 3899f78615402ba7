"""`triage dump` and the node side of `triage collect`: get a node bundle now.

- :mod:`.agents`: the running agents of a run directory, asked for a bundle (a request file in
  each ``<host>/dump-requests/``) and waited for;
- :mod:`.targets`: the processes to collect from: the pids given (each alive and the invoker's),
  or a run directory's live ranks on this node;
- :mod:`.run`: :func:`~triage.dump.run.dump`, what `triage dump` does (ask the agents, else
  collect standalone) as one library call; the command only parses and prints.
"""
