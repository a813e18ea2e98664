"""Ported NodeResourcesFit / BalancedAllocation tables.

Units follow the upstream tables: st.MakeNode().Capacity({"cpu": "4000"}) is 4000 cores, "memory": "10000"
is 10000 bytes; st.MakePod().Obj() has no containers (so no non-zero defaults apply)."""

import pytest

from karpy.kubescheduler.plugins import BalancedAllocation, NodeResourcesFit, ScoringStrategy
from karpy.kubescheduler.plugins.noderesources import _broken_linear
from karpy.kubescheduler.types import Code

from ._helpers import infos, node, pod, run_filter, run_score

TWO = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]
N4_10 = {"cpu": "4000", "memory": "10000"}
N6_10 = {"cpu": "6000", "memory": "10000"}
N10_20 = {"cpu": "10000", "memory": "20000"}
FOO = "intel.com/foo"
CPU_MEM = [("cpu", 1), ("memory", 1)]
CPU_MEM_FOO = [("cpu", 1), ("memory", 1), (FOO, 1)]


def _p(name, node_name, reqs):
    return pod(name, containers=reqs, node_name=node_name)


# upstream: pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go TestLeastAllocatedScoringStrategy
LEAST = [
    ("nothing scheduled, nothing requested", [], [N4_10, N4_10], [], CPU_MEM, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO, [N4_10, N6_10], [], CPU_MEM, [37, 50]),
    ("no resources requested, pods scheduled", [], [N4_10, N4_10],
     [("node1", []), ("node1", []), ("node2", []), ("node2", [])], CPU_MEM, [100, 100]),
    ("no resources requested, pods scheduled with resources", [], [N10_20, N10_20],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], CPU_MEM, [70, 57]),
    ("resources requested, pods scheduled with resources", TWO, [N10_20, N10_20],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], CPU_MEM, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", TWO,
     [N10_20, {"cpu": "10000", "memory": "50000"}],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], CPU_MEM, [57, 60]),
    ("requested resources exceed node capacity", [{"cpu": "3000", "memory": "0"}], [N4_10, N4_10],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], CPU_MEM, [50, 25]),
    ("zero node resources, pods scheduled with resources", [], [{}, {}],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], CPU_MEM, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes", TWO,
     [N4_10, N6_10], [], [("memory", 2), ("cpu", 1)], [41, 50]),
    ("bypass extended resource if the pod does not request", TWO, [N6_10, {**N6_10, FOO: "4"}], [], CPU_MEM_FOO,
     [50, 50]),
    ("honor extended resource if the pod requests", [{"cpu": "3000", "memory": "5000", FOO: "2"}],
     [{**N6_10, FOO: "4"}, {**N6_10, FOO: "10"}], [], CPU_MEM_FOO, [50, 60]),
    ("if the node doesn't have a resource", [{"cpu": "3000", "memory": "4000"}], [N6_10, {**N6_10, FOO: "4"}], [],
     [(FOO, 2), ("cpu", 1), ("memory", 1)], [55, 55]),
]


@pytest.mark.parametrize("name,reqs,caps,existing,resources,want", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated(name, reqs, caps, existing, resources, want):
    nodes = [node(f"node{i + 1}", c) for i, c in enumerate(caps)]
    pods = [_p(f"e{i}", n, r) for i, (n, r) in enumerate(existing)]
    pl = NodeResourcesFit(ScoringStrategy(type="LeastAllocated", resources=resources))
    assert run_score(pl, pod("p", containers=reqs), infos(nodes, pods)) == want


# upstream: noderesources/most_allocated_test.go TestMostAllocatedScoringStrategy (expected values computed
# with the same formula the upstream comments spell out: min(req, alloc) * 100 / alloc, weighted integer mean)
MOST = [
    ("nothing scheduled, nothing requested", [], [N4_10, N4_10], [], [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO, [N4_10, N6_10], [], [62, 50]),
    ("no resources requested, pods scheduled with resources", [], [N10_20, N10_20],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], [30, 42]),
    ("resources requested, pods scheduled with resources", TWO, [N10_20, N10_20],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], [42, 55]),
    ("resources requested with more than the node, pods scheduled with resources",
     [{"cpu": "3000", "memory": "0"}], [N4_10, N4_10],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])], [50, 75]),
    ("zero node resources", [], [{}, {}], [], [0, 0]),
]


