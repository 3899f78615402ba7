"""Log text as evidence: the scan of a log (``text``), its per-rank state (``scan``), launcher and NCCL
records (``records``), the job size it states (``facts``), the conclusions (``finish``, over its parts ``endings``,
``rank_waits``, ``owners``, ``own_words`` and ``collateral``) and logs of hundreds of MB (``large``)."""
