"""The library surface (issue #17): each package root's exact public names, that every one of them
imports from the root, that the roots stay cheap to import, and the one error hierarchy of
:mod:`karpy.errors`.

The expected sets are literal on purpose: adding, renaming or dropping a public name is a
decision, made visibly here.
"""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC: dict[str, set[str]] = {
    "karpy": {"Plan", "Result", "align_billing", "compare", "plan", "schema", "simulate", "sweep", "__version__"},
    "karpy.api": {
        "Affinity", "BillingProfile", "Budget", "CompositePodGroup", "Condition", "ConditionSet", "Container", "ContainerPort", "DaemonSet", "Deployment", "Disruption",
        "Job", "KarpenterRequirement", "LabelSelector", "LabelSelectorRequirement", "ManifestError", "Manifests",
        "NANO", "NODE_SELECTOR_OPERATORS", "Node", "NodeAffinity", "NodeClaim", "NodeClaimSpec",
        "NodeClaimStatus", "NodeClaimTemplate", "NodeClaimTemplateSpec", "NodeClassReference", "NodeCondition",
        "NodeOverlay", "NodeOverlaySpec", "NodePool", "NodePoolSpec", "NodePoolStatus", "NodeSelector",
        "NodeSelectorRequirement", "NodeSelectorTerm", "NodeSpec", "NodeStatus", "ObjectMeta", "OwnerReference",
        "Pod", "PodAffinity", "PodAffinityTerm", "PodAntiAffinity", "PodCondition", "PodDisruptionBudget",
        "PodGroup", "PodSchedulingGate", "PodSpec", "PodStatus", "PreferredSchedulingTerm", "PriorityClass",
        "Quantity", "QuantityError", "ReplicaSet", "ResourceRequirements", "Scenario", "ScenarioEvent",
        "SchedulingPodGroup", "SchedulingWorkload",
        "StatefulSet", "Taint", "Toleration", "TopologySpreadConstraint", "WeightedPodAffinityTerm", "Workload",
        "format_nanos", "load_manifests", "make_daemonset", "make_deployment", "make_node", "make_nodeoverlay",
        "make_nodepool", "make_pod", "make_pods", "make_priority_class", "parse_event_line", "parse_nanos",
        "pod_affinity_term", "requirement", "topology_spread",
    },
    "karpy.scheduling": {
        "ARCHITECTURE_AMD64", "ARCHITECTURE_ARM64", "CAPACITY_TYPE_ON_DEMAND", "CAPACITY_TYPE_RESERVED",
        "CAPACITY_TYPE_SPOT", "CORE_WELL_KNOWN_LABELS", "DO_NOT_DISRUPT_ANNOTATION_KEY", "HostPort",
        "HostPortUsage", "KNOWN_EPHEMERAL_TAINTS", "LABEL_ARCH", "LABEL_CAPACITY_TYPE", "LABEL_HOSTNAME",
        "LABEL_INSTANCE_TYPE", "LABEL_NODEPOOL", "LABEL_OS", "LABEL_REGION", "LABEL_WINDOWS_BUILD", "LABEL_ZONE",
        "NODE_INITIALIZED", "NODE_REGISTERED", "OP_DOES_NOT_EXIST", "OP_EXISTS", "OP_GT", "OP_GTE", "OP_IN",
        "OP_LT", "OP_LTE", "OP_NOT_IN", "RESTRICTED_LABELS", "RESTRICTED_LABEL_DOMAINS", "Requirement",
        "Requirements", "ResourceList", "exceeds", "fits", "from_quantities", "get_host_ports",
        "is_known_ephemeral_taint", "max_resources", "merge", "min_resources", "normalize_key", "pod_requests",
        "pod_requirements", "requests_for_pods", "strict_pod_requirements", "subtract", "to_quantities",
        "toleration_tolerates_taint", "tolerates", "validate_requirement",
    },
    "karpy.cloudprovider": {
        "CloudProvider", "CloudProviderError", "CreateError", "ENTRY_POINT_GROUP", "InstanceType",
        "InstanceTypeOverhead", "InstanceTypes", "InsufficientCapacityError", "MAX_INSTANCE_TYPES", "MinValuesError",
        "MIN_VALUES_POLICY_BEST_EFFORT", "MIN_VALUES_POLICY_STRICT", "NodeClaimNotFoundError",
        "NodeClassNotReadyError", "Offering", "Offerings", "ProviderController", "ProviderOptions", "UnevaluatedNodePoolError",
        "UnknownCloudProviderError", "available_cloud_providers", "errors_as", "ignore_nodeclaim_not_found_error",
        "is_insufficient_capacity_error", "is_nodeclaim_not_found_error", "is_nodeclass_not_ready_error",
        "is_unevaluated_nodepool_error", "resolve_cloud_provider",
    },
    "karpy.provisioning": {
        "Batcher", "ClusterState", "ExistingNode", "NodeClaimTemplate", "OUTCOME_EXISTING_NODE", "OUTCOME_FAILED",
        "OUTCOME_INFLIGHT_NODECLAIM", "OUTCOME_NEW_NODECLAIM", "PREFERENCE_POLICY_IGNORE",
        "PREFERENCE_POLICY_RESPECT", "PodAttempt", "Preferences", "Provisioner", "ProvisioningResult", "Results",
        "Scheduler", "StateNode", "Topology", "describe_relaxations",
    },
    "karpy.state": {"ClusterState", "PodBindings", "StateNode"},
    "karpy.kubescheduler": {
        "BOUND", "KubeScheduler", "NOMINATED", "ScheduleOneResult", "SchedulerConfig", "UNSCHEDULABLE", "Victim",
    },
    "karpy.sim": {
        "EPOCH", "LaunchRecord", "ObjectStore", "PeriodicController", "PodHistory", "ProvisioningPass", "Simulation",
        "SimulationHost", "SimulationOptions", "SimulationResult", "Timeline", "TimelineEntry", "VirtualClock", "WatchEvent",
    },
    "karpy.report": {"instance_family", "is_launched", "render_html", "render_table"},
    "karpy.admission": {
        "ADMITTED_UNMODELLED_KINDS", "AdmissionError", "Admitted", "CRD", "FieldError", "KARPENTER_CRDS",
        "KUBERNETES_VERSION",
        "UNKNOWN_FIELD_HINTS", "admit", "crd_for", "load_crd",
    },
    "karpy.errors": {
        "AdmissionError", "BillingAlignmentError", "CloudProviderError", "CompareError", "CreateError", "DurationError", "ExplainLookupError", "PlanError",
        "FeatureGateError", "InsufficientCapacityError", "SchedulerConfigError",
        "KarpyError", "ManifestError", "MinValuesError", "NodeClaimNotFoundError", "NodeClassNotReadyError", "PricingError",
        "QuantityError", "UnevaluatedNodePoolError", "UnknownCloudProviderError", "UnknownPriceTable",
        "UnknownPriorityClass",
    },
    "karpy.document": {
        "Cost", "DisruptionDocument", "Document", "ExplainDocument", "ExplainNodeClaimDocument", "ExplainPodDocument",
        "FleetDocument", "FleetErrorDocument", "FleetOverrideDocument", "NodeClaimCost", "NodeClaimResult",
        "NodeHours", "PodResult", "PricesDocument", "RequirementDocument", "ReservationCost", "ReservationCosts",
        "SimulationDocument",
        "TimelineEntryDocument",
        "ConditionDocument", "NodeClassStatusDocument", "NodePoolStatusDocument",
        "BilledCost", "BilledNodeClaimCost", "CommitmentCost", "MisalignmentDocument",
    },
    "karpy.schemas": {"SCHEMA_FILE", "SCHEMA_ID", "SCHEMA_VERSION", "generate", "schema", "schema_text", "write"},
    "karpy.disruption": {
        "BALANCED_K", "Candidate", "Cluster", "Command", "DisruptionController", "Drift", "Emptiness",
        "MultiNodeConsolidation", "NodePoolTotals", "REASON_DRIFTED", "REASON_EMPTY", "REASON_UNDERUTILIZED", "SingleNodeConsolidation",
        "ScoreResult", "StaticDrift", "build_disruption_budget_mapping", "score_move",
    },
    "karpy.static": {"NodePoolState", "StaticCapacityController", "StaticNodeClaim", "deprovisioning_candidates",
                     "observe"},
    "karpy.utils": {
        "DurationError", "Limits", "PdbItem", "atomic_path", "disruptions_allowed", "is_fully_blocking",
        "parse_go_duration", "to_seconds", "write_atomic",
    },
    "karpy.termination": {"CRITICAL_PRIORITY_CLASSES", "DrainResult", "MIN_DRAIN_TIME", "TerminationController", "Terminator",
                          "group_pods_by_priority"},
    "karpy.nodeclaim": {
        "CONSOLIDATABLE", "DRIFTED", "NODEPOOL_DRIFTED", "REQUIREMENTS_DRIFTED", "drift_reason", "expires_at",
        "node_annotations", "node_labels", "set_condition", "update_consolidatable", "update_drifted",
    },
    "karpy.sweeps": {
        "API_VERSION", "AXES", "Cell", "EXECUTORS", "EXIT_CELL_FAILED", "ExecutorError", "KIND", "SweepError",
        "SweepProgress", "SweepResult", "SweepSpec", "default_workers", "expand", "load_sweep", "parse_sweep",
        "run_cell", "run_cells", "spec_from_options", "sweep",
    },
    "awsprovider": {
        "AWSCloudProvider", "CapacitySpecError", "EC2NodeClass", "EXTRA_KINDS", "InstanceTypeError", "MockedEC2",
        "NodeClassError", "PriceBook", "PriceTable", "PricingError", "StaticPriceBook", "UnknownPriceTable",
        "list_tables", "load_table", "load_table_from_path", "parse_capacity_spec", "resolve_table",
    },
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_package_root_exports_exactly_its_public_names(package: str) -> None:
    module = importlib.import_module(package)
    assert len(module.__all__) == len(set(module.__all__)), f"{package}.__all__ lists a name twice"
    assert set(module.__all__) == PUBLIC[package]


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_imports_from_the_package_root(package: str) -> None:
    for name in PUBLIC[package]:
        namespace: dict[str, object] = {}
        exec(f"from {package} import {name}", namespace)  # noqa: S102 - the statement a user writes
        assert namespace[name] is getattr(importlib.import_module(package), name)
        assert name in dir(importlib.import_module(package))


#: public names that moved to another package and stay importable where they were documented
MOVED = {("karpy.provisioning", "ClusterState"): "karpy.state", ("karpy.provisioning", "StateNode"): "karpy.state"}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_classes_and_functions_live_in_their_package(package: str) -> None:
    """A root re-exports its own package's objects, never another package's under its name -- except
    ``karpy`` and ``karpy.errors``, which gather from all of karpy, the bases karpy._errors
    defines for awsprovider (PricingError, UnknownPriceTable), and the names of :data:`MOVED`."""
    module = importlib.import_module(package)
    for name in PUBLIC[package]:
        home = MOVED.get((package, name), "karpy" if package == "karpy.errors" else package)
        shared = {"karpy._errors"} if package == "awsprovider" else set()
        obj = getattr(module, name)
        if (isinstance(obj, type) or inspect.isfunction(obj)) and not isinstance(obj, types.GenericAlias):
            origin = obj.__module__
            assert origin == home or origin.startswith(home + ".") or origin in shared, (name, origin)


def test_unknown_name_is_an_attribute_error() -> None:
    import karpy.scheduling

    with pytest.raises(AttributeError, match="karpy.scheduling.*Nope"):
        karpy.scheduling.Nope  # noqa: B018
    # a submodule is still importable by name next to the lazy exports
    from karpy.scheduling import labels

    assert labels.LABEL_ZONE == karpy.scheduling.LABEL_ZONE


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "KARPY_CACHE_DIR": os.environ["KARPY_CACHE_DIR"]})
    return set(out.stdout.split())


