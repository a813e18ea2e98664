"""Builders shared by the ported kube-scheduler plugin tables (mirrors pkg/scheduler/testing wrappers)."""

from __future__ import annotations

from typing import Any, Optional

from karpy.api.builders import make_node, make_pod
from karpy.api.pod import Container, ResourceRequirements
from karpy.api.quantity import Quantity
from karpy.kubescheduler.framework import CycleState
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.podinfo import PodInfo, new_pod_info
from karpy.kubescheduler.types import Code


def pod(name: str = "p", containers: Optional[list[dict[str, Any]]] = None, **kw: Any) -> Any:
    """st.MakePod(): ``containers`` = one requests dict per container (``[]`` = no containers at all,
    like ``st.MakePod().Obj()``); other kwargs go to make_pod."""
    p = make_pod(name, **kw)
    if containers is not None:
        p.spec.containers = [
            Container(name=f"c{i}", image=f"img{i}",
                      resources=ResourceRequirements(requests={k: Quantity(v) for k, v in c.items()}))
            for i, c in enumerate(containers)]
    return p


def node(name: str, capacity: Optional[dict[str, Any]] = None, labels: Optional[dict[str, str]] = None,
         hostname: bool = True, **kw: Any) -> Any:
    """st.MakeNode(); ``hostname=False`` drops the kubernetes.io/hostname label make_node adds."""
    n = make_node(name, capacity=capacity or {}, labels=labels, **kw)
    if not hostname:
        n.metadata.labels.pop("kubernetes.io/hostname", None)
    return n


def infos(nodes: list[Any], pods: list[Any] = ()) -> list[NodeInfo]:  # type: ignore[assignment]
    """cache.NewSnapshot(pods, nodes): each pod lands on spec.nodeName."""
    out = []
    for n in nodes:
        ps = [new_pod_info(p) for p in pods if p.spec.node_name == n.metadata.name]
        out.append(NodeInfo.from_node(n, ps))
    return out


def run_score(plugin: Any, p: Any, nodes: list[NodeInfo], all_nodes: Optional[list[NodeInfo]] = None,
              normalize: bool = True) -> Any:
    """PreScore (feasible nodes, all nodes) → Score per node → NormalizeScore. Returns the scores, or
    "skip" when PreScore returns Skip."""
    pi: PodInfo = p if isinstance(p, PodInfo) else new_pod_info(p)
    state = CycleState()
    state.data["_score_nodes"] = [n.name for n in nodes]
    state.data["_total_nodes"] = len(all_nodes if all_nodes is not None else nodes)
    if plugin.has_pre_score:
        st = plugin.pre_score(state, pi, nodes, all_nodes if all_nodes is not None else nodes)
        if st.code == Code.SKIP:
            return "skip"
        assert st.is_success(), st
    scores = [plugin.score(state, pi, ni) for ni in nodes]
    if normalize and plugin.has_normalize:
        plugin.normalize_score(state, pi, scores)
    return scores


def run_filter(plugin: Any, p: Any, nodes: list[NodeInfo], target: Optional[NodeInfo] = None) -> Any:
    """PreFilter over ``nodes`` then Filter on ``target`` (default: the first node)."""
    pi = p if isinstance(p, PodInfo) else new_pod_info(p)
    state = CycleState()
    if plugin.has_pre_filter:
        st, _ = plugin.pre_filter(state, pi, nodes)
        if st.code == Code.SKIP:
            from karpy.kubescheduler.types import Status
            return Status()  # PreFilter Skip: the plugin's Filter is not run (success)
        if not st.is_success():
            return st
    return plugin.filter(state, pi, target if target is not None else nodes[0])
