"""Ported TaintToleration, NodeAffinity, NodeUnschedulable, NodePorts and ImageLocality tables."""

import pytest

from karpy.api.pod import (NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm)
from karpy.kubescheduler.nodeinfo import ImageState
from karpy.kubescheduler.plugins import (ImageLocality, NodeAffinity, NodePorts, NodeUnschedulable, TaintToleration)
from karpy.kubescheduler.types import Code

from ._helpers import infos, node, pod, run_filter, run_score

TAINTED = "node(s) had untolerated taint(s)"


def _t(key, value, effect):
    return {"key": key, "value": value, "effect": effect}


def _tol(key, value=None, effect=None, op=None):
    d = {"key": key}
    if value is not None:
        d["value"] = value
    if effect is not None:
        d["effect"] = effect
    if op is not None:
        d["operator"] = op
    return d


# upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go TestTaintTolerationFilter
TAINT_FILTER = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints", [],
     [_t("dedicated", "user1", "NoSchedule")], False),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [_tol("dedicated", "user1", "NoSchedule")], [_t("dedicated", "user1", "NoSchedule")], True),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [_tol("dedicated", "user2", "NoSchedule", "Equal")], [_t("dedicated", "user1", "NoSchedule")], False),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
     [_tol("foo", effect="NoSchedule", op="Exists")], [_t("foo", "bar", "NoSchedule")], True),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
     [_tol("dedicated", "user2", "NoSchedule", "Equal"), _tol("foo", effect="NoSchedule", op="Exists")],
     [_t("dedicated", "user2", "NoSchedule"), _t("foo", "bar", "NoSchedule")], True),
    ("keys and values match the taint on the node, but (non-empty) effect doesn't match",
     [_tol("foo", "bar", "PreferNoSchedule", "Equal")], [_t("foo", "bar", "NoSchedule")], False),
    ("keys and values match, the effect of toleration is empty, and the effect of taint is NoSchedule",
     [_tol("foo", "bar", op="Equal")], [_t("foo", "bar", "NoSchedule")], True),
    ("key and value don't match, but the effect of taint on node is PreferNoSchedule",
     [_tol("dedicated", "user2", "NoSchedule", "Equal")], [_t("dedicated", "user1", "PreferNoSchedule")], True),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule", [],
     [_t("dedicated", "user1", "PreferNoSchedule")], True),
    ("NoExecute taints filter too (DoNotScheduleTaintsFilterFunc)", [], [_t("k", "v", "NoExecute")], False),
    ("empty key with operator Exists tolerates every taint", [{"operator": "Exists"}],
     [_t("a", "1", "NoSchedule"), _t("b", "2", "NoExecute")], True),
]


@pytest.mark.parametrize("name,tols,taints,ok", TAINT_FILTER, ids=[c[0] for c in TAINT_FILTER])
def test_taint_toleration_filter(name, tols, taints, ok):
    st = run_filter(TaintToleration(), pod("pod1", tolerations=tols), infos([node("nodeA", taints=taints)]))
    if ok:
        assert st.is_success()
    else:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [TAINTED])


def test_taint_toleration_filter_message_1_34():
    # upstream (v1.34.0 taint_toleration.go Filter, before the cherry-pick of PR #134740 / #135023):
    # errReason = fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)
    n = infos([node("nodeA", taints=[_t("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
                                      _t("dedicated", "user1", "NoSchedule")])])
    st = run_filter(TaintToleration("1.34"), pod("p"), n)
    assert st.reasons == ["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"]


PNS = "PreferNoSchedule"

# upstream: tainttoleration/taint_toleration_test.go TestTaintTolerationScore
TAINT_SCORE = [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     [_tol("foo", "bar", PNS, "Equal")], [[_t("foo", "bar", PNS)], [_t("foo", "blah", PNS)]], [100, 0]),
    ("the nodes that all of their taints are tolerated by the pod, get the same score",
     [_tol("cpu-type", "arm64", PNS, "Equal"), _tol("disk-type", "ssd", PNS, "Equal")],
     [[], [_t("cpu-type", "arm64", PNS)], [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]],
     [100, 100, 100]),
    ("the more intolerable taints a node has, the lower score it gets.", [_tol("foo", "bar", PNS, "Equal")],
     [[], [_t("cpu-type", "arm64", PNS)], [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]],
     [100, 50, 0]),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
     [_tol("cpu-type", "arm64", "NoSchedule", "Equal"), _tol("disk-type", "ssd", "NoSchedule", "Equal")],
     [[], [_t("cpu-type", "arm64", "NoSchedule")], [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]],
     [100, 100, 0]),
    ("Default behaviour No taints and tolerations, lands on node with no taints", [],
     [[], [_t("cpu-type", "arm64", PNS)]], [100, 0]),
]


