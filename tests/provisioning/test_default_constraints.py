"""Default topology-spread constraints from ``--scheduler-config`` (off by default).

Ports of pkg/controllers/provisioning/scheduling/defaultconstraints_test.go (D:<line>) and
pkg/operator/options/suite_test.go Describe("SchedulerConfiguration") (O:<line>). The injector's
default: ``zone DoNotSchedule maxSkew 1``."""

from __future__ import annotations

import pytest

import karpy
from karpy.api.builders import make_pod
from karpy.api.meta import LabelSelector, LabelSelectorRequirement
from karpy.api.pod import TopologySpreadConstraint
from karpy.api.service import Service
from karpy.api.workloads import ReplicaSet, ReplicationController, StatefulSet
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.options import SchedulerConfigError, parse_scheduler_config
from karpy.provisioning.defaultconstraints import DefaultTopologySpreadInjector
from tests.manifests import DEFAULT_NODEPOOL

ZONE = "topology.kubernetes.io/zone"
ZONE_DEFAULT = TopologySpreadConstraint(max_skew=1, topology_key=ZONE, when_unsatisfiable="DoNotSchedule")


def rs(name="rs", selector=None, expressions=None):
    sel = {"matchLabels": selector or {}}
    if expressions:
        sel["matchExpressions"] = expressions
    labels = selector or {"app": "web"}
    return ReplicaSet.model_validate({"metadata": {"name": name, "namespace": "default"},
                                      "spec": {"selector": sel, "template": {"metadata": {"labels": labels},
                                                                             "spec": {"containers": [{"name": "c"}]}}}})


def svc(selector, namespace="default", name="svc"):
    return Service.model_validate({"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}})


def owned(labels, kind=None, name="rs", controller=True, api_version="apps/v1", namespace="default"):
    owners = [{"api_version": api_version, "kind": kind, "name": name, "uid": f"{name}-uid",
               "controller": controller}] if kind else []
    return make_pod("p", namespace, labels=labels, owner_references=owners)


def inject(pod, services=(), controllers=(), constraints=(ZONE_DEFAULT,)):
    [out] = DefaultTopologySpreadInjector(constraints, services, controllers).inject([pod])
    if not out.spec.topology_spread_constraints:
        return None
    [tsc] = out.spec.topology_spread_constraints
    assert tsc.topology_key == ZONE
    return tsc.label_selector


def expr(key, values, op="In"):
    return LabelSelectorRequirement(key=key, operator=op, values=values)


def test_replicaset_selector_not_pod_labels():
    # upstream: D:80 "should deduce a ReplicaSet's selector, not the pod's labels"
    r = rs(selector={"app": "web", "pod-template-hash": "abc123"})
    sel = inject(owned({"app": "web", "pod-template-hash": "abc123", "extra": "ignored"}, "ReplicaSet"), controllers=[r])
    assert sel.match_labels == {}
    assert sel.match_expressions == [expr("app", ["web"]), expr("pod-template-hash", ["abc123"])]


def test_statefulset_selector_ignores_volatile_pod_labels():
    # upstream: D:98 "should deduce a StatefulSet's selector and ignore the pod's volatile labels"
    ss = StatefulSet.model_validate({"metadata": {"name": "db", "namespace": "default"},
                                     "spec": {"selector": {"matchLabels": {"app": "db"}},
                                              "template": {"metadata": {"labels": {"app": "db"}},
                                                           "spec": {"containers": [{"name": "c"}]}}}})
    pod = owned({"app": "db", "controller-revision-hash": "db-6f8c", "statefulset.kubernetes.io/pod-name": "db-0",
                 "apps.kubernetes.io/pod-index": "0"}, "StatefulSet", name="db")
    assert inject(pod, controllers=[ss]).match_expressions == [expr("app", ["db"])]


def test_replicaset_match_expressions_verbatim():
    # upstream: D:119 "should carry a ReplicaSet's matchExpressions through verbatim"
    r = rs(expressions=[{"key": "app", "operator": "NotIn", "values": ["other"]}])
    assert inject(owned({"app": "web"}, "ReplicaSet"), controllers=[r]).match_expressions == \
        [expr("app", ["other"], "NotIn")]


def rc(name="rs", selector=None):
    return ReplicationController.model_validate({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": selector, "template": {"metadata": {"labels": {"app": "legacy"}},
                                                    "spec": {"containers": [{"name": "c"}]}}}})


