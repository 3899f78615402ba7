"""The name of a metric a training loop logs with its value whose name ends in Error ("eval.Error: 0.3912",
"val.MeanSquaredError: 1.2e-03", "top1.Error: 29.4%"): a split's or stage's name, one dot, then the metric's; never
a Python builtin exception's type ("AssertionError: 0.7312" is an `assert x < 0.5, x` failing, the last line of its
traceback) nor a module path's exception ("pkg.errors.ToleranceError: 0.73", two dots or more)."""

from __future__ import annotations

import builtins

# Python's builtin exception types ending in Error (AssertionError, ValueError, ...): an exception, whatever follows
_BUILTIN = sorted((name for name, value in vars(builtins).items()
                   if name.endswith("Error") and isinstance(value, type) and issubclass(value, BaseException)),
                  key=len, reverse=True)
METRIC_NAME = r"[A-Za-z_]\w*\.(?!(?:" + "|".join(_BUILTIN) + r")\b)\w*Error"
