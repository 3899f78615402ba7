"""PyTorch Flight Recorder dumps: one entry (``entries``), a whole dump (``parse``) and the compact
per-group history for thousands of ranks (``compact``)."""