def test_replicationcontroller_selector():
    # upstream: D:137 "should deduce a ReplicationController's selector"
    sel = inject(owned({"app": "legacy"}, "ReplicationController", api_version="v1"),
                 controllers=[rc(selector={"app": "legacy"})])
    assert sel.match_labels == {"app": "legacy"}
    assert sel.match_expressions == []


def test_replicationcontroller_selector_overwrites_a_conflicting_service_label():
    # upstream: D:250 "should let a ReplicationController's selector overwrite a conflicting service label"
    sel = inject(owned({"app": "web"}, "ReplicationController", api_version="v1"),
                 services=[svc({"app": "web"})], controllers=[rc(selector={"app": "legacy"})])
    assert sel.match_labels == {"app": "legacy"}
    assert sel.match_expressions == []


def test_replicationcontroller_without_selector_uses_the_defaulted_template_labels():
    # the API server defaults an empty RC selector to the template labels
    # (pkg/apis/core/v1/defaults.go SetDefaults_ReplicationController), so the deduced one is those
    sel = inject(owned({"app": "legacy"}, "ReplicationController", api_version="v1"), controllers=[rc()])
    assert sel.match_labels == {"app": "legacy"}


def test_unsupported_owner_kind():
    # upstream: D:159 "should not deduce a selector from an unsupported owner kind"
    assert inject(owned({"app": "batch"}, "Job", name="test-job", api_version="batch/v1")) is None


def test_non_controller_owner_reference():
    # upstream: D:166 "should ignore a non-controller owner reference"
    assert inject(owned({"app": "web"}, "ReplicaSet", controller=False), controllers=[rs(selector={"app": "web"})]) is None


def test_owner_that_no_longer_exists():
    # upstream: D:174 "should tolerate an owner that no longer exists"
    assert inject(owned({"app": "web"}, "ReplicaSet", name="does-not-exist")) is None


def test_matching_service():
    # upstream: D:185 "should deduce a selector from a matching service"
    sel = inject(owned({"app": "web", "extra": "ignored"}), services=[svc({"app": "web"})])
    assert sel.match_labels == {"app": "web"} and sel.match_expressions == []


def test_merge_every_matching_service():
    # upstream: D:193 "should merge the selectors of every matching service"
    sel = inject(owned({"app": "web", "tier": "frontend"}),
                 services=[svc({"app": "web"}, name="a"), svc({"tier": "frontend"}, name="b")])
    assert sel.match_labels == {"app": "web", "tier": "frontend"}


@pytest.mark.parametrize("services", [
    [svc({"app": "other"})],  # upstream: D:202 "should not deduce a selector from a non-matching service"
    [svc(None)],  # upstream: D:206 "should skip a service with a nil selector"
    [svc({})],  # upstream: D:211 "should contribute nothing for a service with an empty selector"
    [svc({"app": "web"}, namespace="elsewhere")],  # upstream: D:216 "should ignore a matching service in another namespace"
], ids=["non-matching", "nil-selector", "empty-selector", "other-namespace"])
def test_services_that_contribute_nothing(services):
    assert inject(owned({"app": "web"}), services=services) is None


def test_service_combined_with_owner():
    # upstream: D:224 "should combine a service selector with the owner's"
    r = rs(selector={"app": "web", "pod-template-hash": "abc123"})
    sel = inject(owned({"app": "web", "pod-template-hash": "abc123", "tier": "frontend"}, "ReplicaSet"),
                 services=[svc({"tier": "frontend"})], controllers=[r])
    assert sel.match_labels == {"tier": "frontend"}
    assert sel.match_expressions == [expr("app", ["web"]), expr("pod-template-hash", ["abc123"])]