@pytest.mark.parametrize("name,tols,taints,want", TAINT_SCORE, ids=[c[0] for c in TAINT_SCORE])
def test_taint_toleration_score(name, tols, taints, want):
    nodes = infos([node(f"node{i}", taints=t) for i, t in enumerate(taints)])
    assert run_score(TaintToleration(), pod("pod1", tolerations=tols), nodes) == want


# ---- NodeAffinity -------------------------------------------------------------------------------------
def _req(key, op, values=()):
    return NodeSelectorRequirement(key=key, operator=op, values=list(values))


def _aff(*terms, fields=None):
    """Required affinity with one NodeSelectorTerm per ``terms`` item (a list of requirements)."""
    ts = [NodeSelectorTerm(match_expressions=list(t)) for t in terms]
    if fields is not None:
        ts = [NodeSelectorTerm(match_fields=list(f)) for f in fields]
    return NodeSelector(node_selector_terms=ts)


def _na_pod(required=None, node_selector=None, preferred=None):
    from karpy.api.pod import Affinity, NodeAffinity as NA
    p = pod("p", node_selector=node_selector)
    if required is not None or preferred is not None:
        p.spec.affinity = Affinity(node_affinity=NA(required_during_scheduling_ignored_during_execution=required,
                                                    preferred_during_scheduling_ignored_during_execution=preferred or []))
    return p


# upstream: nodeaffinity/node_affinity_test.go TestNodeAffinity
NA_FILTER = [
    ("missing labels", None, {"foo": "bar"}, {}, False),
    ("same labels", None, {"foo": "bar"}, {"foo": "bar"}, True),
    ("node labels are superset", None, {"foo": "bar"}, {"foo": "bar", "baz": "blah"}, True),
    ("node labels are subset", None, {"foo": "bar", "baz": "blah"}, {"foo": "bar"}, False),
    ("Pod with matchExpressions using In operator that matches the existing node",
     _aff([_req("foo", "In", ["bar", "value2"])]), None, {"foo": "bar"}, True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     _aff([_req("kernel-version", "Gt", ["0204"])]), None, {"kernel-version": "0206"}, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     _aff([_req("mem-type", "NotIn", ["DDR", "DDR2"])]), None, {"mem-type": "DDR3"}, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     _aff([_req("GPU", "Exists")]), None, {"GPU": "NVIDIA-GRID-K1"}, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     _aff([_req("foo", "In", ["value1", "value2"])]), None, {"foo": "bar"}, False),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     _aff([]), None, {"foo": "bar"}, False),
    ("Pod with no Affinity will schedule onto a node", None, None, {"foo": "bar"}, True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", "nil", None, {"foo": "bar"}, True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     _aff([_req("GPU", "Exists"), _req("GPU", "NotIn", ["AMD", "INTER"])]), None, {"GPU": "NVIDIA-GRID-K1"}, True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     _aff([_req("GPU", "Exists"), _req("GPU", "In", ["AMD", "INTER"])]), None, {"GPU": "NVIDIA-GRID-K1"}, False),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
     _aff([_req("foo", "In", ["bar", "value2"])], [_req("diffkey", "In", ["wrong", "value2"])]), None,
     {"foo": "bar"}, True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied",
     _aff([_req("foo", "Exists")]), {"foo": "bar"}, {"foo": "bar"}, True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) "
     "is not satisfied, won't schedule onto the node", _aff([_req("foo", "Exists")]), {"foo": "bar"},
     {"foo": "barrrrrr"}, False),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     _aff([_req("foo", "NotIn", ["invalid value: ___@#$%^"])]), None, {"foo": "bar"}, True),
    ("Pod with DoesNotExist on a node that has the key", _aff([_req("foo", "DoesNotExist")]), None, {"foo": "bar"},
     False),
    ("Pod with Lt on a non-integer label value", _aff([_req("foo", "Lt", ["5"])]), None, {"foo": "bar"}, False),
    ("Pod with matchFields using In operator that matches the existing node",
     _aff(fields=[[_req("metadata.name", "In", ["node1"])]]), None, {}, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     _aff(fields=[[_req("metadata.name", "In", ["node2"])]]), None, {}, False),
]


@pytest.mark.parametrize("name,required,selector,labels,ok", NA_FILTER, ids=[c[0] for c in NA_FILTER])
def test_node_affinity_filter(name, required, selector, labels, ok):
    from karpy.api.pod import Affinity, NodeAffinity as NA
    if required == "nil":
        p = pod("p")
        p.spec.affinity = Affinity(node_affinity=NA())
    else:
        p = _na_pod(required, selector)
    n = infos([node("node1", labels=labels)])[0]
    pl = NodeAffinity()
    from karpy.kubescheduler.framework import CycleState
    from karpy.kubescheduler.podinfo import new_pod_info
    st = pl.filter(CycleState(), new_pod_info(p), n)
    assert st.is_success() == ok
    if not ok:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                         ["node(s) didn't match Pod's node affinity/selector"])


def test_node_affinity_prefilter_node_names():
    # upstream: node_affinity_test.go TestNodeAffinity "Pod with matchFields using In operator that matches the
    # existing node" (wantPreFilterResult NodeNames {node1}) and "...with Node Names that don't match" (conflict)
    pl = NodeAffinity()
    from karpy.kubescheduler.framework import CycleState
    from karpy.kubescheduler.podinfo import new_pod_info
    p = _na_pod(_aff(fields=[[_req("metadata.name", "In", ["node1"])], [_req("metadata.name", "In", ["node2"])]]))
    st, names = pl.pre_filter(CycleState(), new_pod_info(p), [])
    assert st.is_success() and names == {"node1", "node2"}
    p = _na_pod(NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
        _req("metadata.name", "In", ["node1"]), _req("metadata.name", "In", ["node2"])])]))
    st, names = pl.pre_filter(CycleState(), new_pod_info(p), [])
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["pod affinity terms conflict"])


def _pref(weight, *reqs):
    return PreferredSchedulingTerm(weight=weight, preference=NodeSelectorTerm(match_expressions=list(reqs)))


L1 = {"foo": "bar"}
L2 = {"key": "value"}
L5 = {"foo": "bar", "key": "value", "az": "az1"}
AFF1 = [_pref(2, _req("foo", "In", ["bar"]))]
AFF2 = [_pref(2, _req("foo", "In", ["bar"])), _pref(4, _req("key", "In", ["value"])),
        _pref(5, _req("foo", "In", ["bar"]), _req("key", "In", ["value"]), _req("az", "In", ["az1"]))]


# upstream: nodeaffinity/node_affinity_test.go TestNodeAffinityPriority
@pytest.mark.parametrize("name,preferred,want", [
    ("all nodes are same priority as NodeAffinity is nil", None, "skip"),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     [_pref(2, _req("foo", "In", ["nothing"]))], [0, 0, 0]),
    ("only node1 matches the preferred scheduling requirements of pod", AFF1, [100, 0, 0]),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities", AFF2,
     [18, 36, 100]),
])
def test_node_affinity_score(name, preferred, want):
    nodes = infos([node("node1", labels=L1), node("node2", labels=L2), node("node3", labels={"az": "az1"})])
    if name.startswith("all nodes matches"):
        nodes = infos([node("node1", labels=L1), node("node5", labels=L5), node("node2", labels=L2)])
        want = [18, 100, 36]
    p = _na_pod(None, None, preferred) if preferred else pod("p")
    assert run_score(NodeAffinity(), p, nodes) == want


# upstream: nodeunschedulable/node_unschedulable_test.go TestNodeUnschedulable
@pytest.mark.parametrize("name,unschedulable,tols,ok", [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", True, [], False),
    ("Schedule pod to normal node", False, [], True),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)", True,
     [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], True),
    ("Exists toleration without key tolerates the unschedulable taint", True, [{"operator": "Exists"}], True),
    ("toleration with the wrong effect does not", True,
     [{"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute"}], False),
])
def test_node_unschedulable(name, unschedulable, tols, ok):
    st = run_filter(NodeUnschedulable(), pod("p", tolerations=tols), infos([node("n", unschedulable=unschedulable)]))
    assert st.is_success() == ok
    if not ok:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) were unschedulable"])