def test_package_roots_stay_cheap_to_import() -> None:
    """``import karpy`` loads none of the engine; a lazy package root loads none of its modules; one
    leaf module does not drag in its siblings; ``import awsprovider`` loads neither boto3 nor moto."""
    loaded = _loaded_after("import karpy, karpy.errors, karpy.api, karpy.scheduling, "
                           "karpy.provisioning, karpy.sim, awsprovider")
    assert not {m for m in loaded if m.startswith(("pydantic", "boto3", "botocore", "moto", "yaml"))}
    assert not {m for m in loaded if m.count(".") >= 2 and m.startswith("karpy.")}
    assert not {m for m in loaded if m.startswith("awsprovider.")}

    loaded = _loaded_after("from karpy.scheduling import Requirement")
    assert "karpy.scheduling.requirement" in loaded
    assert "karpy.scheduling.taints" not in loaded and "karpy.scheduling.hostports" not in loaded


#: every package root with public names (``__all__``): those of PUBLIC (less two modules) and the internal ones
ROOTS = sorted({*PUBLIC, "karpy.kubescheduler.plugins", "awsprovider.apis", "awsprovider.controllers",
                "awsprovider.ec2"} - {"karpy.errors", "karpy.document"})
#: what makes an import heavy: the API models' pydantic, a cloud SDK, the simulation engine
HEAVY = ("pydantic", "boto3", "botocore", "moto", "karpy.sim.simulation")