@pytest.mark.parametrize("name,reqs,caps,existing,want", MOST, ids=[c[0] for c in MOST])
def test_most_allocated(name, reqs, caps, existing, want):
    nodes = [node(f"node{i + 1}", c) for i, c in enumerate(caps)]
    pods = [_p(f"e{i}", n, r) for i, (n, r) in enumerate(existing)]
    pl = NodeResourcesFit(ScoringStrategy(type="MostAllocated"))
    assert run_score(pl, pod("p", containers=reqs), infos(nodes, pods)) == want


# upstream: noderesources/requested_to_capacity_ratio_test.go TestRequestedToCapacityRatioScoringStrategy
RTCR = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", [], [N4_10, N4_10],
     [("node1", []), ("node1", [])], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
     TWO, [N4_10, N6_10], [("node1", []), ("node1", [])], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)", [],
     [N4_10, N6_10], [("node1", [{"cpu": "3000", "memory": "5000"}]), ("node2", [{"cpu": "3000", "memory": "5000"}])],
     [38, 50]),
]


@pytest.mark.parametrize("name,reqs,caps,existing,want", RTCR, ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio(name, reqs, caps, existing, want):
    nodes = [node(f"node{i + 1}", c) for i, c in enumerate(caps)]
    pods = [_p(f"e{i}", n, r) for i, (n, r) in enumerate(existing)]
    pl = NodeResourcesFit(ScoringStrategy(type="RequestedToCapacityRatio", shape=[(0, 10), (100, 0)]))
    assert run_score(pl, pod("p", containers=reqs), infos(nodes, pods)) == want


BIN_NODE = {"cpu": "4", "memory": f"{10000 * 1024 * 1024}"}


# upstream: requested_to_capacity_ratio_test.go TestResourceBinPackingSingleExtended (shape 0->0, 100->1)
@pytest.mark.parametrize("name,req,existing,want", [
    ("nothing scheduled, nothing requested", None, [], [0, 0]),
    ("resources requested, pods scheduled with less resources", "2", [("node1", [])], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running", "2",
     [("node2", [{FOO: "2"}])], [2, 10]),
    ("resources requested, pods scheduled with more resources", "4", [("node1", [])], [5, 10]),
])
def test_bin_packing_single_extended(name, req, existing, want):
    nodes = [node("node1", {**BIN_NODE, FOO: "8"}), node("node2", {**BIN_NODE, FOO: "4"})]
    pods = [_p(f"e{i}", n, r) for i, (n, r) in enumerate(existing)]
    pl = NodeResourcesFit(ScoringStrategy(type="RequestedToCapacityRatio", resources=[(FOO, 1)],
                                          shape=[(0, 0), (100, 1)]))
    p = pod("p", containers=[] if req is None else [{FOO: req}])
    assert run_score(pl, p, infos(nodes, pods)) == want


# upstream: requested_to_capacity_ratio_test.go TestResourceBinPackingMultipleExtended (first two rows)
@pytest.mark.parametrize("name,reqs,want", [
    ("nothing scheduled, nothing requested", [], [0, 0]),
    ("resources requested, pods scheduled with less resources", [{FOO: "2", "intel.com/bar": "2"}], [4, 3]),
])
def test_bin_packing_multiple_extended(name, reqs, want):
    nodes = [node("node1", {**BIN_NODE, FOO: "8", "intel.com/bar": "4"}),
             node("node2", {**BIN_NODE, FOO: "4", "intel.com/bar": "8"})]
    pl = NodeResourcesFit(ScoringStrategy(type="RequestedToCapacityRatio", resources=[(FOO, 3), ("intel.com/bar", 5)],
                                          shape=[(0, 0), (100, 1)]))
    assert run_score(pl, pod("p", containers=reqs), infos(nodes)) == want


def test_rtcr_skips_resources_the_node_does_not_have():
    # upstream: noderesources/requested_to_capacity_ratio.go buildRequestedToCapacityRatioScorerFunction
    # ("if allocable[i] == 0 { continue }"): a node without memory does not score memory at utilisation 100.
    pl = NodeResourcesFit(ScoringStrategy(type="RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]))
    n = infos([node("n", {"cpu": "4"})])
    assert run_score(pl, pod("p", containers=[{"cpu": "1", "memory": "0"}]), n) == [25]


def test_least_allocated_skips_resources_the_node_does_not_have():
    # upstream: noderesources/least_allocated.go leastResourceScorer ("if allocable[i] == 0 { continue }"):
    # a zero-allocatable resource does not count in the weight sum.
    pl = NodeResourcesFit()
    n = infos([node("n", {"cpu": "4"})])
    assert run_score(pl, pod("p", containers=[{"cpu": "1", "memory": "0"}]), n) == [75]


# upstream: requested_to_capacity_ratio_test.go TestBrokenLinearFunction
BROKEN = [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
                          (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]


@pytest.mark.parametrize("shape,p,want", [(s, p, w) for s, pts in BROKEN for p, w in pts])
def test_broken_linear_function(shape, p, want):
    assert _broken_linear(shape, p) == want


def test_broken_linear_function_truncates_toward_zero():
    # upstream: plugins/helper/shape_score.go BuildBrokenLinearFunction uses Go int64 division, which
    # truncates toward zero: 10 + (0-10)*(50-40)/(100-40) = 10 + (-100/60 -> -1) = 9 (floor division gives 8).
    assert _broken_linear([(0, 2), (40, 10), (100, 0)], 50) == 9


CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEM = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_MEM_GPU = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"}]
GPU = "nvidia.com/gpu"


def _bn(name, milli, mem, gpu=None):
    cap = {"cpu": f"{milli}m", "memory": str(mem)}
    if gpu is not None:
        cap[GPU] = str(gpu)
    return node(name, cap)


# upstream: noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation
BALANCED = [
    ("nothing scheduled, resources requested, differently sized nodes", CPU_AND_MEM,
     [_bn("node1", 4000, 10000), _bn("node2", 6000, 10000)], [], CPU_MEM, [87, 100]),
    ("resources requested, pods scheduled with resources", CPU_AND_MEM,
     [_bn("node1", 10000, 20000), _bn("node2", 10000, 20000)], [("node1", CPU_ONLY), ("node2", CPU_AND_MEM)], CPU_MEM,
     [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes", CPU_AND_MEM,
     [_bn("node1", 10000, 20000), _bn("node2", 10000, 50000)], [("node1", CPU_ONLY), ("node2", CPU_AND_MEM)], CPU_MEM,
     [82, 80]),
    ("requested resources at node capacity", CPU_ONLY,
     [_bn("node1", 6000, 10000), _bn("node2", 6000, 10000)], [("node1", CPU_ONLY), ("node2", CPU_AND_MEM)], CPU_MEM,
     [50, 75]),
    ("include scalar resource on a node for balanced resource allocation", [{"memory": "0", GPU: "1"}],
     [_bn("node1", 3500, 40000, 8), _bn("node2", 3500, 40000, 8)], [("node2", CPU_AND_MEM), ("node1", CPU_MEM_GPU)],
     [("cpu", 1), ("memory", 1), (GPU, 1)], [70, 65]),
    ("node without the scalar resource should skip the scalar resource", CPU_AND_MEM,
     [_bn("node1", 3500, 40000, 8), _bn("node2", 3500, 40000)], [], [("cpu", 1), ("memory", 1), (GPU, 1)], [63, 63]),
]


@pytest.mark.parametrize("name,reqs,nodes,existing,resources,want", BALANCED, ids=[c[0] for c in BALANCED])
def test_balanced_allocation(name, reqs, nodes, existing, resources, want):
    pods = [_p(f"e{i}", n, r) for i, (n, r) in enumerate(existing)]
    assert run_score(BalancedAllocation(resources), pod("p", containers=reqs), infos(nodes, pods)) == want


def test_balanced_allocation_best_effort_skips_prescore():
    # upstream: balanced_allocation_test.go "nothing scheduled, nothing requested, skip in PreScore"
    nodes = infos([_bn("node1", 4000, 10000), _bn("node2", 4000, 10000)])
    assert run_score(BalancedAllocation(), pod("p", containers=[]), nodes) == "skip"


# ---- Fit filter -------------------------------------------------------------------------------------
EXT = "example.com/aaa"
HUGE = "hugepages-2Mi"
ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", EXT: "5", "ephemeral-storage": "20", HUGE: "5"}


def _fit_node(existing):
    n = node("node", ALLOC)
    pods = [pod(f"e{i}", containers=[r], node_name="node") for i, r in enumerate(existing)]
    return infos([n], pods)[0]


def _init_pod(reqs, inits):
    p = pod("p", containers=[reqs] if reqs is not None else [])
    from karpy.api.pod import Container, ResourceRequirements
    from karpy.api.quantity import Quantity
    p.spec.init_containers = [Container(name=f"i{i}", resources=ResourceRequirements(
        requests={k: Quantity(v) for k, v in r.items()})) for i, r in enumerate(inits)]
    return p


U, UAU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# upstream: noderesources/fit_test.go TestEnoughRequests (node allocatable makeResources(10, 20, 32, 5, 20, 5))
FIT = [
    ("no resources requested always fits", None, [], [{"cpu": "10m", "memory": "20"}], None, []),
    ("too many resources fails", {"cpu": "1m", "memory": "1"}, [], [{"cpu": "10m", "memory": "20"}], U,
     ["Insufficient cpu", "Insufficient memory"]),
    ("too many resources fails due to init container cpu", {"cpu": "1m", "memory": "1"}, [{"cpu": "3m", "memory": "1"}],
     [{"cpu": "8m", "memory": "19"}], U, ["Insufficient cpu"]),
    ("too many resources fails due to highest init container cpu", {"cpu": "1m", "memory": "1"},
     [{"cpu": "3m", "memory": "1"}, {"cpu": "2m", "memory": "1"}], [{"cpu": "8m", "memory": "19"}], U,
     ["Insufficient cpu"]),
    ("too many resources fails due to init container memory", {"cpu": "1m", "memory": "1"},
     [{"cpu": "1m", "memory": "3"}], [{"cpu": "9m", "memory": "19"}], U, ["Insufficient memory"]),
    ("init container fits because it's the max, not sum, of containers and init containers",
     {"cpu": "1m", "memory": "1"}, [{"cpu": "1m", "memory": "1"}], [{"cpu": "9m", "memory": "19"}], None, []),
    ("both resources fit", {"cpu": "1m", "memory": "1"}, [], [{"cpu": "5m", "memory": "5"}], None, []),
    ("one resource memory fits", {"cpu": "2m", "memory": "1"}, [], [{"cpu": "9m", "memory": "5"}], U,
     ["Insufficient cpu"]),
    ("one resource cpu fits", {"cpu": "1m", "memory": "2"}, [], [{"cpu": "5m", "memory": "19"}], U,
     ["Insufficient memory"]),
    ("equal edge case", {"cpu": "5m", "memory": "1"}, [], [{"cpu": "5m", "memory": "19"}], None, []),
    ("equal edge case for init container", {"cpu": "4m", "memory": "1"}, [{"cpu": "5m", "memory": "1"}],
     [{"cpu": "5m", "memory": "19"}], None, []),
    ("extended resource fits", {EXT: "1"}, [], [], None, []),
    ("extended resource fits for init container", None, [{EXT: "1"}], [], None, []),
    ("extended resource capacity enforced", {EXT: "10"}, [], [], UAU, [f"Insufficient {EXT}"]),
    ("extended resource capacity enforced for init container", None, [{EXT: "10"}], [], UAU, [f"Insufficient {EXT}"]),
    ("extended resource allocatable enforced", {EXT: "1"}, [], [{EXT: "5"}], U, [f"Insufficient {EXT}"]),
    ("extended resource allocatable enforced for multiple containers", {EXT: "3"}, [], [{EXT: "3"}], U,
     [f"Insufficient {EXT}"]),
    ("extended resource allocatable admits multiple init containers", None, [{EXT: "2"}, {EXT: "2"}], [{EXT: "2"}],
     None, []),
    ("extended resource allocatable enforced for multiple init containers", None, [{EXT: "2"}, {EXT: "4"}],
     [{EXT: "2"}], U, [f"Insufficient {EXT}"]),
    ("extended resource allocatable enforced for unknown resource", {"example.com/bbb": "1"}, [], [], UAU,
     ["Insufficient example.com/bbb"]),
    ("hugepages resource capacity enforced", {HUGE: "10"}, [], [], UAU, [f"Insufficient {HUGE}"]),
    ("hugepages resource allocatable enforced", {HUGE: "3"}, [], [{HUGE: "3"}], U, [f"Insufficient {HUGE}"]),
    ("ephemeral-storage allocatable enforced", {"ephemeral-storage": "15"}, [], [{"ephemeral-storage": "10"}], U,
     ["Insufficient ephemeral-storage"]),
    ("request exceeds allocatable is unresolvable (1.34+)", {"cpu": "11m"}, [], [], UAU, ["Insufficient cpu"]),
]


@pytest.mark.parametrize("name,req,inits,existing,code,reasons", FIT, ids=[c[0] for c in FIT])
def test_fit_filter(name, req, inits, existing, code, reasons):
    st = run_filter(NodeResourcesFit(), _init_pod(req, inits), [_fit_node(existing)])
    if code is None:
        assert st.is_success(), st
    else:
        assert (st.code, st.reasons) == (code, reasons)


def test_fit_filter_ignored_resource_and_group():
    # upstream: fit_test.go "skip checking ignored extended resource" / "skip checking ignored extended resource via
    # resource groups"
    p = pod("p", containers=[{"example.com/ignored": "100"}])
    assert run_filter(NodeResourcesFit(ignored_resources=frozenset({"example.com/ignored"})), p,
                      [_fit_node([])]).is_success()
    assert run_filter(NodeResourcesFit(ignored_resource_groups=frozenset({"example.com"})), p,
                      [_fit_node([])]).is_success()
    assert not run_filter(NodeResourcesFit(), p, [_fit_node([])]).is_success()


def test_fit_filter_pod_overhead():
    # upstream: fit_test.go "resources + pod overhead fits" / "requests + overhead does not fit for memory"
    p = pod("p", containers=[{"cpu": "1m", "memory": "1"}], overhead={"cpu": "3m", "memory": "13"})
    assert run_filter(NodeResourcesFit(), p, [_fit_node([{"cpu": "5m", "memory": "5"}])]).is_success()
    p = pod("p", containers=[{"cpu": "1m", "memory": "1"}], overhead={"cpu": "1m", "memory": "15"})
    st = run_filter(NodeResourcesFit(), p, [_fit_node([{"cpu": "5m", "memory": "5"}])])
    assert (st.code, st.reasons) == (U, ["Insufficient memory"])


# upstream: fit_test.go TestPredicateOnlyChecksPodCountWhenRequestsAreEmpty ("Too many pods")
@pytest.mark.parametrize("name,req,existing,want", [
    ("even without specified resources, predicate fails when there's no space for additional pod", None, 1,
     ["Too many pods"]),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     {"cpu": "1m", "memory": "1"}, 1, ["Too many pods"]),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     {"cpu": "5m", "memory": "1"}, 1, ["Too many pods"]),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to init container",
     {"cpu": "5m", "memory": "1"}, 1, ["Too many pods"]),
    ("too many pods and insufficient cpu are both reported", {"cpu": "11m"}, 1, ["Too many pods", "Insufficient cpu"]),
    ("room for one more pod", None, 0, []),
])
def test_fit_too_many_pods(name, req, existing, want):
    n = node("node", {"cpu": "10m", "memory": "20", "pods": "1"})
    pods = [pod(f"e{i}", containers=[{"cpu": "5m", "memory": "19"}], node_name="node") for i in range(existing)]
    st = run_filter(NodeResourcesFit(), pod("p", containers=[req] if req else []), infos([n], pods))
    assert st.reasons == want
    if want == ["Too many pods"]:
        assert st.code == U  # "Too many pods" alone is never unresolvable
