"""The in-worker agent: loaded into every worker of a ``triage launch`` through a sitecustomize.

It is a no-op outside ``triage launch`` and never imports torch (it only looks at
``torch.distributed`` when the user already imported and initialised it).
"""
