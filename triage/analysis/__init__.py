"""Pure analysis over frozen dataclasses: no subprocess, no SSH, no printing in here."""
