"""Files written whole or not at all: through a temporary file and a rename, in large blocks
when written piece by piece, and probed for writability before a run begins."""

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


class _Spool:
    """Collects pieces of text and writes them to a binary file as UTF-8 in large blocks."""

    BLOCK = 1 << 16

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.pieces: list[str] = []
        self.size = 0

    def emit(self, piece: str) -> None:
        self.pieces.append(piece)
        self.size += len(piece)
        if self.size >= self.BLOCK:
            self.flush()

    def flush(self) -> None:
        self.handle.write("".join(self.pieces).encode("utf-8"))
        self.pieces.clear()
        self.size = 0


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(
    path: str | os.PathLike[str], text: str | Callable[[Callable[[str], object]], None]
) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename; ``text`` may be a
    writer that hands its pieces to the ``emit`` it is given (see :func:`write_evaluation`).

    A file already at ``path`` survives any failure. The parent directory must exist.
    """
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; the artifact gets the mode an ordinary file would.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:  # bytes: no newline translation on any platform
            if isinstance(text, str):
                handle.write(text.encode("utf-8"))
            else:
                spool = _Spool(handle)
                text(spool.emit)
                spool.flush()
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def probe_writable(path: str | os.PathLike[str]) -> None:
    """Raise the ``OSError`` :func:`write_atomic` would meet at ``path``, before the run: the
    directory must take a new file and ``path`` must not be a directory. Leaves nothing."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=target.parent)
    os.close(fd)
    Path(temp).unlink(missing_ok=True)
