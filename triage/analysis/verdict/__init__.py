"""Where the verdict is decided: one ordered list of named rules (:mod:`.rules`), the engine that
runs them and its final steps (:mod:`.engine`), and the headline wording (:mod:`.headline`).

This ``__init__`` imports nothing: the analysis modules that word a verdict import
:mod:`.headline`, and the engine imports them."""