def test_every_package_root_is_listed() -> None:
    roots = {".".join(p.relative_to(ROOT).parent.parts) for base in ("karpy", "awsprovider")
             for p in (ROOT / base).rglob("__init__.py") if "__all__" in p.read_text(encoding="utf-8")}
    assert roots == set(ROOTS)


@pytest.mark.parametrize("package", ROOTS)
def test_a_package_root_is_lazy_exactly_where_its_names_are_heavy(package: str) -> None:
    """The one rule for roots (CONTRIBUTING, "Public names"): a root whose public names load
    pydantic, a cloud SDK or the engine resolves them lazily (``lazy_exports``) and its docstring
    says so; any other root imports them plainly. A lazy root exports no name a submodule has (once
    imported, the submodule would shadow it)."""
    module = importlib.import_module(package)
    lazy = "__getattr__" in vars(module)
    loaded = _loaded_after(f"import {package} as m; [getattr(m, n) for n in m.__all__]")
    heavy = sorted(h for h in HEAVY if h in loaded)
    assert lazy == bool(heavy), f"{package}: lazy={lazy}, its names load {heavy}"
    if lazy:
        assert "lazily" in (module.__doc__ or ""), f"{package}'s docstring does not say its names resolve lazily"
        submodules = {p.stem for p in Path(module.__file__ or "").parent.iterdir() if p.suffix == ".py" or p.is_dir()}
        assert not submodules & set(module.__all__), f"{package} exports a submodule's name lazily"


