"""The mocked EC2's request path (awsprovider/ec2/backend.py): moto's EC2 dispatcher with its
handler list computed once, and unsigned requests -- both must answer exactly as the plain path."""

from __future__ import annotations

import inspect
from typing import Any

from moto.core.utils import method_names_from_class

from awsprovider.ec2.backend import MockedEC2, _ec2_dispatcher


def test_dispatcher_finds_the_same_handler_methods_as_moto() -> None:
    from moto.ec2.responses import EC2Response

    dispatcher = _ec2_dispatcher()
    assert issubclass(dispatcher, EC2Response) and dispatcher is _ec2_dispatcher()
    # what moto's call_action asks, on the subclass and on moto's own class
    assert method_names_from_class(dispatcher) == method_names_from_class(EC2Response)
    # the same handlers; setup_class is moto's plus noting the handler name (see the test below)
    assert all(getattr(dispatcher, n) is getattr(EC2Response, n) for n in method_names_from_class(EC2Response)
               if n != "setup_class")
    # moto's class is left as it was: its dir is the full one, not the function list
    assert len(dir(EC2Response)) > len(method_names_from_class(EC2Response))
    assert type(EC2Response) is type


def test_dispatcher_answers_as_moto_for_a_request_sequence() -> None:
    """The same requests through the cached dispatcher and through moto's own ``EC2Response``
    (swapped in for the second backend) give the same answers, ids included."""
    import awsprovider.ec2.backend as backend
    from moto.ec2.responses import EC2Response

    def run() -> list[Any]:
        with MockedEC2() as ec2:
            net = ec2.create_network(tags={"k": "v"})
            lt = ec2.create_launch_template("karpy-t1")
            out: list[Any] = [net, lt, ec2.client.describe_subnets()["Subnets"],
                              ec2.client.describe_security_groups()["SecurityGroups"]]
            try:
                ec2.client.describe_launch_templates(LaunchTemplateNames=["missing"])
            except Exception as e:  # the NotFound error path Karpenter's ensureLaunchTemplate takes
                out.append(str(e))
            return out

    cached = run()
    saved = list(backend._EC2_DISPATCHER)
    backend._EC2_DISPATCHER[:] = [EC2Response]
    try:
        plain = run()
    finally:
        backend._EC2_DISPATCHER[:] = saved
    assert cached == plain


def test_requests_are_unsigned_and_answered() -> None:
    seen: list[dict[str, str]] = []
    with MockedEC2() as ec2:
        ec2.client.meta.events.register_first("before-send.ec2", lambda request, **_: seen.append(dict(request.headers)))
        zones = ec2.client.describe_availability_zones()["AvailabilityZones"]
    assert zones and seen
    assert "Authorization" not in seen[0] and seen[0]["x-moto-account-id"]


def test_function_names_metaclass_only_on_karpy_subclass() -> None:
    dispatcher = _ec2_dispatcher()
    names = [n for n, _ in inspect.getmembers(dispatcher, inspect.isfunction)]
    assert sorted(dir(dispatcher)) == names


def test_dir_while_dispatching_is_the_request_handler_only() -> None:
    """While a request is answered, ``dir`` of the dispatcher is the one handler name its
    ``setup_class`` noted (moto's ``call_action`` only tests ``action in method_names``): the
    membership answer is the full list's for every name, and outside a dispatch ``dir`` is the full
    list again."""
    import awsprovider.ec2.backend as backend

    dispatcher = _ec2_dispatcher()
    full = method_names_from_class(dispatcher)
    assert "describe_subnets" in full and "create_fleet" in full
    for name in [*full, "no_such_action", "dispatch", "setup_class", "__init__", ""]:
        with backend._dispatching():
            backend._DISPATCHING.action = name
            narrowed = method_names_from_class(dispatcher)
            assert (name in narrowed) == (name in full)
            assert all(getattr(dispatcher, n) is getattr(dispatcher, n) for n in narrowed)
        assert method_names_from_class(dispatcher) == full
    seen: list[list[str]] = []
    original = dispatcher.describe_availability_zones

    def spy(self: Any) -> Any:
        seen.append(dir(type(self)))
        return original(self)

    dispatcher.describe_availability_zones = spy
    try:
        with MockedEC2() as ec2:
            ec2.client.describe_availability_zones()
            assert method_names_from_class(dispatcher) == full
    finally:
        del dispatcher.describe_availability_zones
    assert seen == [["describe_availability_zones"]] * 2  # start() asks for the zones too
    assert method_names_from_class(dispatcher) == full
