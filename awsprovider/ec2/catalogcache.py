"""The catalogue once per machine: an on-disk, versioned memo of the two catalogue reads.

DescribeInstanceTypes / DescribeInstanceTypeOfferings through boto3 against moto cost seconds per
process (moto serialises ~1,250 entries to XML, botocore parses them back). moto stays the source of
truth: the first process on a machine reads through boto3 as Karpenter does
(:mod:`awsprovider.ec2.catalog`), then keeps the parsed answer here; later processes read this file
instead of calling moto. The answer depends only on moto's static data files and the request, so an
entry is keyed by everything that could change it:

* the cache format (:data:`FORMAT`), karpy's version and a digest of the reader (``catalog.py``),
* moto's version and a fingerprint of the data files the answer is read from (size and mtime of
  ``moto/ec2/resources/instance_types.json*`` and of the region's
  ``instance_type_offerings/availability-zone/<region>.json*``), so an edited or reinstalled
  catalogue invalidates the entry even under the same version number,
* the region, the operation and its request (filters / location type).

The key is hashed into the file name and stored in the file; a file whose stored key differs (a
hash collision, a truncated or foreign file) is a miss. So is anything but a regular file in an
entry's place (a FIFO is never opened for a blocking read), an entry whose answer is not the bytes
written (the answer is pickled on its own and stored with its SHA-256: a flipped bit in the file
would otherwise often unpickle into a plausible, wrong catalogue) and an entry whose answer fails a
sanity check (:func:`_sane`: e.g. zero instance types); the miss is then rewritten from moto.

Format: a pickle of the frozen answer (read-only mappings, tuples, frozensets), because loading it
is what every cold process pays: ~40 ms for the 2.8 MB us-east-1 DescribeInstanceTypes entry where
JSON with an object hook took ~140 ms. It is read with a restricted unpickler
(:class:`_EntryUnpickler`): builtin scalars and containers are built by pickle's own opcodes and the
only global it will resolve is :func:`_proxy` (``MappingProxyType``), so a planted or foreign file
cannot name any other callable -- it fails to load and is a miss, like a truncated one. Writers are safe to run at once: each writes
a private temporary file in the cache directory and renames it into place (``os.replace`` is atomic
on one filesystem), so a reader sees a whole old file, a whole new file or none; two processes filling
the same entry both succeed (the second rename wins with identical content). Any error reading or
writing the cache is a miss, never a failure: the answer then comes from moto as before.

Where: ``$KARPY_CACHE_DIR`` if set, else ``platformdirs.user_cache_dir("karpy")``, in ``catalog/``.
Bypass: ``KARPY_NO_CACHE=1`` in the environment (read, never written, by karpy), ``karpy simulate
--no-cache`` / ``karpy instance-types --no-cache``, or ``InstanceTypeCatalog.for_moto(...,
disk_cache=False)``. Catalogues over other clients (real AWS) never use it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import pickle
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["CACHE_DIR_ENV", "FORMAT", "NO_CACHE_ENV", "CatalogCache", "cache_disabled_by_env", "default_cache_dir"]

#: bumped when the layout of a cache file changes (2: pickle, was JSON; 3: the answer's SHA-256)
FORMAT = 3
#: environment variable that turns the on-disk catalogue cache off (any value but "", "0", "false")
NO_CACHE_ENV = "KARPY_NO_CACHE"
#: environment variable naming the cache directory (default: the platform's user cache dir)
CACHE_DIR_ENV = "KARPY_CACHE_DIR"
_SUBDIR = "catalog"


def cache_disabled_by_env() -> bool:
    """Whether ``KARPY_NO_CACHE`` asks for no on-disk cache."""
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def default_cache_dir() -> Path:
    """``$KARPY_CACHE_DIR`` or ``platformdirs.user_cache_dir("karpy")``, plus ``catalog/``."""
    root = os.environ.get(CACHE_DIR_ENV)
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("karpy", appauthor=False)
    return Path(root) / _SUBDIR


def moto_root() -> Path | None:
    """moto's package directory, found without importing moto (None when it is not installed)."""
    spec = importlib.util.find_spec("moto")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def moto_data_fingerprint(region: str) -> tuple[tuple[str, int, int], ...]:
    """(file name, size, mtime_ns) of moto's catalogue data files for ``region`` (sorted)."""
    root = moto_root()
    if root is None:
        return ()
    resources = root / "ec2" / "resources"
    files = sorted(resources.glob("instance_types.json*"))
    files += sorted((resources / "instance_type_offerings" / "availability-zone").glob(f"{region}.json*"))
    out = []
    for f in files:
        st = f.stat()
        out.append((f.relative_to(resources).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(out)


def _karpy_version() -> str:
    """karpy's version plus a digest of the module that reads the catalogue (a development edit
    of the reader invalidates entries without a version bump)."""
    from karpy import __version__

    reader = Path(__file__).with_name("catalog.py")
    try:
        digest = hashlib.sha256(reader.read_bytes()).hexdigest()[:12]
    except OSError:
        digest = "unknown"
    return f"{__version__}+reader.{digest}"


class CatalogCache:
    """One directory of catalogue entries (see the module doc)."""

    def __init__(self, directory: Path | None = None, *, moto_version: str | None = None,
                 karpy_version: str | None = None,
                 fingerprint: Callable[[str], tuple[Any, ...]] = moto_data_fingerprint) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        if moto_version is None:
            import moto

            moto_version = moto.__version__
        self.moto_version = moto_version
        self.karpy_version = karpy_version if karpy_version is not None else _karpy_version()
        self._fingerprint = fingerprint

    def key(self, kind: str, region: str, request: Any) -> list[Any]:
        """Everything the answer depends on (JSON-able; stored in the entry and hashed into its name)."""
        return [FORMAT, self.karpy_version, self.moto_version, [list(x) for x in self._fingerprint(region)],
                region, kind, json.loads(json.dumps(request))]

    def path(self, kind: str, region: str, request: Any) -> Path:
        return self.directory / f"{kind}-{region}-{self._digest(kind, region, request)[:24]}.pickle"

    def _digest(self, kind: str, region: str, request: Any) -> str:
        return hashlib.sha256(json.dumps(self.key(kind, region, request)).encode()).hexdigest()

    def load(self, kind: str, region: str, request: Any) -> tuple[Any, int] | None:
        """``(answer, pages)`` or None on a miss (absent, foreign or unreadable). The answer comes
        back frozen as it is parsed (objects -> ``MappingProxyType``, arrays -> tuples: see
        :func:`awsprovider.ec2.catalog.freeze` makes."""
        try:
            path = self.path(kind, region, request)
            # O_NONBLOCK: a FIFO in the entry's place opens at once (then fails the regular-file
            # test) instead of waiting for a writer; O_NOFOLLOW: a symlink is not an entry
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                raw = f.read()
            entry = _EntryUnpickler(io.BytesIO(raw)).load()
            if type(entry) is not dict or entry.get("digest") != self._digest(kind, region, request):
                return None
            body, pages = entry["answer"], entry["pages"]
            # the answer as it was written: a flipped bit would otherwise often still unpickle into a
            # different, plausible answer (a silent wrong catalogue, never repaired)
            if type(body) is not bytes or hashlib.sha256(body).hexdigest() != entry.get("sha256"):
                return None
            answer = _EntryUnpickler(io.BytesIO(body)).load()
            if not _sane(kind, answer, pages):
                return None  # the right key with an absurd answer: a miss, rewritten by the caller's store
            return answer, pages
        except Exception:  # whatever a truncated, foreign or planted file makes pickle raise
            return None

    def store(self, kind: str, region: str, request: Any, answer: Any, pages: int) -> Path | None:
        """Write an entry: a private temporary file in the cache directory, renamed into place.
        Returns the entry's path, or None when it could not be written (a read-only home etc.)."""
        tmp: str | None = None
        try:
            path = self.path(kind, region, request)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():
                os.rmdir(path)  # an empty directory in the entry's place (os.replace cannot replace it)
            raw = encode_entry(self.key(kind, region, request), self._digest(kind, region, request), pages, answer)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
            os.replace(tmp, path)
            tmp = None
            return path
        except (OSError, TypeError, ValueError):
            return None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def encode_entry(key: Any, digest: str, pages: int, answer: Any) -> bytes:
    """An entry's bytes: its key and digest, and the answer pickled on its own with that pickle's
    SHA-256 (checked before the answer is unpickled)."""
    buf = io.BytesIO()
    _EntryPickler(buf).dump(answer)
    body = buf.getvalue()
    out = io.BytesIO()
    _EntryPickler(out).dump({"key": key, "digest": digest, "pages": pages, "sha256": hashlib.sha256(body).hexdigest(),
                             "answer": body})
    return out.getvalue()


def _sane(kind: str, answer: Any, pages: Any) -> bool:
    """Whether an entry's answer is one moto could have given: at least one page, and a non-empty
    mapping of instance type -> its InstanceTypeInfo (naming that type) or -> a non-empty set of
    zone names. An empty answer would filter out every instance type, silently."""
    if type(pages) is not int or pages < 1 or not isinstance(answer, (dict, MappingProxyType)) or not answer:
        return False
    if kind == "DescribeInstanceTypes":
        return all(isinstance(name, str) and isinstance(info, (dict, MappingProxyType))
                   and info.get("InstanceType") == name for name, info in answer.items())
    if kind == "DescribeInstanceTypeOfferings":
        return all(isinstance(name, str) and isinstance(zones, (tuple, list, frozenset, set)) and zones
                   and all(isinstance(z, str) and z for z in zones) for name, zones in answer.items())
    return False


def _proxy(items: dict[str, Any]) -> Any:
    """The one callable an entry may name: a read-only view of a freshly unpickled dict."""
    return MappingProxyType(items)


class _EntryPickler(pickle.Pickler):
    """Pickles an answer as it is frozen: read-only mappings as :func:`_proxy` of a dict (pickle
    cannot name ``MappingProxyType`` itself); tuples, frozensets and scalars natively."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=5)

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is MappingProxyType:
            return _proxy, (dict(obj),)
        return NotImplemented


class _EntryUnpickler(pickle.Unpickler):
    """Resolves no global but :func:`_proxy`: anything else in a file is an error (a miss)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (__name__, "_proxy"):
            return _proxy
        raise pickle.UnpicklingError(f"catalogue cache entries name no {module}.{name}")
