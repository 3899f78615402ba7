"""NCCL's own output: debug lines (``lines``), a live or whole-log tracker of each communicator
(``tracker``, ``bulk``) and RAS status reports (``ras``)."""
