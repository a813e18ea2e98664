"""v1.37 gangs on real prices (the bundled 2026-07-20 AWS table): what Karpenter v1.14 (no gang
awareness) launches for a 16-pod training gang, when the gang binds, what it costs; the same
under a NodePool CPU limit that fits 12; GenericWorkload off (the 1.37 default); the version axis
and bad input."""

from __future__ import annotations

from typing import Any

import pytest

import karpy
from karpy.api.loader import ManifestError, load_manifests
from karpy.featuregates import FeatureGateError, parse_feature_gates

_POOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  LIMITS
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""
_GROUP = """---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: MIN}}
"""
_POD = """---
apiVersion: v1
kind: Pod
metadata: {name: worker-I, namespace: default}
spec:
  schedulingGroup: {podGroupName: train}
  containers: [{name: c, image: trainer, resources: {requests: {cpu: "3", memory: 8Gi}}}]
"""


def _gang(pods: int = 16, min_count: int = 16, cpu_limit: str | None = None, group: bool = True) -> str:
    limits = f'limits: {{cpu: "{cpu_limit}"}}' if cpu_limit else ""
    text = _POOL.replace("LIMITS", limits)
    if group:
        text += _GROUP.replace("MIN", str(min_count))
    return text + "".join(_POD.replace("worker-I", f"worker-{i}") for i in range(pods))


def _run(text: str, **kwargs: Any) -> dict[str, Any]:
    doc: dict[str, Any] = karpy.simulate(text, prices="2026-07-20", **kwargs).to_document()
    return doc


@pytest.fixture(scope="module")
def gang16() -> dict[str, Any]:
    return _run(_gang(), feature_gates={"GenericWorkload": True})


def test_gang16_empty_cluster_launches_and_binds(gang16: dict[str, Any]) -> None:
    """16 pods x 3 vCPU, minCount 16, empty cluster: Karpenter packs the members (one by one, no
    gang awareness) onto one m5.16xlarge; the gang binds whole once the node is up."""
    assert [n["instance_type"] for n in gang16["nodeclaims"]] == ["m5.16xlarge"]
    assert all(p["node"] for p in gang16["pods"].values())
    assert len({p["node"] for p in gang16["pods"].values()}) == 1
    assert gang16["cost_per_hour"] == pytest.approx(3.072)
    assert gang16["simulation"]["kubernetes_version"] == "1.37"
    assert not any("PodGroup" in w for w in gang16["warnings"])
    # the gang binds in one cycle, as soon as the node has initialized (the group retried after its
    # backoff: no node at first is no rejector plugin, so no event is needed to wake it)
    bound = {e["t"] for e in gang16["timeline"] if e["kind"] == "pod.bound"}
    initialized = [e["t"] for e in gang16["timeline"] if e["kind"] == "nodeclaim.initialized"]
    assert bound == {36.0} and initialized == [36.0]


def test_gang16_under_cpu_limit_partial_and_warned() -> None:
    """NodePool limit 40 vCPU fits 12 members: Karpenter launches capacity for 12, kube-scheduler
    binds none (minCount 16) and karpy says so."""
    doc = _run(_gang(cpu_limit="40"), feature_gates={"GenericWorkload": True})
    assert sorted(n["instance_type"] for n in doc["nodeclaims"]) == ["m5.2xlarge", "m5.8xlarge"]
    assert not any(p["node"] for p in doc["pods"].values())
    assert doc["cost_per_hour"] == pytest.approx(1.92)
    warning = next(w for w in doc["warnings"] if w.startswith("PodGroup default/train"))
    assert "found room for 12 of its 16 pods" in warning and "no gang awareness" in warning


def test_generic_workload_off_individual_pods() -> None:
    """GenericWorkload off (the 1.37 default): the same manifests schedule pod by pod (12 of 16
    run under the limit) and a warning says the PodGroup is ignored."""
    doc = _run(_gang(cpu_limit="40"))
    assert sum(1 for p in doc["pods"].values() if p["node"]) == 12
    assert any(w.startswith("GenericWorkload is off") for w in doc["warnings"])


def test_gated_gang_is_invisible_to_karpenter() -> None:
    """A gang with fewer pods than minCount is held at PreEnqueue: no PodScheduled condition, so
    Karpenter launches nothing, and the warning says why."""
    doc = _run(_gang(pods=4, min_count=8), feature_gates={"GenericWorkload": True})
    assert doc["nodeclaims"] == []
    assert any("held at PreEnqueue" in w for w in doc["warnings"])


# -- the version axis and bad input -----------------------------------------------------------------

def test_unknown_gate_is_bad_input() -> None:
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        parse_feature_gates("Nope=true")


def test_gate_not_at_version_is_bad_input() -> None:
    with pytest.raises(FeatureGateError, match="does not exist in Kubernetes 1.35"):
        parse_feature_gates("TopologyAwareWorkloadScheduling=true", "1.35")


def test_gate_dependency_is_bad_input() -> None:
    with pytest.raises(FeatureGateError, match="depends on GenericWorkload"):
        parse_feature_gates("CompositePodGroup=true,TopologyAwareWorkloadScheduling=true,GenericWorkload=false")