def test_conflicting_replicaset_selector_selects_nothing():
    # upstream: D:272 "should AND a ReplicaSet's conflicting selector, selecting nothing"
    sel = inject(owned({"app": "web"}, "ReplicaSet"), services=[svc({"app": "web"})],
                 controllers=[rs(selector={"app": "other"})])
    assert sel.match_labels == {"app": "web"} and sel.match_expressions == [expr("app", ["other"])]
    assert not sel.matches({"app": "web"}) and not sel.matches({"app": "other"})


def test_no_selector_sharing_between_differently_labelled_pods():
    # upstream: D:298 "should not share a selector between pods of the same owner with different labels"
    inj = DefaultTopologySpreadInjector([ZONE_DEFAULT], [svc({"tier": "frontend"})], [rs(selector={"app": "web"})])
    frontend, plain = inj.inject([owned({"app": "web", "tier": "frontend"}, "ReplicaSet"),
                                  owned({"app": "web"}, "ReplicaSet")])
    assert frontend.spec.topology_spread_constraints[0].label_selector.match_labels == {"tier": "frontend"}
    assert plain.spec.topology_spread_constraints[0].label_selector.match_labels == {}


def test_no_selector_sharing_across_namespaces():
    # upstream: D:314 "should not share a selector between identically-labeled pods in different namespaces"
    inj = DefaultTopologySpreadInjector([ZONE_DEFAULT], [svc({"app": "web"})])
    selected, other = inj.inject([owned({"app": "web"}), owned({"app": "web"}, namespace="other")])
    assert len(selected.spec.topology_spread_constraints) == 1 and other.spec.topology_spread_constraints == []


def test_own_constraints_untouched():
    # upstream: D:332 "should leave a pod that declares its own constraints untouched"
    own = TopologySpreadConstraint(max_skew=5, topology_key="kubernetes.io/hostname", when_unsatisfiable="ScheduleAnyway",
                                   label_selector=LabelSelector(match_labels={"app": "web"}))
    pod = owned({"app": "web"}, "ReplicaSet")
    pod.spec.topology_spread_constraints = [own]
    [out] = DefaultTopologySpreadInjector([ZONE_DEFAULT], (), [rs(selector={"app": "web"})]).inject([pod])
    assert out.spec.topology_spread_constraints == [own]


def test_no_defaults_is_a_no_op():
    # upstream: D:351 "should be a no-op when no defaults are configured"
    assert inject(owned({"app": "web"}, "ReplicaSet"), controllers=[rs(selector={"app": "web"})], constraints=()) is None


def test_each_pod_gets_its_own_copies_and_the_originals_stay():
    # upstream: D:360 "should give each pod its own constraint slice so relaxation can't leak across pods"
    pods = [owned({"app": "web"}, "ReplicaSet"), owned({"app": "web"}, "ReplicaSet")]
    a, b = DefaultTopologySpreadInjector([ZONE_DEFAULT], (), [rs(selector={"app": "web"})]).inject(pods)
    a.spec.topology_spread_constraints[0].max_skew = 99
    a.spec.topology_spread_constraints[0].label_selector.match_labels["mutated"] = "true"
    assert b.spec.topology_spread_constraints[0].max_skew == 1
    assert "mutated" not in b.spec.topology_spread_constraints[0].label_selector.match_labels
    assert pods[0].spec.topology_spread_constraints == [] and ZONE_DEFAULT.label_selector is None


def test_configured_fields_preserved():
    # upstream: D:377 "should preserve the configured constraint fields on the injected copy"
    c = TopologySpreadConstraint(max_skew=4, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway", min_domains=3,
                                 node_taints_policy="Honor")
    [out] = DefaultTopologySpreadInjector([c], [svc({"app": "web"})]).inject([owned({"app": "web"})])
    [tsc] = out.spec.topology_spread_constraints
    assert (tsc.max_skew, tsc.when_unsatisfiable, tsc.min_domains, tsc.node_taints_policy) == (4, "ScheduleAnyway", 3, "Honor")


# --- SchedulerConfiguration (options) ----------------------------------------------------------
def test_parse_empty():
    # upstream: O:409 "should return a nil configuration for an empty value"
    assert parse_scheduler_config("") is None


def test_parse_yaml_and_json():
    # upstream: O:414 "should parse a valid podTopologySpread.defaultConstraints document" / O:434 "...JSON document"
    cfg = parse_scheduler_config("""
podTopologySpread:
  defaultConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
    - {maxSkew: 3, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
""")
    a, b = cfg.default_constraints
    assert (a.max_skew, a.topology_key, a.when_unsatisfiable, b.when_unsatisfiable) == \
        (1, ZONE, "ScheduleAnyway", "DoNotSchedule")
    j = parse_scheduler_config('{"podTopologySpread":{"defaultConstraints":[{"maxSkew":1,"topologyKey":'
                               '"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]}}')
    assert len(j.default_constraints) == 1


BASE = "podTopologySpread:\n  defaultConstraints:\n    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway"


@pytest.mark.parametrize("doc,message", [
    (BASE + "}\nnotARealField: true\n", "unknown field"),  # upstream: O:439 "should fail fast on an unknown field"
    ("podTopologySpread: {", "decoding scheduler config"),  # upstream: O:449 "should fail on malformed YAML"
    (BASE.replace("maxSkew: 1", "maxSkew: 0") + "}", ".maxSkew must be greater than 0"),  # O:453
    ("podTopologySpread:\n  defaultConstraints:\n    - {maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}",
     ".topologyKey must be set"),  # upstream: O:463 "should reject a missing topologyKey"
    (BASE + ", labelSelector: {matchLabels: {app: test}}}", ".labelSelector must not be set"),  # O:472
    (BASE + ", matchLabelKeys: [pod-template-hash]}", ".matchLabelKeys must not be set"),  # O:487
    (BASE.replace("topology.kubernetes.io/zone", '"not a valid label name"') + "}", "is not a valid label name"),  # O:500
    (BASE + "}\n    - {maxSkew: 3, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}",
     "is a duplicate of [0]"),  # upstream: O:509 "should reject a duplicated topologyKey and whenUnsatisfiable pair"
], ids=["unknown-field", "malformed", "max-skew", "topology-key", "label-selector", "match-label-keys",
        "invalid-key", "duplicate"])
def test_parse_rejects(doc, message):
    with pytest.raises(SchedulerConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        parse_scheduler_config(doc)


DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]}
---
""" + DEFAULT_NODEPOOL
SPREAD = ("podTopologySpread:\n  defaultConstraints:\n"
          "    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}\n")


def test_simulation_spreads_a_deployment_only_with_a_scheduler_config():
    # off by default (upstream --scheduler-config default ""): one node; with zone defaults: one per zone
    plain = karpy.simulate(DEPLOY, cloud_provider=FakeCloudProvider(), region=None).to_document()
    spread = karpy.simulate(DEPLOY, cloud_provider=FakeCloudProvider(), region=None, scheduler_config=SPREAD)
    doc = spread.to_document()
    assert len(plain["nodeclaims"]) == 1
    assert spread.exit_code == 0 and len({c["zone"] for c in doc["nodeclaims"]}) == 3
    zones = {doc["pods"][k]["node"] for k in doc["pods"]}
    assert len(zones) == 3


def test_cli_scheduler_config_bad_file_is_bad_input(tmp_path):
    from click.testing import CliRunner

    from karpy.cli import cli

    bad = tmp_path / "sched.yaml"
    bad.write_text("podTopologySpread:\n  defaultConstraints:\n    - {maxSkew: 0, topologyKey: x, whenUnsatisfiable: DoNotSchedule}\n")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(DEPLOY)
    res = CliRunner().invoke(cli, ["simulate", str(manifest), "--cloud-provider", "fake", "--scheduler-config", str(bad)])
    assert res.exit_code == 2
    assert ".maxSkew must be greater than 0" in res.output and "Traceback" not in res.output