# -- errors ----------------------------------------------------------------------------------------

def test_every_documented_error_derives_from_karpy_error() -> None:
    import awsprovider
    from karpy import errors

    for name in PUBLIC["karpy.errors"]:
        assert issubclass(getattr(errors, name), errors.KarpyError), name
    for name in ("CapacitySpecError", "InstanceTypeError", "NodeClassError", "PricingError", "UnknownPriceTable"):
        assert issubclass(getattr(awsprovider, name), errors.KarpyError), name


def test_errors_keep_their_builtin_bases_so_existing_except_clauses_still_catch_them() -> None:
    import awsprovider
    from karpy import errors

    for cls in (errors.ManifestError, errors.QuantityError, errors.AdmissionError, errors.UnknownPriorityClass,
                errors.UnknownCloudProviderError, errors.PricingError, errors.UnknownPriceTable,
                awsprovider.CapacitySpecError, awsprovider.NodeClassError, errors.MinValuesError,
                errors.FeatureGateError, errors.SchedulerConfigError, errors.DurationError, errors.CompareError):
        assert issubclass(cls, ValueError), cls
    assert issubclass(errors.ExplainLookupError, LookupError)
    assert issubclass(awsprovider.InstanceTypeError, RuntimeError)
    for cls in (errors.NodeClaimNotFoundError, errors.InsufficientCapacityError, errors.NodeClassNotReadyError,
                errors.CreateError):
        assert issubclass(cls, errors.CloudProviderError), cls