def test_v1alpha1_workload_at_137_is_bad_input() -> None:
    text = ("apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: w, namespace: default}\n"
            "spec: {podGroups: [{name: g, policy: {gang: {minCount: 2}}}]}\n")
    with pytest.raises(ManifestError, match="not served by Kubernetes 1.37 .it was removed in Kubernetes 1.36") as e:
        load_manifests(text)
    assert e.value.field_path == "apiVersion" and e.value.document_index == 1
    assert load_manifests(text, kubernetes_version="1.35").scheduling_workloads


def test_workload_ref_at_137_is_bad_input() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
            "  workloadRef: {name: w, podGroup: g}\n  containers: [{name: c, image: x}]\n")
    with pytest.raises(ManifestError, match="removed in Kubernetes 1.36") as e:
        load_manifests(text)
    assert e.value.field_path == "spec.workloadRef"


def test_v1beta1_at_135_is_bad_input() -> None:
    with pytest.raises(ManifestError, match="not served by Kubernetes 1.35"):
        load_manifests(_GROUP.replace("MIN", "2"), kubernetes_version="1.35")


def test_135_document_records_version() -> None:
    doc = karpy.simulate(_POOL.replace("LIMITS", ""), prices="2026-07-20", kubernetes_version="1.35").to_document()
    assert doc["simulation"]["kubernetes_version"] == "1.35"


_WL = """apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: job, namespace: default}
spec:
  podGroupTemplates:
  - {name: workers, schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: job-workers, namespace: default}
spec:
  workloadRef: {workloadName: job, templateName: TEMPLATE}
  schedulingPolicy: {gang: {minCount: 2}}
"""


def test_workload_template_found() -> None:
    m = load_manifests(_WL.replace("TEMPLATE", "workers"))
    assert m.workloads_v1beta1[0].template("workers") is not None


def test_missing_workload_template_is_bad_input() -> None:
    with pytest.raises(ManifestError) as e:
        load_manifests(_WL.replace("TEMPLATE", "nope"))
    assert str(e.value) == ('<yaml text>: document 2 (PodGroup "job-workers"): spec.workloadRef.templateName: '
                            'Workload "job" has no template "nope"')


def test_missing_workload_is_bad_input() -> None:
    with pytest.raises(ManifestError, match='no scheduling.k8s.io/v1beta1 Workload "job"') as e:
        load_manifests(_WL.split("---\n", 1)[1].replace("TEMPLATE", "workers"))
    assert e.value.field_path == "spec.workloadRef.workloadName"


def test_composite_pod_group_cycle_is_bad_input() -> None:
    cpg = """---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: NAME, namespace: default}
spec:
  parentCompositePodGroupName: PARENT
  workloadRef: {workloadName: job, templateName: workers}
  schedulingPolicy: {basic: {}}
"""
    text = (_WL.replace("TEMPLATE", "workers") + cpg.replace("NAME", "a").replace("PARENT", "b")
            + cpg.replace("NAME", "b").replace("PARENT", "a"))
    with pytest.raises(ManifestError, match="CompositePodGroup cycle: a -> b -> a") as e:
        load_manifests(text)
    assert e.value.field_path == "spec.parentCompositePodGroupName" and e.value.document_index == 3


def test_explain_says_what_karpenter_did_with_the_gang() -> None:
    """karpy explain --pod on a member of the gang left unplaced under the limit: the gang line."""
    from karpy.explain import explain_pod, render_explain

    result = karpy.simulate(_gang(cpu_limit="40"), prices="2026-07-20", feature_gates={"GenericWorkload": True})
    trace = explain_pod(result, "default/worker-3")
    assert trace["gang"].startswith("PodGroup default/train (gang, minCount 16): not scheduled")
    assert "  gang: PodGroup default/train" in render_explain(trace)
    assert "gang" in result.to_document()["explain"]["pods"]["default/worker-3"]


def test_cli_version_and_gates(tmp_path: Any) -> None:
    """--kubernetes-version and kube-scheduler gates on the CLI: bad input is one line, exit 2."""
    from click.testing import CliRunner

    from karpy.cli import cli

    path = tmp_path / "gang.yaml"
    path.write_text(_gang(pods=2, min_count=2), encoding="utf-8")
    runner = CliRunner()
    bad = runner.invoke(cli, ["simulate", str(path), "--cloud-provider", "fake", "--feature-gates", "Bogus=true"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "unrecognized feature gate: Bogus" in bad.output
    old = runner.invoke(cli, ["simulate", str(path), "--cloud-provider", "fake", "--kubernetes-version", "1.35",
                              "--feature-gates", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"])
    assert old.exit_code == 2 and "does not exist in Kubernetes 1.35" in old.output
    served = runner.invoke(cli, ["validate", str(path), "--kubernetes-version", "1.35"])
    assert served.exit_code == 2 and "not served by Kubernetes 1.35" in served.output
    assert runner.invoke(cli, ["validate", str(path)]).exit_code == 0
