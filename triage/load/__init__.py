"""Loading: turns what a user has (run directories, bundles, Flight Recorder dumps, logs) into the
frozen evidence of :mod:`triage.model`. All file reading for ``triage report`` happens here."""
