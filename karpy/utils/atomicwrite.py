"""Output files that a failed write cannot destroy: write a temporary file beside the target, then
rename it over the target (``os.replace``, atomic on one filesystem).

On any error (a full disk, a quota, an interrupt) the temporary file is removed and the target is
left as it was: a good earlier report is never replaced by a truncated one. A target that exists
and is not a regular file (``/dev/null``, ``/dev/full``, a FIFO, a terminal) is written in place:
renaming over it would replace the device; its write errors still raise. A symbolic link is
followed (the file it names is replaced, the link stays). Not in upstream (a karpy output rule).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["atomic_path", "write_all_atomic", "write_atomic"]


def _target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file to replace (symlinks followed) and its stat, or None when it does not exist."""
    real = Path(os.path.realpath(path))
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        return real, None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A path to write the whole new content to; on a clean exit it replaces ``path``, on an
    exception it is removed and ``path`` is untouched. A non-regular ``path`` is yielded itself."""
    target, st = _target(Path(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield target
        return
    directory = target.parent
    tmp: Path | None = None
    for attempt in range(100):
        candidate = directory / f".{target.name}.{os.getpid()}.{attempt}.tmp"
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        tmp = candidate
        break
    if tmp is None:
        raise FileExistsError(f"{directory}: no free temporary name for {target.name}")
    try:
        yield tmp
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))  # the target keeps its permissions
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through :func:`atomic_path`, flushed to disk before
    the rename so a full disk fails here, not later."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp:
        _write(tmp, raw)


def write_all_atomic(files: Mapping[Path, str | bytes]) -> None:
    """Write every file to its own temporary file and rename them over their targets only once all
    are written: a failed write leaves every earlier file as it was, so a set of files (the sweep's
    charts) is never half one run's and half another's. The OSError names the file that failed."""
    with contextlib.ExitStack() as stack:
        for path, data in files.items():
            tmp = stack.enter_context(atomic_path(path))
            try:
                _write(tmp, data.encode("utf-8") if isinstance(data, str) else data)
            except OSError as err:
                err.filename = str(path)
                raise


def _write(path: Path, raw: bytes) -> None:
    with open(path, "wb") as f:
        f.write(raw)
        f.flush()
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            os.fsync(f.fileno())
