"""The mocked EC2: moto stores the state, karpy's fleet model decides CreateFleet.

:class:`MockedEC2` answers a private boto3 client through botocore event hooks on that client only
(CreateFleet is allocated by :class:`~awsprovider.ec2.fleet.FleetAllocator` and rewritten to the
overrides it chose), in its own moto account and with its own copy of moto's id generator, so
nothing process-wide changes and ids depend only on ``seed``. The design, the good-guest rules and
the private moto API this relies on (pinned by tests/awsprovider/test_moto_contract.py):
docs/internals/mocked-ec2.md.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from awsprovider.ec2.capacity import CapacityModel, CapacityRule
from awsprovider.ec2.capacityreservations import (
    RESERVATION_OPERATIONS,
    CapacityReservationError,
    CapacityReservationStore,
    allocate_reserved,
    reservation_target,
)
from awsprovider.ec2.catalog import InstanceTypeCatalog
from awsprovider.ec2.fleet import (
    DEFAULT_COP_MIN_RELATIVE_DEPTH,
    DEFAULT_PCO_DEPTH_FRACTION,
    FleetAllocator,
    FleetDecision,
    PriceBook,
    StaticPriceBook,
    is_modelled_request,
)
from awsprovider.ec2.retention import TERMINATING, TerminatedInstances, forget

if TYPE_CHECKING:  # pragma: no cover
    from botocore.loaders import Loader

__all__ = [
    "DUMMY_CREDENTIALS", "FleetRecord", "ID_NEUTRAL_OPERATIONS", "KARPY_ACCOUNT_BASE", "MOTO_LOCK", "MockedEC2",
    "Network", "preload_moto",
]

DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "aws_session_token": "testing"}
_CONTEXT_KEY = "karpy_fleet"
#: moto's request header naming the account a request acts in (moto/core/responses.py get_current_account)
_ACCOUNT_HEADER = "x-moto-account-id"
#: first moto account id karpy claims (moto's own default, 123456789012, is left to the host)
KARPY_ACCOUNT_BASE = 100_000_000_000
#: serialises every request into moto (its models and id generator are process-wide, not thread-safe)
MOTO_LOCK = threading.RLock()
#: operations that leave the backend's id-generator state unchanged (the catalogue memo may skip them)
ID_NEUTRAL_OPERATIONS = frozenset({"DescribeInstanceTypes", "DescribeInstanceTypeOfferings"})
_claimed_accounts: set[str] = set()
#: botocore data loaders shared by the backends' private sessions, by botocore's ``data_path``
_LOADERS: dict[str | None, Loader] = {}


def _shared_loader(search_path_string: str | None = None) -> Loader:
    """One botocore data loader per ``data_path`` setting (botocore's ``create_loader`` calls it
    ``search_path_string``; this has its signature) for every backend's private session.

    A fresh botocore session builds its own loader and parses the EC2 service model (~4 MB of JSON)
    and ``endpoints.json`` again: ~0.15 s CPU per :class:`MockedEC2`. A loader only reads botocore's
    data files and caches what it parsed (botocore shares one loader between all clients of a
    session in the same way), so the backends share one. It is created with botocore's own
    ``create_loader`` from the session's ``data_path`` setting, so a host's ``AWS_DATA_PATH`` is
    honoured exactly as a fresh session would.
    """
    from botocore.loaders import create_loader

    with MOTO_LOCK:
        loader = _LOADERS.get(search_path_string)
        if loader is None:
            loader = _LOADERS[search_path_string] = create_loader(search_path_string)
        return loader


#: whether moto's EC2 models were imported (and moto's lazy region session built) by :func:`_import_moto_ec2`
_moto_ec2_ready = False


@contextmanager
def _new_sessions_share_loader() -> Iterator[None]:
    """While the body runs, botocore sessions created anywhere get :func:`_shared_loader`'s loader.

    For moto's import-time sessions only (:func:`_import_moto_ec2`), which karpy cannot reach
    otherwise. botocore's ``Session`` builds its loader with ``botocore.session.create_loader(
    data_path)``; this swaps that module attribute for :func:`_shared_loader` (same signature, same
    ``data_path`` keying, so the data a session reads is exactly what a fresh loader would read) and
    puts the previous value back when the body ends or raises: nothing stays patched when karpy
    returns. Held under :data:`MOTO_LOCK` so two karpy threads never swap it at once; a host thread
    that builds a session during the swap (a fraction of a second, once per process) gets a loader
    equal to its own, only shared.
    """
    import botocore.session

    with MOTO_LOCK:
        previous = botocore.session.create_loader
        botocore.session.create_loader = _shared_loader
        try:
            yield
        finally:
            botocore.session.create_loader = previous


def _import_moto_ec2() -> None:
    """Import moto's EC2 models once per process, with moto's own botocore sessions sharing karpy's
    loader.

    ``import moto.ec2.models`` builds three ``boto3.Session()`` in a class body (moto's
    ``RegionsAndZonesBackend``, one per partition) just to list the EC2 regions, and each parses
    the EC2 service model (~4 MB of JSON) and ``endpoints.json`` again; moto's lazily built session
    for an account's regions (``AccountSpecificBackend.get_session``, cached for the process) does
    it a fourth time. About 0.5 s CPU of a cold process. Built under
    :func:`_new_sessions_share_loader`, they parse each file once, and karpy's own client (same
    loader) then parses nothing. What the host already imported or built is left as it is.
    """
    global _moto_ec2_ready
    if _moto_ec2_ready:
        return
    with MOTO_LOCK:
        if _moto_ec2_ready:
            return
        with _new_sessions_share_loader():  # no-ops for what the host already imported or built
            import moto.ec2.models  # noqa: F401  (the import is the point)
            from moto.core.base_backend import AccountSpecificBackend

            AccountSpecificBackend.get_session()
        _moto_ec2_ready = True


def preload_moto() -> None:
    """Import everything a backend's first request imports (moto's EC2 models, built as
    :func:`_import_moto_ec2` does, its EC2 dispatcher and what :meth:`MockedEC2._on_before_send`
    wraps the answer in), without starting a backend: nothing else changes. For a process that
    wants the imports done up front (the ``karpy`` CLI freezes them out of the garbage collector's
    generations, :meth:`awsprovider.cloudprovider.AWSCloudProvider.preload`)."""
    _import_moto_ec2()
    import botocore.awsrequest  # noqa: F401  (the imports are the point)
    import moto.core.botocore_stubber  # noqa: F401
    import moto.iam.access_control  # noqa: F401  (moto's authorisation check of every request)
    import moto.iam.models  # noqa: F401  (moto's setup_class marks the account as visited)
    import werkzeug.exceptions  # noqa: F401
    from moto.core.utils import get_service_model

    _ec2_dispatcher()
    # moto's own parse of the EC2 service model (its request parser and response serializer read
    # it; cached by moto for the process), which the first request would otherwise build
    get_service_model("ec2")


def _new_client(region: str) -> Any:
    """A private EC2 client: its own botocore session (sharing :func:`_shared_loader`'s loader),
    moto's process-wide ``before-send`` stubber taken off it, dummy credentials and an explicit
    endpoint (see the module doc). No hook of a backend is on it yet."""
    import boto3
    import botocore.session
    from botocore import UNSIGNED
    from botocore.config import Config
    from moto.core.models import botocore_stubber as moto_global_stubber

    core = botocore.session.Session()
    core.register_component("data_loader", _shared_loader(core.get_config_variable("data_path")))
    # botocore-stubs type a handler as __call__(**kwargs) -> None; botocore passes event_name and
    # request as keywords, which moto's BotocoreStubber accepts (and returns the response)
    core.unregister("before-send", moto_global_stubber)  # type: ignore[arg-type]
    session = boto3.session.Session(botocore_session=core, region_name=region, **DUMMY_CREDENTIALS)
    # Unsigned: Not in upstream (Karpenter's client signs with SigV4); same result because
    # moto's EC2 never checks a signature (its IAM authentication is off unless a host turns
    # it on for a mock_aws of its own) and takes the region from the URL and the account
    # from the header above. Signing cost ~0.4 ms a request (botocore's SigV4 canonical
    # request and HMACs), the request body botocore builds is the same.
    return session.client("ec2", region_name=region, endpoint_url=f"https://ec2.{region}.amazonaws.com",
                          config=Config(signature_version=UNSIGNED))


def _handler_table(client: Any) -> tuple[Any, ...]:
    """Every handler on ``client``'s event system: (event path, first, middle, last) per node of
    botocore's handler trie that has any, and the unique-id registrations. Two tables are equal
    when the same handlers would run for every event (private botocore structure, pinned by
    tests/awsprovider/test_moto_contract.py)."""
    emitter = client.meta.events._emitter
    rows: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[str, ...], dict[str, Any]]] = [((), emitter._handlers._root)]
    while stack:
        path, node = stack.pop()
        values = node.get("values")
        if values is not None and (values.first or values.middle or values.last):
            rows.append((path, tuple(values.first), tuple(values.middle), tuple(values.last)))
        stack.extend((path + (chunk,), child) for chunk, child in (node.get("children") or {}).items())
    rows.sort(key=lambda row: row[0])
    return tuple(rows), tuple(sorted((k, v["handler"], v.get("count")) for k, v in emitter._unique_id_handlers.items()))


class _ClientPool:
    """Idle private EC2 clients, handed to the next :class:`MockedEC2` of the same key.

    Not in upstream as such: Karpenter's operator builds its EC2 client once and uses it for the
    life of the process, while each karpy simulation starts a backend of its own. Building a boto3
    client costs ~12 ms and ~8,000 objects (botocore makes a client class with a method and a
    docstring per EC2 operation), about a tenth of a warm ``karpy.simulate``, and those objects
    outlive enough collections to bring the host's next full collection closer. Same result
    because a backend's client carries nothing of the backend once its hooks are off: requests are
    answered by the hooks in process (the client's HTTP side is never used), the backend's account
    and id-generator state travel with each request, and what botocore caches on a client (parsed
    operation models, resolved endpoints) depends only on the key. The key is the region and the
    host's ``AWS_*`` environment when the backend starts, which is what a fresh client reads its
    settings from besides the AWS config files (a change to those files between two simulations of
    a process is not seen by a pooled client; no setting in them changes an answer of the mocked
    EC2). A client goes back only with the handler table botocore built for it (every hook of
    its backend off, none of a caller's left on). At most :data:`IDLE` clients wait per key and
    :data:`KEYS` keys are kept; one client serves one backend at a time.
    """

    IDLE = 4
    KEYS = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[tuple[Any, ...], list[tuple[Any, tuple[Any, ...]]]] = OrderedDict()

    @staticmethod
    def key(region: str) -> tuple[Any, ...]:
        return (region, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))))

    def take(self, key: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
        """An idle client of ``key``, or a new one, with its handler table as botocore built it."""
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop()
        client = _new_client(key[0])
        return client, _handler_table(client)

    def give(self, key: tuple[Any, ...], client: Any, pristine: tuple[Any, ...]) -> None:
        """Put ``client`` back for the next backend of ``key`` -- only when its handler table is
        ``pristine`` again (the backend took its hooks off): a client on which the caller left a
        handler of its own (``ec2.client.meta.events.register(...)``) is dropped, never handed to
        another backend."""
        if _handler_table(client) != pristine:
            return
        with self._lock:
            idle = self._idle.setdefault(key, [])
            self._idle.move_to_end(key)
            if len(idle) < self.IDLE:
                idle.append((client, pristine))
            while len(self._idle) > self.KEYS:
                self._idle.popitem(last=False)

    def clear(self) -> None:
        """Drop every idle client (tests; a host that wants the memory back)."""
        with self._lock:
            self._idle.clear()


#: the process's idle private clients (see :class:`_ClientPool`)
_CLIENTS = _ClientPool()


def _claim_account() -> str:
    with MOTO_LOCK:
        n = KARPY_ACCOUNT_BASE
        while f"{n:012d}" in _claimed_accounts:
            n += 1
        account = f"{n:012d}"
        _claimed_accounts.add(account)
        return account


def _release_account(account: str) -> None:
    """Drop ``account`` from every moto backend and forget it (under moto's own backend lock)."""
    from moto.core.base_backend import BackendDict, backend_lock
    from moto.core.model_instances import reset_model_data
    from moto.core.models import MockAWS

    with MOTO_LOCK, backend_lock:
        live: dict[int, Any] = {}
        # moto annotates the class-level registry without ClassVar, so mypy sees an instance variable
        for backends in BackendDict._instances:  # type: ignore[misc]
            ours = backends.pop(account, None)
            if ours is not None:
                _empty_account_backend(ours)
            if len(backends):
                live.setdefault(id(backends), backends)
        BackendDict._instances[:] = list(live.values())  # type: ignore[misc]  # (same registry)
        _claimed_accounts.discard(account)
        if not _claimed_accounts and MockAWS._nested_count == 0:
            # moto tracks every model object it creates in class-level lists (for its dashboard);
            # drop them once no mock of anyone is running, as mock_aws does at stop.
            reset_model_data()


def _empty_account_backend(backends: Any) -> None:
    """Empty a released account's region backends (an ``AccountSpecificBackend``) so that moto's
    process-wide method caches, which hold some of its objects as keys, keep shells instead of the
    account's whole state: ``AccountSpecificBackend._generate_regions`` (an ``lru_cache`` of 128
    entries, keyed by the account's backends) and ``Subnet._base_avail_ip_iterator`` (an unbounded
    ``functools.cache``, keyed by every subnet ever created, each holding its region backend).
    Without this every run left its VPCs, subnets, launch templates and instances reachable for
    the life of the process (about 730 tracked objects and a region backend per run). The
    account's model objects and backends are also dropped from moto's per-class
    ``instances_tracked`` lists (which moto resets only when no mock at all is running: a host's
    own mock, or a second backend, kept them). Only this account's objects are touched (karpy's
    accounts are never the host's); the host's objects and their cached IP iterators are not."""
    from moto.core.model_instances import model_data

    ours = list(backends.values())
    account = getattr(backends, "account_id", None)
    ids = {id(b) for b in ours}

    def belongs(obj: Any, depth: int = 2) -> bool:
        """``obj`` is one of the backends, names the account, or holds (within ``depth``
        attributes, e.g. a VolumeAttachment's volume) an object that does."""
        if id(obj) in ids:
            return True
        state = getattr(obj, "__dict__", None)
        if not isinstance(state, dict):
            return False
        if account is not None and account in (state.get("account_id"), state.get("owner_id")):
            return True
        return any(id(v) in ids or (depth and hasattr(v, "__dict__") and not isinstance(v, type)
                                    and belongs(v, depth - 1)) for v in state.values())

    # moto's InstanceTrackerMeta lists (every model object, per class; reset only when no mock runs)
    classes = [cls for models in model_data.values() for cls in models.values()] + [type(b) for b in ours]
    for cls in dict.fromkeys(classes):
        tracked = cls.__dict__.get("instances_tracked")
        if isinstance(tracked, list) and tracked:
            tracked[:] = [obj for obj in tracked if not belongs(obj)]
    for region_backend in ours:
        for subnets in getattr(region_backend, "subnets", {}).values():
            for subnet in subnets.values():
                vars(subnet).clear()
    backends.clear()


#: the handler name (``camelcase_to_underscores`` of the action) of the request this thread's
#: dispatcher is answering, set by the dispatcher's ``setup_class`` (see :func:`_ec2_dispatcher`)
_DISPATCHING = threading.local()


class _FunctionNamesDir(type):
    """Metaclass of :func:`_ec2_dispatcher`'s class: ``dir(cls)`` is the function names computed
    once when the class was made -- while the class answers a request in this thread, only the
    one among them that is the request's handler name (none when there is no such function)."""

    _karpy_function_names: tuple[str, ...] = ()
    _karpy_function_set: frozenset[str] = frozenset()

    def __dir__(cls) -> list[str]:
        action: str | None = getattr(_DISPATCHING, "action", None)
        if action is not None:
            return [action] if action in cls._karpy_function_set else []
        return list(cls._karpy_function_names)


def _dispatcher_setup_class(self: Any, request: Any, full_url: str, headers: Any, use_raw_body: bool = False) -> None:
    """The dispatcher's ``setup_class``: moto's, then note the request's handler name for
    :class:`_FunctionNamesDir` (the name moto's ``call_action`` looks for, computed the same way)."""
    from moto.core.utils import camelcase_to_underscores
    from moto.ec2.responses import EC2Response  # the dispatcher's one base class

    EC2Response.setup_class(self, request, full_url, headers, use_raw_body)
    try:
        action = camelcase_to_underscores(self._get_action())
    except Exception:  # no name noted: ``dir`` stays the full list, call_action fails as in moto
        return
    _DISPATCHING.action = action


@contextmanager
def _dispatching() -> Iterator[None]:
    """Around one dispatch: the handler name noted by the dispatcher's ``setup_class`` is dropped
    when the dispatch ends (``dir`` of the class is then the whole function list again)."""
    try:
        yield
    finally:
        _DISPATCHING.action = None


#: the attribute names moto's value picker tries, by everything its alias providers look at
#: (:func:`_picked_value`)
_PICKER_KEYS: dict[tuple[type, ...], dict[tuple[Any, ...], tuple[str, ...]]] = {}
_NO_PARENT = object()
#: the transformer path (None: none) that applies to a key path, by the transformer paths in order
_TRANSFORM_PATHS: dict[tuple[str, ...], dict[str, str | None]] = {}
#: karpy's subclass of each moto serializer class the dispatcher used (:func:`_serializer_class`)
_SERIALIZERS: dict[type, type] = {}
#: and back: the moto class each of those subclasses
_SERIALIZER_BASES: dict[type, Any] = {}


def _picked_value(serializer: Any, value: Any, key: str, shape: Any) -> Any:
    """What moto's ``ResponseSerializer.get_value`` returns -- ``XFormedAttributePicker`` with
    moto's alias providers, then the first response transformer whose path ends the member's key
    path -- with the attribute names it tries and the transformer it picks memoised.

    For every member of every response object moto's picker instantiates its six alias providers
    and asks each, through a generator, for an alias of ``key``, then tests the key path against
    each of EC2's ~20 transformer paths (together about half of a request's serialisation). Not in
    moto; same result because the providers' answers depend only on what the memo key holds --
    ``key``, the shape and its current ``parent`` (botocore shape objects, by identity: moto sets
    ``parent`` before each member), the object's class name, the object's
    ``Meta.serialization_aliases`` entry for ``key`` (read on every call, as moto's ``ExplicitAlias``
    does) and the provider list -- and the names are computed by moto's own ``get_possible_keys``
    on a miss; which transformer applies depends only on the key path and the transformer paths in
    their order (read once per response, :func:`_serializer_class`; moto's handlers add paths
    before the response is serialised), and the transformer itself is looked up on every call. The
    values are looked up with moto's ``get_value``, the first one found wins
    (tests/awsprovider/test_backend_dispatch.py compares with moto's picker).
    """
    from moto.core.constants import MISSING
    from moto.core.serialize import AttributePickerContext
    from moto.core.utils import get_value

    memo = serializer._karpy_names
    if memo is None:
        return _SERIALIZER_BASES[type(serializer)].get_value(serializer, value, key, shape)
    picker = serializer._value_picker
    meta = getattr(value, "Meta", None)
    aliases = getattr(meta, "serialization_aliases", None) if meta is not None else None
    explicit = aliases[key] if aliases is not None and key in aliases else MISSING
    memo_key = (key, shape, getattr(shape, "parent", _NO_PARENT), value.__class__.__name__, explicit)
    names = memo.get(memo_key)
    if names is None:
        context = AttributePickerContext(obj=value, key=key, shape=shape,
                                         operation_model=serializer.operation_model,
                                         service_model=serializer.operation_model.service_model,
                                         key_path=".".join(serializer.path))
        names = memo[memo_key] = tuple(picker.get_possible_keys(context))
    for name in names:
        picked = get_value(value, name, MISSING)
        if picked is not MISSING:
            break
    else:
        picked = None
    transforms = serializer._karpy_transforms
    if transforms is not None:
        key_path = f"{'.'.join(serializer.path)}.{key}"
        path = transforms.get(key_path, MISSING)
        if path is MISSING:
            path = transforms[key_path] = next((p for p in serializer._karpy_transform_paths
                                                if key_path.endswith(p)), None)
        if path is not None:
            picked = picker.response_transformers[path](picked)
    return picked


def _serializer_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """moto's serializer ``__init__``, then what :func:`_picked_value` reads once per response: the
    memo of attribute names for the alias provider list (None: not moto's default
    ``XFormedAttributePicker``, moto's own ``get_value`` answers) and the transformer paths in
    order with the memo of their choice per key path (None: no transformers)."""
    from moto.core.serialize import DEFAULT_ALIAS_PROVIDERS, XFormedAttributePicker

    _SERIALIZER_BASES[type(self)].__init__(self, *args, **kwargs)
    picker = self._value_picker
    fast = type(picker) is XFormedAttributePicker and picker.alias_providers is DEFAULT_ALIAS_PROVIDERS
    paths = tuple(picker.response_transformers) if fast else ()
    with MOTO_LOCK:
        self._karpy_names = _PICKER_KEYS.setdefault(tuple(DEFAULT_ALIAS_PROVIDERS), {}) if fast else None
        self._karpy_transforms = _TRANSFORM_PATHS.setdefault(paths, {}) if paths else None
    self._karpy_transform_paths = paths


def _serializer_class(base: type) -> type:
    """moto's serializer class ``base`` with ``get_value`` answered by :func:`_picked_value`."""
    cls = _SERIALIZERS.get(base)
    if cls is None:
        cls = _SERIALIZERS[base] = type(f"_Karpy{base.__name__}", (base,), {
            "__module__": __name__, "__init__": _serializer_init, "get_value": _picked_value})
        _SERIALIZER_BASES[cls] = base
    return cls


def _dispatcher_serialized(self: Any, action_result: Any) -> Any:
    """The dispatcher's ``serialized``: moto's ``BaseResponse.serialized``, line for line, with the
    serializer class moto picks replaced by its :func:`_serializer_class` subclass."""
    from botocore.model import OperationNotFoundError
    from moto.core.model import OperationModel
    from moto.core.responses import ActionContext
    from moto.core.serialize import get_serializer_class
    from moto.core.utils import get_service_model

    service_model = get_service_model(self.boto3_service_name)
    try:
        operation_model = service_model.operation_model(self._get_action())
    except OperationNotFoundError:
        assert isinstance(action_result.result, Exception)
        operation_model = OperationModel({}, service_model)
    protocol = self.determine_response_protocol(service_model)
    serializer_cls = _serializer_class(get_serializer_class(service_model.service_name, protocol))
    context = ActionContext(service_model, operation_model, serializer_cls, self)
    status_code, headers, body = action_result.execute_result(context)
    headers.update(self.response_headers)
    return status_code, headers, body


_EC2_DISPATCHER: list[type] = []


def _ec2_dispatcher() -> Any:
    """moto's EC2 dispatcher (``moto.ec2.responses.EC2Response``), as a subclass whose ``dir()``
    is its function names, computed once per process.

    For every request moto's ``BaseResponse.call_action`` asks ``method_names_from_class(
    self.__class__)`` -- ``inspect.getmembers(cls, inspect.isfunction)`` -- whether the action has a
    handler method: ``getmembers`` starts from ``dir(cls)``, ~330 names merged over the 40 classes of
    ``EC2Response``'s MRO, and looks each one up (~0.7 ms a request, ~7 % of the bundled example's
    warm run, 64 requests). Not in moto; same result because the subclass adds no function name and
    ``getmembers`` keeps exactly the names whose value is a function, which are the names this
    ``dir`` returns (the same class attributes, so the same handler is found and called;
    tests/awsprovider/test_backend_dispatch.py compares the two lists). The class is made once per
    process (moto's response classes do not change after import) under :data:`MOTO_LOCK`; moto's
    own classes and functions are not touched.

    While it answers a request, ``dir`` is narrower still: the subclass's ``setup_class`` (moto's,
    then one line) notes the request's handler name -- ``camelcase_to_underscores(
    self._get_action())``, the very name ``call_action`` then tests with ``action in method_names``
    -- and ``dir`` returns just that name when it is a function name, else nothing. Not in moto;
    same result because ``call_action`` uses the list only for that membership test, and the name is
    in the one-name list exactly when it is in the full one (the same handler is then fetched with
    ``getattr``); the full list still took ~0.24 ms a request (~330 ``getattr`` and a sort). The
    name is per thread and dropped when the dispatch ends (:func:`_dispatching`), so ``dir`` at any
    other time is the full list; tests/awsprovider/test_backend_dispatch.py checks both."""
    if _EC2_DISPATCHER:
        return _EC2_DISPATCHER[0]
    with MOTO_LOCK:
        if not _EC2_DISPATCHER:
            import inspect

            from moto.ec2.responses import EC2Response

            names = tuple(name for name, _ in inspect.getmembers(EC2Response, inspect.isfunction))
            _EC2_DISPATCHER.append(_FunctionNamesDir("_KarpyEC2Response", (EC2Response,), {
                "__module__": __name__, "_karpy_function_names": names, "_karpy_function_set": frozenset(names),
                "setup_class": _dispatcher_setup_class, "serialized": _dispatcher_serialized}))
        return _EC2_DISPATCHER[0]


@functools.cache
def _ec2_backend_without_default_amis() -> type:
    """moto's EC2 backend without the default AMIs, one class for the process: moto keeps every
    class of a backend for good (``VPCBackend.vpc_refs`` is keyed by class, and each class tracks
    its instances in ``instances_tracked``), so a class per backend kept every backend alive."""
    from moto.ec2.models import EC2Backend

    class _EC2BackendWithoutDefaultAmis(EC2Backend):
        def _load_amis(self) -> None:
            return None

    return _EC2BackendWithoutDefaultAmis


@dataclass
class FleetRecord:
    """One CreateFleet call: the request as the caller sent it, what moto was sent, the decisions
    (one per unit; empty when the request was passed through), and the response returned."""

    request: dict[str, Any]
    sent: dict[str, Any] | None = None
    decisions: tuple[FleetDecision, ...] = ()
    response: dict[str, Any] | None = None
    now: float = 0.0

    @property
    def modelled(self) -> bool:
        """Whether the fleet model decided this request."""
        return bool(self.decisions)


@dataclass(frozen=True)
class Network:
    """A VPC with one subnet per zone (zone -> subnet id) and a security group."""

    vpc_id: str
    subnets: dict[str, str]
    security_group_id: str | None = None


@dataclass
class _Pending:
    record: FleetRecord
    errors: list[dict[str, Any]] = field(default_factory=list)
    all_failed: bool = False
    extra_requests: list[dict[str, Any]] = field(default_factory=list)
    #: reserved launches: the reservation of the first request, then of each extra request
    reservation_ids: list[str] = field(default_factory=list)


def _dedupe_errors(decisions: Iterable[FleetDecision]) -> list[dict[str, Any]]:
    seen: set[tuple[Any, ...]] = set()
    out: list[dict[str, Any]] = []
    for d in decisions:
        for e in d.errors:
            o = e["LaunchTemplateAndOverrides"]["Overrides"]
            key = (e["ErrorCode"], o.get("InstanceType"), o.get("AvailabilityZone"), o.get("SubnetId"), e["Lifecycle"])
            if key not in seen:
                seen.add(key)
                out.append(e)
    return out


class MockedEC2:
    """moto-backed EC2 with the fleet model installed on its boto3 client.

    Use as a context manager (or :meth:`start`/:meth:`stop`)::

        with MockedEC2(region="us-east-1", price_book=book, unavailable=["c8i.*:*:on-demand"]) as ec2:
            lt = ec2.create_launch_template("karpy-default", image_id="ami-12c6146b")
            subnets = ec2.default_subnets()
            out = ec2.client.create_fleet(**params)      # exactly what Karpenter sends
            ec2.records[-1].decisions[0].reason

    ``records`` lists every CreateFleet call, or the newest ``records_limit`` of them.
    """

    def __init__(
        self,
        region: str = "us-east-1",
        price_book: PriceBook | None = None,
        capacity: CapacityModel | None = None,
        *,
        unavailable: Iterable[str] = (),
        offerings: Mapping[str, Iterable[str]] | None = None,
        seed: int | None = 0,
        load_default_amis: bool = False,
        clock: Callable[[], float] | None = None,
        pco_depth_fraction: float = DEFAULT_PCO_DEPTH_FRACTION,
        cop_min_relative_depth: float = DEFAULT_COP_MIN_RELATIVE_DEPTH,
        records_limit: int | None = None,
    ) -> None:
        self.region = region
        if records_limit is not None and records_limit < 1:
            raise ValueError(f"records_limit must be at least 1, not {records_limit}")
        #: how many CreateFleet records ``records`` keeps, the newest (None: every one)
        self.records_limit = records_limit
        self.price_book: PriceBook = price_book if price_book is not None else StaticPriceBook()
        self.capacity = capacity if capacity is not None else CapacityModel()
        for spec in unavailable:
            self.capacity.add(spec)
        self._offerings_override = (
            None if offerings is None else {k: frozenset(v) for k, v in offerings.items()}
        )
        self.seed = seed
        self.load_default_amis = load_default_amis
        self.clock = clock
        self.now: float = 0.0
        self.pco_depth_fraction = pco_depth_fraction
        self.cop_min_relative_depth = cop_min_relative_depth
        self.records: list[FleetRecord] = []
        self._account: str | None = None
        self._ids: tuple[Any, ...] | None = None
        self._client: Any = None
        #: the client pool's key for ``_client`` (region, the host's AWS_* environment at start)
        self._client_key: tuple[Any, ...] = ()
        #: ``_client``'s handler table as botocore built it (see _handler_table)
        self._client_pristine: tuple[Any, ...] = ()
        self._catalog: InstanceTypeCatalog | None = None
        self._allocator: FleetAllocator | None = None
        self._subnet_zones: dict[str, str | None] = {}
        self._bypass = False
        self._fleet_counter = 0
        self._reservations: CapacityReservationStore | None = None
        #: launch template name -> (reservation id, market type) it targets (None: no reservation)
        self._template_targets: dict[str, tuple[str, str] | None] = {}
        #: terminated instances, until EC2 forgets them (awsprovider.ec2.retention)
        self._terminated = TerminatedInstances()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> MockedEC2:
        """Claim a moto account, build the private client, install the hooks, create the region's
        EC2 state (see the module doc: nothing process-wide is patched)."""
        if self._client is not None:
            raise RuntimeError("MockedEC2 already started")
        _import_moto_ec2()
        from moto.ec2.models import ec2_backends
        from moto.moto_api._internal import mock_random

        self._account = _claim_account()
        try:
            if self.seed is not None:
                with MOTO_LOCK:
                    outer = mock_random.getstate()
                    mock_random.seed(self.seed)
                    self._ids = mock_random.getstate()
                    mock_random.setstate(outer)
            self._client_key = _ClientPool.key(self.region)
            client, self._client_pristine = _CLIENTS.take(self._client_key)
            self._client = client
            self._install_hooks()
            with self._moto_ids():
                accounts = ec2_backends[self._account]
                if not self.load_default_amis and self.region in accounts.regions:
                    accounts[self.region] = _ec2_backend_without_default_amis()(self.region, account_id=self._account)
            # First call creates moto's EC2 backend for the region when not created above.
            azs = self._client.describe_availability_zones()["AvailabilityZones"]
            self._reservations = CapacityReservationStore(
                self._account, self.current_time, {z["ZoneName"]: z.get("ZoneId", "") for z in azs})
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Drop this backend's moto state and release its account. The records stay readable."""
        if self._account is not None:
            _release_account(self._account)
            self._account = None
        client, self._client = self._client, None
        if client is not None:
            self._uninstall_hooks(client)
            _CLIENTS.give(self._client_key, client, self._client_pristine)
        self._catalog = None
        self._allocator = None
        self._subnet_zones.clear()
        self._template_targets.clear()

    @property
    def account_id(self) -> str | None:
        """The moto account this backend's requests act in (None when stopped)."""
        return self._account

    @contextmanager
    def _moto_ids(self, persist: bool = True) -> Iterator[None]:
        """Hold :data:`MOTO_LOCK` with this backend's id-generator state swapped into moto's."""
        from moto.moto_api._internal import mock_random

        with MOTO_LOCK:
            if self._ids is None:
                yield
                return
            outer = mock_random.getstate()
            mock_random.setstate(self._ids)
            try:
                yield
            finally:
                if persist:
                    self._ids = mock_random.getstate()
                mock_random.setstate(outer)

    def _on_before_send(self, request: Any, event_name: str = "", **_: Any) -> Any:
        """Answer a request of this backend's client with moto's EC2, in this backend's account."""
        from botocore.awsrequest import AWSResponse
        from moto.core.botocore_stubber import MockRawResponse
        from werkzeug.exceptions import HTTPException  # what moto's responses raise (moto depends on werkzeug)

        if self._account is None:
            raise RuntimeError("MockedEC2 is not started")
        if self._terminated:
            self._forget_terminated()
        request.headers[_ACCOUNT_HEADER] = self._account
        for name, value in list(request.headers.items()):
            if isinstance(value, bytes):  # moto's response classes expect text headers
                request.headers[name] = value.decode("utf-8")
        with self._moto_ids(persist=event_name.rsplit(".", 1)[-1] not in ID_NEUTRAL_OPERATIONS):
            try:
                with _dispatching():
                    status, headers, body = _ec2_dispatcher().dispatch(request, request.url, request.headers)
            except HTTPException as e:
                status, headers, body = e.code, e.get_headers(), e.get_body()
        return AWSResponse(request.url, status, headers, MockRawResponse(body))

    def __enter__(self) -> MockedEC2:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- accessors -----------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The boto3 EC2 client with the fleet model installed."""
        if self._client is None:
            raise RuntimeError("MockedEC2 is not started")
        return self._client

    @property
    def catalog(self) -> InstanceTypeCatalog:
        """The instance-type catalogue read through this backend's client (cached; the parsed,
        read-only answer is shared process-wide per region and moto version, see
        :mod:`awsprovider.ec2.catalog`)."""
        if self._catalog is None:
            self._catalog = InstanceTypeCatalog.for_moto(self.client, self.region)
        return self._catalog

    @property
    def allocator(self) -> FleetAllocator:
        """The fleet model (offerings from the catalogue unless given at construction)."""
        if self._allocator is None:
            offerings = self._offerings_override if self._offerings_override is not None else self.catalog.offerings()
            self._allocator = FleetAllocator(
                self.price_book,
                offerings=offerings,
                capacity=self.capacity,
                zone_of_subnet=self.zone_of_subnet,
                pco_depth_fraction=self.pco_depth_fraction,
                cop_min_relative_depth=self.cop_min_relative_depth,
            )
        return self._allocator

    @property
    def reservations(self) -> CapacityReservationStore:
        """The capacity reservations of this backend's account (:mod:`awsprovider.ec2.capacityreservations`)."""
        if self._reservations is None:
            raise RuntimeError("MockedEC2 is not started")
        return self._reservations

    @property
    def decisions(self) -> list[FleetDecision]:
        """Every unit decision of the records kept (``records_limit``), in order."""
        return [d for r in self.records for d in r.decisions]

    def current_time(self) -> float:
        """Virtual now: ``clock()`` when given, else the ``now`` attribute."""
        return float(self.clock()) if self.clock is not None else self.now

    def set_scenario(self, price_book: PriceBook | None = None, capacity: CapacityModel | None = None) -> None:
        """Re-price and/or replace the capacity model of a running backend (moto state, catalogue
        and records are kept); the fleet model is rebuilt on the next CreateFleet. ``None`` keeps
        the current one."""
        if price_book is not None:
            self.price_book = price_book
        if capacity is not None:
            self.capacity = capacity
        self._allocator = None

    def add_unavailable(self, spec: str | CapacityRule) -> CapacityRule:
        """Inject a capacity error rule (``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE[:key=value...]``)."""
        return self.capacity.add(spec)

    def zone_of_subnet(self, subnet_id: str) -> str | None:
        """The zone of a subnet (cached; ``None`` when moto does not know it)."""
        if subnet_id not in self._subnet_zones:
            from botocore.exceptions import ClientError

            try:
                subnets = self.client.describe_subnets(SubnetIds=[subnet_id])["Subnets"]
                self._subnet_zones[subnet_id] = subnets[0]["AvailabilityZone"] if subnets else None
            except ClientError:
                self._subnet_zones[subnet_id] = None
        return self._subnet_zones[subnet_id]

    # -- network / launch template helpers -------------------------------------------------
    def default_subnets(self) -> dict[str, str]:
        """moto's default VPC subnets: zone -> subnet id (one per zone), sorted by zone."""
        subnets = self.client.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
        out = {s["AvailabilityZone"]: s["SubnetId"] for s in sorted(subnets, key=lambda s: s["AvailabilityZone"])}
        self._subnet_zones.update(dict((v, k) for k, v in out.items()))
        return out

    def create_network(
        self,
        cidr: str = "10.0.0.0/16",
        zones: Iterable[str] | None = None,
        tags: Mapping[str, str] | None = None,
        subnet_prefix: int = 20,
    ) -> Network:
        """Create a VPC with one subnet per zone (all region zones by default) and a security group,
        all tagged with ``tags`` (what EC2NodeClass selector terms match)."""
        tag_list = [{"Key": k, "Value": v} for k, v in (tags or {}).items()]

        def spec(kind: str) -> list[dict[str, Any]]:
            return [{"ResourceType": kind, "Tags": tag_list}] if tag_list else []

        if zones is None:
            azs = self.client.describe_availability_zones()["AvailabilityZones"]
            zones = sorted(z["ZoneName"] for z in azs)
        zones = list(zones)
        net = ipaddress.ip_network(cidr)
        blocks = net.subnets(new_prefix=subnet_prefix)
        vpc_id = self.client.create_vpc(CidrBlock=cidr, TagSpecifications=spec("vpc"))["Vpc"]["VpcId"]
        subnets: dict[str, str] = {}
        for zone in zones:
            block = next(blocks)
            sid = self.client.create_subnet(
                VpcId=vpc_id, CidrBlock=str(block), AvailabilityZone=zone, TagSpecifications=spec("subnet")
            )["Subnet"]["SubnetId"]
            subnets[zone] = sid
            self._subnet_zones[sid] = zone
        sg = self.client.create_security_group(
            GroupName=f"karpy-{vpc_id}", Description="karpy nodes", VpcId=vpc_id,
            TagSpecifications=spec("security-group"),
        )["GroupId"]
        return Network(vpc_id, subnets, sg)

    def create_launch_template(
        self, name: str, image_id: str = "ami-12c6146b", tags: Mapping[str, str] | None = None, **data: Any
    ) -> str:
        """Create a launch template (``LaunchTemplateData`` = ImageId + ``data``); returns its id."""
        kwargs: dict[str, Any] = {"LaunchTemplateName": name, "LaunchTemplateData": {"ImageId": image_id, **data}}
        if tags:
            kwargs["TagSpecifications"] = [
                {"ResourceType": "launch-template", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
            ]
        return str(self.client.create_launch_template(**kwargs)["LaunchTemplate"]["LaunchTemplateId"])

    def create_fleet(self, **params: Any) -> dict[str, Any]:
        """``client.create_fleet(**params)`` (convenience)."""
        return dict(self.client.create_fleet(**params))

    # -- hooks ---------------------------------------------------------------------------------
    def _hooks(self) -> list[tuple[str, Any]]:
        """(event, handler) of every hook this backend puts on its client (``before-send.ec2`` is
        registered first, the others in this order)."""
        hooks: list[tuple[str, Any]] = [
            ("before-send.ec2", self._on_before_send),
            ("provide-client-params.ec2.CreateFleet", self._on_provide_params),
            ("before-call.ec2.CreateFleet", self._on_before_call),
            ("after-call.ec2.CreateFleet", self._on_after_call),
        ]
        hooks += [(f"provide-client-params.ec2.{op}", self._stash_params)
                  for op in (*RESERVATION_OPERATIONS, "CreateLaunchTemplate", "TerminateInstances")]
        hooks += [(f"before-call.ec2.{op}", self._on_reservation_call) for op in RESERVATION_OPERATIONS]
        hooks += [("after-call.ec2.CreateLaunchTemplate", self._on_launch_template_created),
                  ("after-call.ec2.TerminateInstances", self._on_instances_terminated)]
        return hooks

    def _install_hooks(self) -> None:
        ev = self._client.meta.events
        (event, handler), *rest = self._hooks()
        ev.register_first(event, handler)
        for event, handler in rest:
            ev.register(event, handler)

    def _uninstall_hooks(self, client: Any) -> None:
        """Take every hook of :meth:`_hooks` off ``client`` (botocore ignores one that is not there:
        a :meth:`start` that failed half way)."""
        ev = client.meta.events
        for event, handler in self._hooks():
            ev.unregister(event, handler)

    # -- capacity reservations (awsprovider.ec2.capacityreservations) ---------------------------
    @staticmethod
    def _stash_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["karpy_params"] = dict(params)

    def _on_reservation_call(self, model: Any, context: dict[str, Any], **_: Any) -> Any:
        """Answer a capacity reservation operation from the store: serialised to EC2's XML by
        moto's EC2 serializer, parsed back by botocore's EC2 parser (the real response shapes)."""
        from botocore.awsrequest import AWSResponse
        from botocore.parsers import create_parser
        from moto.core.serialize import EC2Serializer
        from moto.core.utils import get_service_model
        from xml.sax.saxutils import escape

        params = context.get("karpy_params") or {}
        moto_op = get_service_model("ec2").operation_model(model.name)
        raw: dict[str, Any]
        try:
            with MOTO_LOCK:
                result: Any = self.reservations.call(model.name, params)
        except CapacityReservationError as e:
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{escape(e.code)}</Code>'
                    f"<Message>{escape(e.message)}</Message></Error></Errors><RequestID>karpy</RequestID></Response>")
            raw = {"body": body.encode(), "headers": {}, "status_code": 400}
        else:
            out = EC2Serializer(moto_op).serialize(result)
            # moto 5.2.3 types the serialized body ``str | bytes``
            text = out["body"]
            raw = {"body": text.encode() if isinstance(text, str) else text, "headers": dict(out["headers"]),
                   "status_code": out["status_code"]}
        parsed = create_parser("ec2").parse(raw, model.output_shape)
        url = f"https://ec2.{self.region}.amazonaws.com/"
        return AWSResponse(url, raw["status_code"], raw["headers"], None), parsed

    def _on_launch_template_created(self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any],
                                    **_: Any) -> None:
        params = context.get("karpy_params") or {}
        if getattr(http_response, "status_code", 200) < 300 and "Error" not in parsed and params:
            self._template_targets[str(params["LaunchTemplateName"])] = reservation_target(
                params.get("LaunchTemplateData") or {})

    def _on_instances_terminated(self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any],
                                 **_: Any) -> None:
        params = context.get("karpy_params") or {}
        if getattr(http_response, "status_code", 200) >= 300 or "Error" in parsed:
            return
        if self._reservations:
            self._reservations.release(str(i) for i in params.get("InstanceIds") or [])
        # what EC2 forgets an hour later (awsprovider.ec2.retention)
        self._terminated.terminated((t["InstanceId"] for t in parsed.get("TerminatingInstances") or ()
                                     if (t.get("CurrentState") or {}).get("Name") in TERMINATING),
                                    self.current_time())

    def _forget_terminated(self) -> None:
        """Drop from moto the instances terminated over an hour ago (awsprovider.ec2.retention)."""
        due = self._terminated.due(self.current_time())
        if due and self._account is not None:
            from moto.ec2.models import ec2_backends

            forget(ec2_backends[self._account][self.region], due)

    def _reservation_targets(self, params: Mapping[str, Any]) -> list[tuple[str, str] | None] | None:
        """Per launch template config, the reservation its template targets; None when no template
        of the request targets one (not a reserved launch)."""
        if params.get("DryRun") or params.get("Type", "maintain") != "instant":
            return None
        targets = [self._template_targets.get(str((ltc.get("LaunchTemplateSpecification") or {})
                                                  .get("LaunchTemplateName") or ""))
                   for ltc in params.get("LaunchTemplateConfigs") or []]
        return targets if any(t is not None for t in targets) else None

    def _next_fleet_id(self) -> str:
        self._fleet_counter += 1
        return f"fleet-00000000-0000-4000-8000-{self._fleet_counter:012x}"

    def _on_provide_params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> dict[str, Any] | None:
        if self._bypass:
            return None
        now = self.current_time()
        # No deep copy: nothing here or in botocore mutates the nested request (the hooks build a
        # new request instead of editing ``params``; botocore only adds top-level keys such as
        # ``ClientToken`` to its own dict, and the top level is copied). The record therefore
        # shares the caller's nested structures: a caller must not edit a request after sending
        # it (karpy builds every request fresh).
        record = FleetRecord(request=dict(params), now=now)
        self.records.append(record)
        if self.records_limit is not None and len(self.records) > self.records_limit:
            del self.records[:len(self.records) - self.records_limit]
        pending = _Pending(record)
        context[_CONTEXT_KEY] = pending
        targets = self._reservation_targets(params)
        if targets is None and not is_modelled_request(params):
            record.sent = record.request
            return None
        if targets is not None:
            decisions = allocate_reserved(params, self.allocator.overrides(params), targets, self.reservations, now)
        else:
            decisions = self.allocator.allocate(params, now)
        record.decisions = tuple(decisions)
        pending.errors = _dedupe_errors(decisions)
        groups: dict[int, int] = {}
        for d in decisions:
            if d.chosen is not None:
                groups[d.chosen.override_index] = groups.get(d.chosen.override_index, 0) + 1
        if not groups:
            pending.all_failed = True
            return None
        flat = [(ltc, ovr) for ltc in params["LaunchTemplateConfigs"] for ovr in (ltc.get("Overrides") or [])]
        flat_config = [ci for ci, ltc in enumerate(params["LaunchTemplateConfigs"]) for _ in (ltc.get("Overrides") or [])]
        requests: list[dict[str, Any]] = []
        for index, count in groups.items():
            ltc, ovr = flat[index]
            new = {k: v for k, v in params.items() if k not in ("LaunchTemplateConfigs", "TargetCapacitySpecification")}
            # Shallow copies suffice: the specification and the override are flat maps of scalars
            # in every request the model decides, and moto does not edit what it is sent.
            new["LaunchTemplateConfigs"] = [
                {"LaunchTemplateSpecification": dict(ltc["LaunchTemplateSpecification"]), "Overrides": [dict(ovr)]}
            ]
            tcs = {k: v for k, v in params["TargetCapacitySpecification"].items()
                   if k not in ("OnDemandTargetCapacity", "SpotTargetCapacity")}
            tcs["TotalTargetCapacity"] = count
            if targets is not None:
                # moto launches nothing for capacity-block / reserved-capacity: the reservation
                # decided, moto stores an on-demand instance
                tcs["DefaultTargetCapacityType"] = "on-demand"
                target = targets[flat_config[index]]
                pending.reservation_ids.append(target[0] if target is not None else "")
            new["TargetCapacitySpecification"] = tcs
            requests.append(new)
        record.sent = requests[0]
        pending.extra_requests = requests[1:]
        return requests[0]

    def _bind_reservation(self, reservation_id: str, instances: Iterable[Mapping[str, Any]]) -> None:
        if reservation_id:
            self.reservations.bind((str(i) for inst in instances for i in inst.get("InstanceIds") or []),
                                   reservation_id)

    def _on_before_call(self, context: dict[str, Any], **_: Any) -> Any:
        pending: _Pending | None = context.get(_CONTEXT_KEY)
        if pending is None or not pending.all_failed:
            return None
        from botocore.awsrequest import AWSResponse

        parsed = {
            "FleetId": self._next_fleet_id(),
            "Instances": [],
            "Errors": copy.deepcopy(pending.errors),
            "ResponseMetadata": {"HTTPStatusCode": 200, "HTTPHeaders": {}, "RetryAttempts": 0},
        }
        # botocore-stubs ask for HTTPHeaders; AWSResponse copies any mapping into a HeadersDict
        return AWSResponse(f"https://ec2.{self.region}.amazonaws.com/", 200, {}, None), parsed  # type: ignore[arg-type]

    def _on_after_call(self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        pending: _Pending | None = context.get(_CONTEXT_KEY)
        if pending is None:
            return
        ok = getattr(http_response, "status_code", 200) < 300 and "Error" not in parsed
        if ok and not pending.all_failed:
            rids = iter(pending.reservation_ids)
            self._bind_reservation(next(rids, ""), parsed.get("Instances") or [])
            for extra in pending.extra_requests:
                self._bypass = True
                try:
                    more = self._client.create_fleet(**extra)
                finally:
                    self._bypass = False
                self._bind_reservation(next(rids, ""), more.get("Instances") or [])
                parsed.setdefault("Instances", []).extend(more.get("Instances", []))
            if pending.errors:
                parsed.setdefault("Errors", []).extend(copy.deepcopy(pending.errors))
        pending.record.response = copy.deepcopy({k: v for k, v in parsed.items() if k != "ResponseMetadata"})
