"""Files written whole or not at all: a reader (or a Ctrl-C, or a kill) never sees half of one.

Each writer writes a temporary file beside its target, flushes it to disk and renames it over
the target (`os.replace` is atomic within a folder). A killed process can leave a temporary
file `.<name>.<random>.tmp`; `remove_partial_files` removes them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """`write(stream)` into a temporary file beside `path`, then rename it over `path`.

    The file gets the mode `open(path, "wb")` would give it (0o666 less the umask, or the
    folder's default ACL), not `tempfile.mkstemp`'s 0o600: a folder shared between users or the
    nodes of a cluster stays readable as its umask says.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = _new_temporary(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`data` as the whole of `path` (`atomic_write`)."""
    atomic_write(path, lambda stream: stream.write(data))


def remove_partial_files(directory: Path) -> None:
    """Temporary files of a process that was killed before it could rename or remove them."""
    for path in directory.glob(".*.tmp"):
        path.unlink(missing_ok=True)


def _new_temporary(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` beside `path`, opened for writing."""
    while True:
        temporary = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue
