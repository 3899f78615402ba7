"""Reaching the nodes of a job: SLURM queries, SSH (paramiko), bounded fan-out, bundle transfer."""
