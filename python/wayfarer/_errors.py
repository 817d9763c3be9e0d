"""Exceptions raised by wayfarer."""


class CompileError(ValueError):
    """A walk, sampler or mask program that does not compile.

    ``str(err)`` is every error rendered as rustc does (the line and a caret under the
    offending token). ``err.errors`` lists ``(line, column, message, help)`` for each, with
    lines and columns counted from 1; ``err.line`` and ``err.column`` are the first one's.
    """

    def __init__(self, message, errors):
        super().__init__(message)
        self.errors = [tuple(e) for e in errors]
        first = self.errors[0] if self.errors else (0, 0, message, None)
        self.line, self.column = first[0], first[1]
        self.message = first[2]
        self.help = first[3]
