"""The one exception type that ``core`` raises for bad input."""


class InputError(ValueError):
    """Input that cannot be used, with a message a user can act on.

    Every public ``core`` function validates its arguments at the edge and raises this
    (never a bare ``ValueError``, ``ZeroDivisionError`` or a silent NaN). The message names
    the offending parameter and value, e.g. ``"tp must be a whole number >= 0, got -3"``,
    so the command line and the GUI can show it unchanged.
    """