def test_one_class_per_error_wherever_it_is_imported_from() -> None:
    import awsprovider
    import awsprovider.pricing
    import awsprovider.spotmodel
    import karpy.api
    import karpy.api.loader
    import karpy.cloudprovider
    from karpy import errors

    assert awsprovider.PricingError is awsprovider.pricing.PricingError is awsprovider.spotmodel.PricingError
    assert awsprovider.PricingError is errors.PricingError
    assert awsprovider.UnknownPriceTable is errors.UnknownPriceTable
    assert karpy.api.ManifestError is karpy.api.loader.ManifestError is errors.ManifestError
    assert karpy.cloudprovider.InsufficientCapacityError is errors.InsufficientCapacityError
    # the catalogue re-exports the bases of the leaf every layer imports: one class each
    from karpy import _errors

    for name in _errors.__all__:
        assert getattr(errors, name) is getattr(_errors, name), name


def test_manifest_error_carries_file_document_and_path(tmp_path: Path) -> None:
    from karpy.api import load_manifests
    from karpy.errors import KarpyError, ManifestError

    bad = tmp_path / "pods.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                   "spec: {containers: [{name: c, image: nginx}]}\n---\n"
                   "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
                   "spec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {requests: {cpu: lots}}\n")
    with pytest.raises(KarpyError) as info:
        load_manifests(str(bad))
    err = info.value
    assert isinstance(err, ManifestError)
    assert err.file == str(bad)
    assert err.document_index == 2  # 1-based, as the message counts
    assert "containers[0]" in err.field_path and "cpu" in err.field_path
    assert str(err).startswith(f'{bad}: document 2 (Pod "b"): ')


def test_unknown_price_table_names_what_exists_and_is_still_a_pricing_error() -> None:
    from awsprovider import PricingError, load_table
    from karpy.errors import KarpyError, UnknownPriceTable

    with pytest.raises(UnknownPriceTable, match=r"^no us-east-1 price table dated 1999-01-01 or earlier; the oldest is 2023-09-18 "):
        load_table("us-east-1", "1999-01-01")
    with pytest.raises(PricingError, match=r"^no price tables for region 'mars-1'; available regions: .*us-east-1"):
        load_table("mars-1")
    # a malformed date is a PricingError but not an unknown table
    with pytest.raises(KarpyError) as info:
        load_table("us-east-1", "yesterday")
    assert isinstance(info.value, PricingError) and not isinstance(info.value, UnknownPriceTable)


def test_unknown_cloud_provider_is_a_karpy_error() -> None:
    from karpy.cloudprovider import resolve_cloud_provider
    from karpy.errors import KarpyError, UnknownCloudProviderError

    with pytest.raises(KarpyError, match="unknown cloud provider 'nimbus'") as info:
        resolve_cloud_provider("nimbus")
    assert isinstance(info.value, UnknownCloudProviderError)


def test_cloud_provider_errors_keep_the_upstream_message_text() -> None:
    from karpy.errors import CreateError, InsufficientCapacityError, KarpyError, UnevaluatedNodePoolError

    # types.go: InsufficientCapacityError / CreateError / UnevaluatedNodePoolError Error()
    err = InsufficientCapacityError("all requested instance types were unavailable during launch")
    assert str(err) == "insufficient capacity, all requested instance types were unavailable during launch"
    assert str(CreateError("boom", "LaunchFailed")) == "creating nodeclaim, boom"
    assert str(UnevaluatedNodePoolError("default")) == 'nodepool "default" is awaiting evaluation'
    assert isinstance(err, KarpyError)
