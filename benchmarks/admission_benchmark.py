"""Admission of 1,000 manifests (target ≤ 1 s): what ``karpy validate`` and every run do before simulating.

A realistic mix, as a Helm-rendered directory looks: 100 NodePools (requirements, budgets, limits,
taints), 100 EC2NodeClasses, 400 Deployments, 200 Pods, 100 StatefulSets, 50 DaemonSets,
50 PodDisruptionBudgets — 1,000 documents of YAML text. Reports the time of ``load_manifests``
(YAML parse + admission + models) and of admission alone, after one warm-up run (schemas compiled
once per process). ``--profile`` prints the top of the profile.

    python benchmarks/admission_benchmark.py [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import yaml

from awsprovider.apis import EXTRA_KINDS
from karpy.admission import admit
from karpy.api.loader import load_manifests

TARGET_SECONDS = 1.0


def nodepool(i: int) -> str:
    return f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-{i}, labels: {{team: t{i % 7}}}}}
spec:
  weight: {1 + i % 100}
  limits: {{cpu: "1000", memory: 1000Gi}}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets: [{{nodes: "10%"}}, {{nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}}]
  template:
    metadata: {{labels: {{pool: p{i}}}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: class-{i}}}
      taints: [{{key: dedicated, value: p{i}, effect: NoSchedule}}]
      expireAfter: 720h
      requirements:
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [c8i, m8i, r8i, c7i, m7i, r7i]}}
        - {{key: karpenter.k8s.aws/instance-generation, operator: Gte, values: ["7"]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}}
        - {{key: kubernetes.io/arch, operator: In, values: [amd64]}}
        - {{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 3}}
"""


def nodeclass(i: int) -> str:
    return f"""\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: class-{i}}}
spec:
  amiSelectorTerms: [{{alias: al2023@latest}}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: demo}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: demo}}}}]
  tags: {{team: t{i % 7}}}
  blockDeviceMappings: [{{deviceName: /dev/xvda, ebs: {{volumeSize: 100Gi, volumeType: gp3, encrypted: true}}}}]
"""


def pod_spec(name: str, indent: str) -> str:
    return f"""\
{indent}nodeSelector: {{karpenter.sh/capacity-type: spot}}
{indent}tolerations: [{{key: dedicated, operator: Exists, effect: NoSchedule}}]
{indent}topologySpreadConstraints:
{indent}- {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway,
{indent}   labelSelector: {{matchLabels: {{app: {name}}}}}}}
{indent}containers:
{indent}- name: app
{indent}  image: registry.example.com/{name}:1.0
{indent}  ports: [{{containerPort: 8080}}]
{indent}  env: [{{name: MODE, value: prod}}]
{indent}  resources: {{requests: {{cpu: 500m, memory: 1Gi}}, limits: {{memory: 1Gi}}}}
"""


def workload(kind: str, api: str, i: int, extra: str = "") -> str:
    name = f"{kind.lower()}-{i}"
    return f"""\
apiVersion: {api}
kind: {kind}
metadata: {{name: {name}, namespace: ns-{i % 10}}}
spec:
{extra}  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{pod_spec(name, "      ")}"""


def pod(i: int) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: pod-{i}, namespace: ns-{i % 10}, labels: {{app: pod-{i}}}}}
spec:
{pod_spec(f"pod-{i}", "  ")}"""


def pdb(i: int) -> str:
    return f"""\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: pdb-{i}, namespace: ns-{i % 10}}}
spec: {{minAvailable: 1, selector: {{matchLabels: {{app: deployment-{i}}}}}}}
"""


def manifests() -> str:
    docs = [*(nodepool(i) for i in range(100)), *(nodeclass(i) for i in range(100)),
            *(workload("Deployment", "apps/v1", i, "  replicas: 3\n") for i in range(400)),
            *(pod(i) for i in range(200)),
            *(workload("StatefulSet", "apps/v1", i, "  replicas: 2\n  serviceName: svc\n") for i in range(100)),
            *(workload("DaemonSet", "apps/v1", i) for i in range(50)), *(pdb(i) for i in range(50))]
    assert len(docs) == 1000
    return "---\n".join(docs)


def main() -> None:
    text = manifests()
    load_manifests(text, extra_kinds=EXTRA_KINDS)  # warm-up: schemas compiled once per process
    t0 = time.perf_counter()
    loaded = load_manifests(text, extra_kinds=EXTRA_KINDS)
    load_s = time.perf_counter() - t0
    assert len(loaded.objects) == 1000 and not loaded.warnings, loaded.warnings

    docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    classes = {("karpenter.k8s.aws/v1", "EC2NodeClass"): EXTRA_KINDS[("karpenter.k8s.aws", "EC2NodeClass")]}
    t0 = time.perf_counter()
    for d in docs:
        admit(d, classes.get((d["apiVersion"], d["kind"])))
    admit_s = time.perf_counter() - t0

    print(f"admission of 1000 manifests: {admit_s:.3f} s ({1000 / admit_s:.0f} manifests/s); "
          f"load_manifests (YAML + admission + models): {load_s:.3f} s; target ≤ {TARGET_SECONDS:.1f} s: "
          f"{'met' if admit_s <= TARGET_SECONDS else 'MISSED'}")
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
        for d in docs:
            admit(d, classes.get((d["apiVersion"], d["kind"])))
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()