def _ports_pod(name, ports, node_name=None):
    """newPod(host, "TCP/127.0.0.1/8080", ...): protocol/ip/port triples."""
    from karpy.api.pod import ContainerPort
    p = pod(name, node_name=node_name)
    p.spec.containers[0].ports = [ContainerPort(container_port=int(port), host_port=int(port), host_ip=ip,
                                                protocol=proto) for proto, ip, port in (s.split("/") for s in ports)]
    return p


# upstream: nodeports/node_ports_test.go TestNodePorts
PORTS = [
    ("nothing running", [], [], True),
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], True),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], True),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("first tcp port conflict", ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], False),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
     ["TCP/127.0.0.1/8001"], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
     False),
]


@pytest.mark.parametrize("name,wanted,existing,ok", PORTS, ids=[c[0] for c in PORTS])
def test_node_ports(name, wanted, existing, ok):
    nodes = infos([node("n")], [_ports_pod("e", existing, "n")] if existing else [])
    st = run_filter(NodePorts(), _ports_pod("p", wanted), nodes)
    assert st.is_success() == ok
    if not ok:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE,
                                         ["node(s) didn't have free ports for the requested pod ports"])


MB = 1024 * 1024


def _img_pod(*images):
    from karpy.api.pod import Container
    p = pod("p")
    p.spec.containers = [Container(name=f"c{i}", image=img) for i, img in enumerate(images)]
    return p


# upstream: imagelocality/image_locality_test.go TestImageLocalityPriority
# node403002000: gcr.io/40:latest 40MB, gcr.io/300:latest 300MB, gcr.io/2000:latest 2000MB
# node25010: gcr.io/250:latest 250MB, gcr.io/10:v1 10MB
@pytest.mark.parametrize("name,images,want", [
    ("two images spread on two nodes, prefer the larger image one", ["gcr.io/40", "gcr.io/250"], [0, 5]),
    ("two images on one node, prefer this node", ["gcr.io/40", "gcr.io/300"], [7, 0]),
    ("if exceed limit, use limit", ["gcr.io/2000", "gcr.io/10"], [49, 0]),  # 100*(2000MB/2-23MB)/(2*1000MB-23MB)
    ("pod with no images", [], [0, 0]),
])
def test_image_locality(name, images, want):
    a, b = infos([node("node403002000"), node("node25010")])
    a.image_states = {"gcr.io/40:latest": ImageState(40 * MB, 1), "gcr.io/300:latest": ImageState(300 * MB, 1),
                      "gcr.io/2000:latest": ImageState(2000 * MB, 1)}
    b.image_states = {"gcr.io/250:latest": ImageState(250 * MB, 1), "gcr.io/10:v1": ImageState(10 * MB, 1)}
    assert run_score(ImageLocality(), _img_pod(*images), [a, b]) == want


@pytest.mark.parametrize("images", [["gcr.io/40", "gcr.io/250"], ["gcr.io/2000", "gcr.io/10"], []])
def test_image_locality_score_nodes_equals_score_per_node(images):
    """Plugin.score_nodes (a node without image states gets the pod's sum-0 score without a
    Score call) equals Score on each node, nodes with and without image states mixed."""
    from karpy.kubescheduler.framework import CycleState
    from karpy.kubescheduler.podinfo import new_pod_info
    a, b, c = infos([node("node403002000"), node("bare"), node("node25010")])
    a.image_states = {"gcr.io/40:latest": ImageState(40 * MB, 2), "gcr.io/2000:latest": ImageState(2000 * MB, 1)}
    c.image_states = {"gcr.io/250:latest": ImageState(250 * MB, 1), "gcr.io/10:v1": ImageState(10 * MB, 2)}
    pl, pi = ImageLocality(), new_pod_info(_img_pod(*images))
    for nodes in ([a, b, c], [b], [b, b, a]):
        state = CycleState()
        state.data["_total_nodes"] = 3
        got = pl.score_nodes(state, pi, nodes)
        fresh = CycleState()
        fresh.data["_total_nodes"] = 3
        assert got == [pl.score(fresh, pi, ni) for ni in nodes]
