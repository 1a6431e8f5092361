# A directory written whole or not at all: its contents go into a sibling that is renamed to it at
# the end, so a reader (minify validate, a run) never sees half of one, nor what a failure left.
import contextlib
import os
import shutil
import tempfile


class OutputDirectoryError(Exception):
    """The output directory is there already, holding something."""


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


@contextlib.contextmanager
def write_directory_atomically(out_dir):
    """Yields a new directory beside out_dir to write into; it becomes out_dir when the block ends, and is
    removed if the block raises. out_dir must be absent or an empty directory (which it replaces)."""
    out_dir = os.path.abspath(out_dir)
    if os.path.lexists(out_dir) and not (os.path.isdir(out_dir) and not os.listdir(out_dir)):
        raise OutputDirectoryError(f"{out_dir}: exists and is not an empty directory")
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.", suffix=".partial", dir=parent)
    try:
        os.chmod(staging, _default_mode())  # mkdtemp's 0700 would outlive the rename
        yield staging
        os.rename(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
