"""karpy.testing as a pytest plugin: run small test files with ``pytester`` and check pass/fail and
the failure output. Inner runs use Karpenter's fake cloud provider (fast); the AWS path is covered by
tests/cookbook."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from karpy.testing import (
    Scenario,
    assert_launched,
    assert_pending,
    explain,
    generation_of,
    summarize,
)

#: inner runs: no cache dir; karpy.testing is already imported by this process, so pytest cannot
#: assertion-rewrite it again and says so -- harmless here
INNER_ARGS = ("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")
CONFTEST = "# karpy's plugin loads through its pytest11 entry point\n"

HEADER = textwrap.dedent("""
    import pytest
    from karpy.testing import (assert_all_running, assert_cost, assert_cost_at_most, assert_failed_launches,
                               assert_launched, assert_pending, make_deployment, make_nodepool, make_pod)

    @pytest.fixture(scope="module")
    def result(karpy_scenario):
        return karpy_scenario(make_nodepool(), make_deployment("web", 3, requests={"cpu": "1"}),
                              cloud_provider="fake", region=None).run()
""")


def _write(pytester: pytest.Pytester, body: str) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner=HEADER + textwrap.dedent(body))


def test_passing_assertions_pass(pytester: pytest.Pytester) -> None:
    _write(pytester, """
        def test_ok(result):
            [claim] = assert_launched(result, count=1, nodepool="default", capacity_type="spot",
                                      instance_types="default-*")
            assert_all_running(result)
            assert_failed_launches(result, count=0)
            assert_cost_at_most(result, 10.0)
            assert_cost(result, result.cost_per_hour)
            assert claim["pods"] and len(claim["pods"]) == 3

        def test_pending_pods(karpy_scenario):
            r = karpy_scenario(make_nodepool(), make_pod("huge", requests={"cpu": "10000"}),
                               cloud_provider="fake", region=None).run()
            assert_pending(r, ["default/huge"])
            assert_pending(r, 1)
            assert_pending(r, "huge")
            assert_launched(r, count=0)
    """)
    res = pytester.runpytest(*INNER_ARGS)
    res.assert_outcomes(passed=2)


def test_failing_assertion_prints_the_answer_and_the_table(pytester: pytest.Pytester) -> None:
    _write(pytester, """
        def test_wrong_type(result):
            assert_launched(result, instance_types="c8i.*", capacity_type="on-demand")
    """)
    res = pytester.runpytest(*INNER_ARGS)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([
        "*AssertionError: launched NodeClaims do not match:",
        "*default-*: instance type default-instance-type not in ?'c8i.*'?",
        "*default-*: capacity type spot != on-demand",
        "*why: default-instance-type won: *",
        "*NODECLAIMS (1)",
        "*NAME*NODEPOOL*INSTANCE TYPE*CAPACITY*ZONE*$/H*PODS",
        "*default-instance-type*spot*",
        "*total: $*/h",
        "*the decision trace: print(result.explain_text())*",
    ])


@pytest.mark.parametrize(("body", "expected"), [
    ("assert_pending(result)", "*AssertionError: expected pending pods, every pod runs"),
    ("assert_cost_at_most(result, 0.01)", "*AssertionError: cost $*/h exceeds $0.01000/h"),
    ("assert_cost(result, 1.5)", "*AssertionError: cost $*/h != expected $1.50000/h"),
    ("assert_launched(result, count=2)", "*AssertionError: expected 2 launched NodeClaim(s), got 1"),
    ("assert_failed_launches(result)", "*AssertionError: expected at least 1 failed launch(es), got 0"),
    ("assert_launched(result, generation=8)", "*generation None not in ?'8'?"),
])
def test_each_assertion_fails_with_its_reason_and_the_table(pytester: pytest.Pytester, body: str,
                                                            expected: str) -> None:
    _write(pytester, f"""
        def test_it(result):
            {body}
    """)
    res = pytester.runpytest(*INNER_ARGS)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([expected, "*NODECLAIMS (1)", "*total: $*/h"])


def test_pending_assertion_names_the_pods_and_their_message(pytester: pytest.Pytester) -> None:
    _write(pytester, """
        def test_it(karpy_scenario):
            r = karpy_scenario(make_nodepool(), make_pod("huge", requests={"cpu": "10000"}),
                               cloud_provider="fake", region=None).run()
            assert_all_running(r)
    """)
    res = pytester.runpytest(*INNER_ARGS)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*expected every pod to run, 1 pending: default/huge",
                              "*PENDING PODS (1)", "*default/huge*"])


def test_yaml_paths_resolve_against_the_rootdir(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    (pytester.path / "manifests").mkdir()
    (pytester.path / "manifests" / "all.yaml").write_text(textwrap.dedent("""
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: default}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
              requirements: []
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p, namespace: default}
        spec:
          containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
    """))
    pytester.mkpydir("sub")
    (pytester.path / "sub" / "test_yaml.py").write_text(textwrap.dedent("""
        import os
        from karpy.testing import assert_all_running, assert_launched

        def test_it(karpy_scenario, tmp_path):
            os.chdir(tmp_path)  # the relative path does not exist here; it resolves against the rootdir
            r = karpy_scenario("manifests/all.yaml", cloud_provider="fake", region=None).run()
            assert_launched(r, count=1)
            assert_all_running(r)
    """))
    res = pytester.runpytest(*INNER_ARGS)
    res.assert_outcomes(passed=1)


def test_plugin_reports_itself_in_the_header(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x="def test_x(): pass\n")
    res = pytester.runpytest(*INNER_ARGS)
    res.stdout.fnmatch_lines(["karpy.testing plugin (karpy *)"])
    res.assert_outcomes(passed=1)


def test_loading_the_plugin_imports_no_engine_and_no_boto3() -> None:
    code = ("import sys, karpy.testing; "
            "print(sorted(m for m in ('boto3', 'moto', 'awsprovider', 'karpy.simulator', 'karpy.sim.simulation') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the helpers directly ---------------------------------------------------------------------------------
class _StubResult:
    """A result with an explain trace (the shape Result may grow)."""

    def __init__(self, trace: str | None) -> None:
        self.trace = trace

    def to_document(self) -> dict[str, Any]:
        return {"region": "us-east-1", "prices": {"date": "2026-07-20"}, "nodeclaims": [],
                "pods": {"default/a": {"phase": "Pending", "node": None, "message": "no nodepool"}},
                "cost_per_hour": 0.0}

    def explain_text(self) -> str:
        return self.trace or ""


def test_failure_message_uses_the_explain_trace_when_the_result_has_one() -> None:
    with pytest.raises(AssertionError) as err:
        assert_launched(_StubResult("relaxed preferred node affinity term 0 of default/a"))
    message = str(err.value)
    assert "expected at least one launched NodeClaim, got none" in message
    assert "PENDING PODS (1)" in message
    assert "EXPLAIN\nrelaxed preferred node affinity term 0 of default/a" in message
    assert "NODECLAIMS (JSON" not in message


def test_pending_reason_mismatch_quotes_the_message() -> None:
    with pytest.raises(AssertionError, match="lacks 'insufficient capacity'.*'no nodepool'"):
        assert_pending(_StubResult(None), reason_contains="insufficient capacity")
    assert assert_pending(_StubResult(None), ["a"], reason_contains="no nodepool") == ["default/a"]


def test_generation_of_reads_the_label_or_the_type_name() -> None:
    assert generation_of("c8i.2xlarge") == "8"
    assert generation_of("m7i-flex.large") == "7"
    assert generation_of("u-12tb1.metal") == "1"
    assert generation_of({"labels": {"karpenter.k8s.aws/instance-generation": "6"}, "instance_type": "x9.y"}) == "6"
    assert generation_of({"labels": {}, "instance_type": None}) is None
    assert generation_of("default-instance-type") is None


def test_scenario_is_immutable_and_runs_once() -> None:
    from karpy.api.builders import make_nodepool, make_pod

    base = Scenario.of([make_nodepool()], make_pod("a", requests={"cpu": "1"}), cloud_provider="fake", region=None)
    first = base.run()
    assert base.run() is first
    failing = base.with_unavailable("*:*:spot")
    assert failing.unavailable == ("*:*:spot",) and base.unavailable == ()
    assert len(base.add(make_pod("b", requests={"cpu": "1"})).manifests) == 3 and len(base.manifests) == 2
    summary = summarize(first)
    assert summary.pending == 0 and summary.instance_types and summary.cost_per_hour == first.cost_per_hour
    assert "NODECLAIMS (1)" in explain(first)
