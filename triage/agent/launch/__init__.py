"""Launching and following the job: the supervisor loop, the launcher's environment, the run
directory, the log pump and tagger, the ranks' status files and the processes the job started."""
