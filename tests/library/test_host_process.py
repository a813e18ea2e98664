"""A good guest (issue #15, "the host process"): ``karpy.simulate`` leaves the host as it found it.

No environment variable changes (not even transiently), no moto mock is active during or after the
run, and a host boto3 client created before, during or after the run is not answered by moto --
also when the simulation raises. The host-client check is offline: a ``before-send`` handler on the
host's client answers with a sentinel response; had moto's stubber been active it would have
answered first (botocore takes the first non-None ``before-send`` response, and moto's handler is
registered before any client-level one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse

import karpy
from awsprovider.ec2 import backend as ec2_backend
from awsprovider.ec2.backend import MockedEC2

EXAMPLE = Path(__file__).resolve().parents[2] / "karpy" / "examples" / "generation-preference.yaml"
HOST_KEY = "AKIAHOSTCHECK"
SENTINEL_BODY = b"<CreateBucketResponse><Location>/host-bucket</Location></CreateBucketResponse>"


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


def host_s3_client() -> tuple[Any, list[str]]:
    """The host's own S3 client (default session, credentials from the environment) with an
    offline sentinel transport: every request it would send is recorded and answered locally."""
    client = boto3.session.Session(region_name="us-east-1").client("s3")
    sent: list[str] = []

    def transport(request: Any, **_: Any) -> AWSResponse:
        sent.append(request.url)
        return AWSResponse(request.url, 200, {"x-amz-request-id": "HOST"}, _Raw(SENTINEL_BODY))

    client.meta.events.register_last("before-send", transport)
    return client, sent


def assert_host_unmocked(client: Any, sent: list[str]) -> None:
    out = client.create_bucket(Bucket="host-bucket")
    assert out["ResponseMetadata"]["RequestId"] == "HOST"  # moto would answer with its own id
    assert sent and sent[-1].startswith("https://host-bucket.s3.amazonaws.com/")
    creds = client._request_signer._credentials  # what the host signs with: its own key, not moto's
    assert creds.access_key == HOST_KEY


def moto_active_mocks() -> int:
    from moto.core.models import MockAWS

    return MockAWS._nested_count


def environ() -> dict[str, str]:
    """``os.environ`` without pytest's own per-phase variable."""
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture
def host_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", HOST_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("MOTO_EC2_LOAD_DEFAULT_AMIS", raising=False)
    return environ()


def test_simulate_leaves_environment_mocks_and_host_clients_alone(host_env: dict[str, str]) -> None:
    before_client, before_sent = host_s3_client()
    during: list[tuple[dict[str, str], int]] = []

    def progress(*_: Any) -> None:
        during.append((environ(), moto_active_mocks()))
        client, sent = host_s3_client()  # a host client created while karpy runs
        assert_host_unmocked(client, sent)

    result = karpy.simulate(str(EXAMPLE), progress=progress)
    assert result.exit_code == 0 and result.launched

    assert environ() == host_env
    assert during and all(env == host_env and active == 0 for env, active in during)
    assert moto_active_mocks() == 0
    assert_host_unmocked(before_client, before_sent)
    after_client, after_sent = host_s3_client()
    assert_host_unmocked(after_client, after_sent)
    assert not ec2_backend._claimed_accounts  # the run's moto state was dropped at the end


def test_simulate_that_raises_leaves_the_host_alone(host_env: dict[str, str]) -> None:
    class Boom(Exception):
        pass

    def progress(*_: Any) -> None:
        raise Boom

    with pytest.raises(Boom):
        karpy.simulate(str(EXAMPLE), progress=progress)
    assert environ() == host_env
    assert moto_active_mocks() == 0
    assert not ec2_backend._claimed_accounts
    client, sent = host_s3_client()
    assert_host_unmocked(client, sent)


def test_host_moto_mock_is_not_disturbed_by_karpy(host_env: dict[str, str]) -> None:
    """A host testing its own code with moto keeps its state and sees none of karpy's."""
    from moto import mock_aws

    with mock_aws():
        host = boto3.session.Session(region_name="us-east-1").client("ec2")
        vpc = host.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
        host_vpcs = {v["VpcId"] for v in host.describe_vpcs()["Vpcs"]}
        result = karpy.simulate(str(EXAMPLE))
        assert result.launched
        assert {v["VpcId"] for v in host.describe_vpcs()["Vpcs"]} == host_vpcs and vpc in host_vpcs
        assert host.describe_instances()["Reservations"] == []  # karpy's instances live elsewhere
    assert environ() == host_env


def test_backends_running_at_once_are_isolated_and_release_their_state() -> None:
    from moto.ec2.models import ec2_backends

    with MockedEC2() as a, MockedEC2() as b:
        assert a.account_id != b.account_id
        a.create_launch_template("only-in-a")
        names = lambda e: {t["LaunchTemplateName"] for t in e.client.describe_launch_templates()["LaunchTemplates"]}  # noqa: E731
        assert names(a) == {"only-in-a"} and names(b) == set()
        accounts = (a.account_id, b.account_id)
        assert all(acc in ec2_backends for acc in accounts)
    assert not any(acc in ec2_backends for acc in accounts)
    assert not ec2_backend._claimed_accounts


def test_ids_depend_only_on_the_backend_seed() -> None:
    """Two backends with one seed give the same ids, interleaved or not, and the host's moto
    generator is left where it was."""
    from moto.moto_api._internal import mock_random

    outer = mock_random.getstate()
    with MockedEC2(seed=7) as a:
        first = [a.create_launch_template(f"lt{i}") for i in range(3)]
    with MockedEC2(seed=7) as a, MockedEC2(seed=7) as b:
        interleaved = [(a.create_launch_template(f"lt{i}"), b.create_launch_template(f"lt{i}")) for i in range(3)]
    assert [x for x, _ in interleaved] == first == [y for _, y in interleaved]
    assert mock_random.getstate() == outer


def test_host_endpoint_url_environment_does_not_redirect_karpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9")
    with MockedEC2() as ec2:
        assert ec2.client.meta.endpoint_url == "https://ec2.us-east-1.amazonaws.com"
        assert ec2.default_subnets()
