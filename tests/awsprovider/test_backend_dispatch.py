"""The mocked EC2's request path (awsprovider/ec2/backend.py): moto's EC2 dispatcher with its
handler list computed once, and unsigned requests -- both must answer exactly as the plain path."""

from __future__ import annotations

import inspect
import re
from typing import Any

from moto.core.utils import method_names_from_class

from awsprovider.ec2.backend import MockedEC2, _ec2_dispatcher


def test_dispatcher_finds_the_same_handler_methods_as_moto() -> None:
    from moto.ec2.responses import EC2Response

    dispatcher = _ec2_dispatcher()
    assert issubclass(dispatcher, EC2Response) and dispatcher is _ec2_dispatcher()
    # what moto's call_action asks, on the subclass and on moto's own class
    assert method_names_from_class(dispatcher) == method_names_from_class(EC2Response)
    # the same handlers; setup_class (moto's plus noting the handler name) and serialized (moto's with
    # the memoised value picker) are karpy's, see the tests below
    assert all(getattr(dispatcher, n) is getattr(EC2Response, n) for n in method_names_from_class(EC2Response)
               if n not in ("setup_class", "serialized"))
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


def _raw_bodies(dispatcher: type) -> list[Any]:
    """The raw answers (status, body) of a request sequence answered by ``dispatcher``: networks,
    tags, launch templates, instances (RunInstances and DescribeInstances have response
    transformers), instance types (deep structures), an error."""
    import awsprovider.ec2.backend as backend

    bodies: list[Any] = []

    class Recording(dispatcher):  # type: ignore[misc,valid-type]
        @classmethod
        def dispatch(cls, *args: Any, **kwargs: Any) -> Any:
            status, headers, body = super().dispatch(*args, **kwargs)
            bodies.append((status, re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "(wall clock)", body)))
            return status, headers, body

    saved = list(backend._EC2_DISPATCHER)
    backend._EC2_DISPATCHER[:] = [Recording]
    try:
        with MockedEC2() as ec2:
            c = ec2.client
            net = ec2.create_network(tags={"k": "v"})
            ec2.create_launch_template("karpy-t1", tags={"a": "b"})
            c.describe_launch_templates(LaunchTemplateNames=["karpy-t1"])
            try:
                c.describe_launch_templates(LaunchTemplateNames=["missing"])
            except Exception:
                pass
            subnet = next(iter(net.subnets.values()))
            c.run_instances(ImageId="ami-12c6146b", MinCount=2, MaxCount=2, InstanceType="m5.large", SubnetId=subnet,
                            ClientToken="t1",  # botocore's default is a random uuid
                            TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "n", "Value": "1"}]}])
            c.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="c5.xlarge", ClientToken="t2")
            c.describe_instances()
            c.describe_instance_types(InstanceTypes=["m5.large", "p4d.24xlarge", "c7gd.metal"])
            c.describe_subnets()
            c.describe_security_groups()
            c.describe_vpcs()
            c.describe_tags()
            c.describe_availability_zones()
    finally:
        backend._EC2_DISPATCHER[:] = saved
    return bodies


def test_serialised_answers_are_moto_s_byte_for_byte() -> None:
    """The dispatcher's serializer (moto's, with the value picker's alias names and transformer
    choice memoised) writes exactly the XML moto's own writes, request ids included -- twice, so the
    second pass answers from the memo."""
    from moto.ec2.responses import EC2Response

    plain = _raw_bodies(EC2Response)
    assert len(plain) > 15 and any(status >= 400 for status, _ in plain)
    assert _raw_bodies(_ec2_dispatcher()) == plain
    assert _raw_bodies(_ec2_dispatcher()) == plain


def test_picked_values_match_moto_s_picker() -> None:
    """The memoised picker against moto's own, member by member: objects with and without an
    explicit ``Meta.serialization_aliases``, class-prefixed attribute names, dict results, and a
    response transformer."""
    from moto.core.serialize import EC2Serializer, XFormedAttributePicker
    from moto.core.utils import get_service_model

    import awsprovider.ec2.backend as backend

    class Subnet:
        class Meta:
            serialization_aliases = {"SubnetId": "the_id"}

        the_id = "subnet-1"
        subnet_arn = "arn:x"
        availability_zone = "us-east-1a"
        state = "available"

    class Plain:
        subnet_id = "subnet-2"
        cidr_block = "10.0.0.0/24"

    operation = get_service_model("ec2").operation_model("DescribeSubnets")
    subnet_shape = operation.output_shape.members["Subnets"].member
    transformers = {"Subnet.State": lambda v: f"<{v}>"}
    for transform in ({}, transformers):
        ours = backend._serializer_class(EC2Serializer)(
            operation_model=operation, value_picker=XFormedAttributePicker(response_transformers=transform))
        theirs = EC2Serializer(operation_model=operation,
                               value_picker=XFormedAttributePicker(response_transformers=transform))
        for obj in (Subnet(), Plain(), {"SubnetId": "subnet-3", "State": "pending"}, {}):
            for key, member in subnet_shape.members.items():
                member.parent = subnet_shape  # as moto's structure serialisation does
                for s in (ours, theirs):
                    s.path[:] = ["DescribeSubnets", "Subnets", "Subnet"]
                for _ in range(2):  # a miss, then the memo
                    assert ours.get_value(obj, key, member) == theirs.get_value(obj, key, member), (obj, key)
