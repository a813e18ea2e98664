"""One regression test per fuzz class of issue #16, through the loader (file / document / field path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from awsprovider.apis import EXTRA_KINDS
from karpy.api.loader import ManifestError, load_manifests

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
"""
NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
"""


def error(text: str, **kwargs: object) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        load_manifests(text, extra_kinds=EXTRA_KINDS, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


def test_valid_manifests_are_admitted_with_defaults() -> None:
    m = load_manifests([NODEPOOL, NODECLASS, DEPLOYMENT], extra_kinds=EXTRA_KINDS)
    assert m.warnings == []
    assert m.nodepools[0].spec.disruption.budgets[0].nodes == "10%"
    # the EC2NodeClass CRD default, applied by admission
    assert m.extra["EC2NodeClass"][0].spec.metadata_options.http_tokens == "required"


def test_nodepool_without_nodeclassref() -> None:
    err = error(NODEPOOL.replace("      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n", ""))
    assert err.field_path == "spec.template.spec.nodeClassRef" and err.message.startswith("Required value")


def test_deployment_without_selector_or_containers() -> None:
    err = error(DEPLOYMENT.replace("  selector: {matchLabels: {app: web}}\n", ""))
    assert err.field_path == "spec.selector" and err.message.startswith("Required value")
    err = error(DEPLOYMENT.replace("containers: [{name: web, image: nginx}]", "containers: []"))
    assert err.field_path == "spec.template.spec.containers" and err.message == "Required value"
    err = error(DEPLOYMENT.replace("labels: {app: web}}", "labels: {app: other}}"))
    assert err.field_path == "spec.template.metadata.labels"
    assert err.message == 'Invalid value: {"app":"other"}: `selector` does not match template `labels`'


@pytest.mark.parametrize(("drop", "field", "message"), [
    ("  role: KarpenterNodeRole\n", "spec", "must specify exactly one of ['role', 'instanceProfile']"),
    ("  amiSelectorTerms: [{alias: al2023@latest}]\n", "spec.amiSelectorTerms", "Required value"),
    ("  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n", "spec.subnetSelectorTerms", "Required value"),
    ("  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n", "spec.securityGroupSelectorTerms",
     "Required value"),
])
def test_ec2nodeclass_without_role_ami_subnet_or_security_group_terms(drop: str, field: str, message: str) -> None:
    err = error(NODECLASS.replace(drop, ""))
    assert err.field_path == field and message in err.message


@pytest.mark.parametrize(("name", "message"), [
    ("UPPER", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"),
    ("..", "a lowercase RFC 1123 subdomain"), ("*", "a lowercase RFC 1123 subdomain"),
    ("a" * 1000, "must be no more than 253 characters"), ("a/b", "a lowercase RFC 1123 subdomain"),
], ids=["UPPER", "dots", "star", "1000-chars", "slash"])
def test_names_the_api_server_rejects(name: str, message: str) -> None:
    err = error(NODEPOOL.replace("name: default\nspec", f"name: '{name}'\nspec"))
    assert err.field_path == "metadata.name"
    assert err.message.startswith(f'Invalid value: "{name}": {message}')


@pytest.mark.parametrize("namespace", ["UPPER", "a.b", "a/b", "x" * 64])
def test_namespaces_the_api_server_rejects(namespace: str) -> None:
    err = error(DEPLOYMENT.replace("name: web\nspec", f"name: web\n  namespace: '{namespace}'\nspec"))
    assert err.field_path == "metadata.namespace"


_LABEL_REGEX = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_META = "name: web\nspec"


@pytest.mark.parametrize(("old", "new", "value", "field", "message"), [
    # pkg/util/validation (NameIsDNSSubdomain / NameIsDNSLabel, container names): "characters"
    (_META, "name: '{v}'\nspec", "a" * 254, "metadata.name", "must be no more than 253 characters"),
    (_META, "name: '{v}'\nspec", "\u00e9" * 127, "metadata.name", "must be no more than 253 characters"),
    (_META, "name: web\n  namespace: '{v}'\nspec", "x" * 64, "metadata.namespace", "must be no more than 63 characters"),
    (_META, "name: web\n  namespace: '{v}'\nspec", "UPPER", "metadata.namespace", _LABEL_REGEX),
    ("[{name: web,", "[{{name: {v},", "Web", "spec.template.spec.containers[0].name", _LABEL_REGEX),
    # pkg/api/validate/content (IsLabelKey / IsLabelValue, annotation keys): "bytes"
    (_META, "name: web\n  labels: {{app: '{v}'}}\nspec", "x" * 64, "metadata.labels", "must be no more than 63 bytes"),
    (_META, "name: web\n  labels: {{'{v}': x}}\nspec", "a" * 254 + "/k", "metadata.labels",
     "prefix part must be no more than 253 bytes"),
    (_META, "name: web\n  annotations: {{'{v}': x}}\nspec", "k" * 64, "metadata.annotations",
     "name part must be no more than 63 bytes"),
], ids=["name-254", "name-254-utf8-bytes", "namespace-64", "namespace-upper", "container-upper", "label-value-64",
        "label-key-prefix-254", "annotation-key-64"])
def test_each_check_speaks_its_upstream_packages_words(old: str, new: str, value: str, field: str,
                                                       message: str) -> None:
    # apimachinery v0.35 has two MaxLenErrors ("characters" in pkg/util/validation, "bytes" in
    # pkg/api/validate/content); karpy.validation implements the checks once and each caller keeps its
    # words. Lengths are Go's len(): UTF-8 bytes (127 x "é" is 254 bytes).
    err = error(DEPLOYMENT.replace(old, new.format(v=value)))
    assert err.field_path == field
    assert err.message.startswith(f'Invalid value: "{value}": {message}'), err.message


def test_a_name_with_a_trailing_newline_is_rejected() -> None:
    # Go's regexp "$" (not multi-line) matches only at the very end of the text
    err = error(NODEPOOL.replace("name: default\nspec", 'name: "default\\n"\nspec'))
    assert err.field_path == "metadata.name" and "a lowercase RFC 1123 subdomain" in err.message


@pytest.mark.parametrize(("value", "got"), [("true", "boolean"), ('"3"', "string"), ("1.5", "number")])
def test_replicas_is_an_integer_not_a_truthy_or_a_string(value: str, got: str) -> None:
    err = error(DEPLOYMENT.replace("replicas: 2", f"replicas: {value}"))
    assert err.field_path == "spec.replicas"
    assert err.message.startswith(f'Invalid value: "{got}": spec.replicas in body must be of type integer: "{got}"')
    err = error(NODEPOOL.replace("spec:\n  template", f"spec:\n  replicas: {value}\n  template"))
    assert err.field_path == "spec.replicas" and "must be of type integer" in err.message


def test_duplicate_mapping_keys() -> None:
    err = error(DEPLOYMENT.replace("  replicas: 2\n", "  replicas: 2\n  replicas: 3\n"))
    assert err.field_path == "spec.replicas" and err.message == 'duplicate field "spec.replicas"'
    err = error(NODEPOOL.replace("operator: In,", "operator: In, operator: Exists,"))
    assert err.field_path == "spec.template.spec.requirements[0].operator"


def test_older_ec2nodeclass_version_errors_with_the_upgrade_hint() -> None:
    err = error(NODECLASS.replace("karpenter.k8s.aws/v1", "karpenter.k8s.aws/v1beta1"))
    assert err.field_path == "apiVersion"
    assert err.message.startswith("karpenter.k8s.aws/v1beta1 EC2NodeClass is not supported; karpy reads "
                                  "karpenter.k8s.aws/v1 (v1beta1 was removed in Karpenter v1.0")
    err = error(NODEPOOL.replace("karpenter.sh/v1", "karpenter.sh/v1beta1"))
    assert "migrate the manifest to karpenter.sh/v1" in err.message


@pytest.mark.parametrize(("written", "right"), [("nodepool", "NodePool"), ("Nodepool", "NodePool"),
                                                ("deployment", "Deployment"), ("ec2nodeclass", "EC2NodeClass")])
def test_kind_in_the_wrong_case_names_the_right_spelling(written: str, right: str) -> None:
    text = {"NodePool": NODEPOOL, "Deployment": DEPLOYMENT, "EC2NodeClass": NODECLASS}[right]
    err = error(text.replace(f"kind: {right}\n", f"kind: {written}\n"))
    assert err.field_path == "kind" and err.message.endswith(f"kinds are case-sensitive; write kind: {right}")


def test_unknown_fields_warn_like_kubectl_and_error_under_strict() -> None:
    text = DEPLOYMENT.replace("  replicas: 2\n", "  replicas: 2\n  replica: 3\n")
    m = load_manifests(text)
    assert m.warnings == ['<yaml text>: document 1 (Deployment "web"): unknown field "spec.replica"']
    err = error(text, strict=True)
    assert err.field_path == "spec.replica" and err.message == 'strict decoding error: unknown field "spec.replica"'


def test_v1beta1_kubelet_in_a_nodepool_warns_with_where_it_went() -> None:
    text = NODEPOOL.replace("      requirements:", "      kubelet: {maxPods: 110}\n      requirements:")
    m = load_manifests(text)
    assert len(m.warnings) == 1 and 'unknown field "spec.template.spec.kubelet"' in m.warnings[0]
    assert "EC2NodeClass spec.kubelet" in m.warnings[0]


def test_status_and_managed_fields_of_a_kubectl_dump_are_accepted(tmp_path: Path) -> None:
    dump = DEPLOYMENT.replace("metadata:\n  name: web\n", (
        "metadata:\n  name: web\n  uid: 0b0b\n  resourceVersion: '12'\n  creationTimestamp: 2026-07-01T00:00:00Z\n"
        "  managedFields:\n  - {manager: kubectl, operation: Update, fieldsType: FieldsV1, fieldsV1: {f:spec: {}}}\n"
    )) + "status:\n  replicas: 2\n  whatever: {}\n"
    f = tmp_path / "dump.yaml"
    f.write_text(dump)
    m = load_manifests(f)
    assert m.warnings == [] and m.deployments[0].metadata.name == "web"


def test_the_loader_never_coerces_a_type_the_schema_forbids() -> None:
    err = error(NODECLASS.replace("  role: KarpenterNodeRole\n", "  role: KarpenterNodeRole\n  detailedMonitoring: 'yes'\n"))
    assert err.field_path == "spec.detailedMonitoring" and "must be of type boolean" in err.message


def test_unmodelled_core_kinds_are_still_admitted() -> None:
    pvc = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
           "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: 7}\n")
    err = error(pvc)
    assert err.field_path == "spec.volumeMode" and "must be of type string" in err.message
    m = load_manifests(pvc.replace(", volumeMode: 7", ""))
    # a PersistentVolumeClaim is a modelled kind since volume topology (#12): admitted and loaded, no warning
    assert m.warnings == [] and [c.metadata.name for c in m.persistent_volume_claims] == ["data"]
    cronjob = ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '@daily'\n"
               "  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}}\n")
    err = error(cronjob)
    assert err.field_path == "spec.jobTemplate.spec.template.spec.containers[0].image"


def test_simulate_strict_rejects_unknown_fields() -> None:
    import karpy

    text = NODEPOOL.replace("spec:\n  template:", "spec:\n  wieght: 10\n  template:")
    with pytest.raises(ManifestError, match='strict decoding error: unknown field "spec.wieght"'):
        karpy.simulate(text, cloud_provider="fake", strict=True)
    result = karpy.simulate(text, cloud_provider="fake")
    assert any('unknown field "spec.wieght"' in w for w in result.to_document()["warnings"])


@pytest.mark.parametrize("value, got", [("true", "boolean"), ("3", "integer")])
@pytest.mark.parametrize("group", ["containers", "initContainers"])
def test_container_list_of_the_wrong_type_is_the_schemas_error_not_a_crash(group: str, value: str, got: str) -> None:
    # found by tests/fuzz/run.py --cases 20000 --seed 1115: core validation iterated a boolean
    # ("TypeError: 'bool' object is not iterable")
    spec = "      containers: [{name: web, image: nginx}]\n"
    text = DEPLOYMENT.replace(spec, spec.replace("[{name: web, image: nginx}]", value) if group == "containers"
                              else spec + f"      initContainers: {value}\n")
    err = error(text)
    field = f"spec.template.spec.{group}"
    assert err.field_path == field
    assert err.message == f'Invalid value: "{got}": {field} in body must be of type array: "{got}"'


def test_a_pods_container_list_of_the_wrong_type_too() -> None:
    # the same run's Pod case ("TypeError: 'int' object is not iterable")
    err = error("apiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec:\n  containers: 7\n")
    assert err.field_path == "spec.containers"
    assert err.message == 'Invalid value: "integer": spec.containers in body must be of type array: "integer"'
