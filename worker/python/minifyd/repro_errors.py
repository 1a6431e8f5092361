# The errors of reading a repro file: each names the file, and the line in it where one is known.
import traceback

# What the user's code may raise, reported as the file's failure: exit() too, which would end the import.
USER_CODE_ERRORS = (Exception, SystemExit)


class ReproFileError(Exception):
    """A file that is not an after_aot repro, or whose definitions or inputs fail: the message says where."""


def where(path, error):
    """`path: line N` of the innermost frame of error's traceback in the user's file, else `path`."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == path]
    return f"{path}: line {lines[-1]}" if lines else path


def failure(path, what, error):
    """The ReproFileError for error, raised by the user's code while doing what."""
    return ReproFileError(f"{where(path, error)}: {what}: {type(error).__name__}: {error}")
