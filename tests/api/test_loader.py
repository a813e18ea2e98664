"""Loader tests: every source form, List unpacking, skipped kinds, and each bad-input class."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from karpy.api.builders import make_pod
from karpy.api.loader import ManifestError, format_loc, load_manifests
from karpy.api.nodepool import NodePool
from karpy.api.quantity import Quantity

DATA = Path(__file__).parent / "data" / "manifests"

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
        - key: example.com/flag
          operator: In
          values: [VALUES]
"""


def np_text(values: str) -> str:
    return NODEPOOL.replace("VALUES", values)


def load_error(source: object) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        load_manifests(source)
    return info.value


class EC2NodeClass(BaseModel):
    """Stand-in for the AWS provider's model."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    apiVersion: str
    kind: str
    spec: dict


def test_load_directory_sorted_recursive_skips_hidden_and_other_extensions() -> None:
    m = load_manifests(DATA, extra_kinds={("karpenter.k8s.aws", "EC2NodeClass"): EC2NodeClass})
    assert [np.metadata.name for np in m.nodepools] == ["default"]
    assert m.nodepools[0].spec.limits["memory"] == Quantity("1000Gi")
    assert [d.metadata.name for d in m.deployments] == ["web"]
    assert [p.key for p in m.pods] == ["batch/solo"]
    assert len(m.extra["EC2NodeClass"]) == 1
    # v1 Service is modelled (its selector feeds default topology spreading), so nothing is skipped
    assert m.warnings == []
    assert [s.metadata.name for s in m.services] == ["web"]
    assert [type(o).__name__ for o in m.objects] == ["NodePool", "EC2NodeClass", "Deployment", "Service", "Pod"]
    assert [p.key.split("-")[0] for p in m.all_pods()] == ["batch/solo", "default/web", "default/web"]


def test_unregistered_extra_kind_is_skipped_with_warning() -> None:
    m = load_manifests(str(DATA))  # str path
    assert "karpenter.k8s.aws/v1 EC2NodeClass" in m.warnings[0] and "Service" not in m.warnings[0]


def test_sources_text_dict_model_and_list() -> None:
    pod = make_pod("obj")
    m = load_manifests([
        np_text('"a"'),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"},
         "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        pod,
    ])
    assert [p.metadata.name for p in m.pods] == ["d", "obj"]
    assert m.pods[1] is not pod and m.pods[1] == pod  # deep-copied, equal
    assert m.nodepools[0].requirements[0].values == ["a"]


def test_kubectl_list_is_unpacked() -> None:
    text = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec: {containers: [{name: c, image: busybox}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
  spec:
    containers: [{name: c, image: busybox, resources: {requests: {cpu: "-1"}}}]
"""
    err = load_error(text)
    assert str(err) == ('<yaml text>: document 1 (Pod "b"): items[1].spec.containers[0].resources.requests.cpu: '
                        'must be greater than or equal to 0 (got -1)')
    m = load_manifests(text.replace('"-1"', '"1"'))
    assert [p.metadata.name for p in m.pods] == ["a", "b"]


def test_empty_documents_skipped_but_counted() -> None:
    spec = "spec: {containers: [{name: c, image: i}]}\n"
    text = f"---\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\n{spec}---\napiVersion: v1\nkind: Pod\n{spec}"
    err = load_error(text)
    assert err.document_index == 3 and err.field_path == "metadata.name"


def test_input_files_not_modified(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "m")
    before = {p: p.read_bytes() for p in (tmp_path / "m").rglob("*") if p.is_file()}
    load_manifests(tmp_path / "m")
    assert {p: p.read_bytes() for p in (tmp_path / "m").rglob("*") if p.is_file()} == before


def test_input_dict_not_modified() -> None:
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}],
                    "unknownField": None}}
    load_manifests(doc)
    assert doc["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    assert "unknownField" in doc["spec"]  # admission prunes a copy


# ---------------------------------------------------------------- bad input, one class per test

def test_yaml_11_boolean_in_requirement_values(tmp_path: Path) -> None:
    f = tmp_path / "pool.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i}]}\n---\n"
                 + np_text("a, on, 4"))
    err = load_error(f)
    assert str(err).startswith(
        f'{f}: document 2 (NodePool "default"): spec.template.spec.requirements[0].values[1]: Invalid value: '
        '"boolean": spec.template.spec.requirements[0].values[1] in body must be of type string: "boolean"; '
        'YAML 1.1 read the unquoted value `on` as a boolean — quote it ("on")')
    assert err.line == 17 and "\n" not in str(err)


@pytest.mark.parametrize("word", ["no", "yes", "off", "True"])
def test_yaml_11_booleans_named_as_written(word: str) -> None:
    err = load_error(np_text(word))
    assert f"unquoted value `{word}` as a boolean" in err.message and f'"{word}"' in err.message


def test_integer_requirement_value_must_be_quoted() -> None:
    err = load_error(np_text("4"))
    assert err.field_path == "spec.template.spec.requirements[0].values[0]"
    # the API server also says the CEL rules were skipped: every problem is named
    assert err.message == ('Invalid value: "integer": spec.template.spec.requirements[0].values[0] in body must be '
                           'of type string: "integer"; YAML 1.1 read the unquoted value `4` as a number — quote it ("4")'
                           '; <nil>: Invalid value: null: some validation rules were not checked because the object '
                           'was invalid; correct the existing errors to complete validation')


def test_boolean_from_dict_source_still_explained() -> None:
    err = load_error({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"x": True}}})
    assert err.file == "<dict 1>" and err.field_path == "metadata.labels.x"
    assert "YAML 1.1" in err.message


def test_unknown_operator() -> None:
    err = load_error(NODEPOOL.replace("operator: In", "operator: Equals").replace("VALUES", "a"))
    assert err.field_path == "spec.template.spec.requirements[0].operator"
    assert err.message.startswith('Unsupported value: "Equals": supported values: "In", "NotIn", "Exists", '
                                  '"DoesNotExist", "Gt", "Lt", "Gte", "Lte"')


def test_gt_with_non_integer() -> None:
    err = load_error(NODEPOOL.replace("operator: In", "operator: Gt").replace("VALUES", '"big"'))
    # the CRD's CEL rule fails to evaluate int("big"): the API server reports the evaluation error
    assert err.field_path == "spec.template.spec.requirements"
    assert err.message == ('Invalid value: "array": strconv.ParseInt: parsing: invalid syntax evaluating rule: '
                           "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value")


@pytest.mark.parametrize(("qty", "fragment"), [('"-1"', "greater than or equal to 0"),
                                               ('"lots"', "quantities must match")])
def test_negative_or_unparsable_quantity(qty: str, fragment: str) -> None:
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\nspec:\n  containers:\n  - name: c\n    image: i\n" \
           f"    resources:\n" \
           f"      limits: {{memory: {qty}}}\n"
    err = load_error(text)
    assert err.field_path == "spec.containers[0].resources.limits.memory"
    assert fragment in err.message and err.kind == "Pod" and err.name == "a"


def test_missing_apiversion_or_kind() -> None:
    err = load_error("kind: Pod\nmetadata: {name: a}\n")
    assert err.field_path == "apiVersion" and "every manifest needs apiVersion and kind" in err.message
    err = load_error("apiVersion: v1\nmetadata: {name: a}\n")
    assert err.field_path == "kind"


def test_unsupported_version_of_known_kind() -> None:
    err = load_error(np_text("a").replace("karpenter.sh/v1", "karpenter.sh/v1beta1"))
    assert "karpenter.sh/v1beta1 NodePool is not supported; karpy reads karpenter.sh/v1" in str(err)


def test_malformed_yaml() -> None:
    err = load_error("apiVersion: v1\nkind: Pod\nmetadata: {name: a\n")
    assert err.document_index == 1 and err.message.startswith("invalid YAML")
    assert "line" in err.message


def test_document_not_a_mapping() -> None:
    err = load_error("- just\n- a list\n")
    assert "must be a mapping with apiVersion and kind" in str(err)


def test_wrong_shape_and_missing_field() -> None:
    err = load_error("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: notalist\n")
    assert err.field_path == "spec.containers"
    assert err.message == 'Invalid value: "string": spec.containers in body must be of type array: "string"'
    err = load_error("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {}\n")
    assert err.field_path == "spec.template" and err.message.startswith("Required value")


def test_invalid_enum_value() -> None:
    err = load_error("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: i}]\n"
                     "  tolerations: [{operator: Maybe}]\n")
    assert err.field_path == "spec.tolerations[0].operator"
    assert err.message == "must be 'Equal' or 'Exists' (got 'Maybe')"


def test_duplicate_object() -> None:
    spec = "spec: {containers: [{name: c, image: i}]}\n"
    text = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\n{spec}---\napiVersion: v1\nkind: Pod\n"
            f"metadata: {{name: a}}\n{spec}")
    err = load_error(text)
    assert err.document_index == 2 and 'duplicate Pod "default/a"' in err.message
    # same name in another namespace is fine
    load_manifests(text.replace("{name: a}\n", "{name: a, namespace: b}\n", 1))


def test_missing_file() -> None:
    err = load_error(Path("/nonexistent/karpy.yaml"))
    assert str(err) == "/nonexistent/karpy.yaml: no such file or directory"


def test_bad_source_type() -> None:
    err = load_error([42])
    assert "cannot load a int" in str(err)


def test_multiple_problems_are_all_named_in_one_line() -> None:
    err = load_error("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n"
                     "  - {name: c, image: i, resources: {requests: {cpu: '-1', memory: '-1'}}}\n")
    assert "requests.cpu" in str(err) and "requests.memory" in str(err) and "\n" not in str(err)


def test_format_loc() -> None:
    assert format_loc(("spec", "containers", 0, "resources", "requests", "nvidia.com/gpu")) == \
        'spec.containers[0].resources.requests["nvidia.com/gpu"]'


def test_model_object_source_type_checked() -> None:
    np = NodePool.model_validate({"metadata": {"name": "x"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "g", "kind": "k", "name": "n"}}}}})
    assert load_manifests(np).nodepools[0].metadata.name == "x"


def test_model_objects_of_another_class_for_the_kind_are_rebuilt_through_the_registered_one():
    # a test framework that reloads modules leaves objects of an older Pod class around; the loader
    # must still file them as pods (it used to drop them into `extra`, and the simulation saw no pods)
    from karpy.api.builders import make_pod
    from karpy.api.pod import Pod

    class OtherPod(Pod):
        pass

    original = make_pod("p", requests={"cpu": "1"})
    other = OtherPod.model_validate(original.model_dump(mode="json", by_alias=True))
    loaded = load_manifests([other])
    assert [type(p) for p in loaded.pods] == [Pod]
    assert loaded.pods[0].model_dump() == original.model_dump()
    assert loaded.extra == {}


def _yaml_signature(docs: list[Any]) -> list[Any]:
    """What a caller of the YAML step sees: each document's data, and per node its tag, start line
    and column, scalar value, and whether it is plain (``style`` None in PyYAML, "" in libyaml)."""
    import yaml

    def walk(node: Any, out: list[Any]) -> list[Any]:
        if node is None:
            return out
        plain = not node.style if isinstance(node, yaml.ScalarNode) else None
        out.append((node.tag, node.start_mark.line, node.start_mark.column, plain,
                    node.value if isinstance(node, yaml.ScalarNode) else None))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(k, out)
                walk(v, out)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v, out)
        return out

    return [(d.data, d.index, walk(d.node, [])) for d in docs]


def test_libyaml_reads_every_real_manifest_as_the_pure_python_loader_does() -> None:
    """The libyaml path (CSafeLoader) gives the same documents, tags, lines and values as the
    pure-Python bounded loader on every YAML file under tests/ (real manifests: upstream examples,
    blueprints, kubectl dumps, Helm output) and on edge cases (CRLF, BOM, anchors, empty and
    comment-only streams, explicit ends, typed scalars)."""
    from karpy.api import loader as L

    if L._LIBYAML_LOADER is None:
        pytest.skip("PyYAML without libyaml: only the pure-Python path exists")
    texts = {str(p): p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parents[1].rglob("*.yaml"))}
    texts.update({f"edge {i}": t for i, t in enumerate([
        "a: 1\r\nb: [1, 2]\r\n", "\ufeffkind: Pod\n", "a: &x [1]\nb: *x\n", "---\n---\na: 1\n...\n", "", "# only\n",
        "a: 'q'\nb: \"d\"\nc: |\n  x\nd: >\n  y\n", "a: 2001-12-14\nb: 0x1F\nc: .inf\nd: ~\ne: yes\n",
        "a:\n- b\n- c: [d, {e: f}]\n"])})
    assert len(texts) > 50
    for name, text in texts.items():
        fast = L._read_yaml_libyaml(text, name)
        assert fast is not None, name  # valid text takes the libyaml path
        assert _yaml_signature(fast) == _yaml_signature(L._read_yaml_python(text, name)), name


@pytest.mark.parametrize("text", ["[" * 100_000, "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 200)),
                                  "a: [1\n", "a: \x01\n", "a: &x [*x]\n", "a: 1\n\tb: 2\n"])
def test_deep_unprintable_or_bad_yaml_goes_to_the_pure_python_loader(text: str) -> None:
    """Nesting past MAX_YAML_DEPTH (the event pass stops at the limit: 100,000 brackets take
    milliseconds), text the pure-Python reader rejects and every YAML error leave the libyaml path,
    so the bounded loader reports them exactly as before."""
    import time

    from karpy.api import loader as L

    if L._LIBYAML_LOADER is None:
        pytest.skip("PyYAML without libyaml")
    start = time.process_time()
    assert L._read_yaml_libyaml(text, "f") is None
    assert time.process_time() - start < 5


def test_a_json_string_keeps_the_characters_yaml_reads_as_line_breaks(tmp_path) -> None:
    """U+0085, U+2028 and U+2029 are ordinary characters in a JSON string (kubectl decodes JSON as
    JSON) but line breaks to YAML 1.1, so PyYAML read them as a space: the fuzzer's case of a
    Network subnet id "subnet-a<U+0085>b" in a .json file was accepted, where EC2 refuses it. The
    characters now survive, and what EC2 refuses is refused, naming the field."""
    import json

    from karpy.api.loader import ManifestError, load_manifests

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"note": "a\u2028b\u0085c"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod, ensure_ascii=False), encoding="utf-8")
    (loaded,) = load_manifests([path]).pods
    assert loaded.metadata.annotations == {"note": "a\u2028b\u0085c"}
    flow = tmp_path / "flow.yaml"  # YAML flow style, not JSON: YAML's own rules still apply
    flow.write_text("{apiVersion: v1, kind: ConfigMap, metadata: {name: a\u0085b}}\n", encoding="utf-8")
    assert load_manifests([flow]).warnings  # read as YAML (an unmodelled kind), not refused as JSON
    network = {"apiVersion": "karpy.io/v1alpha1", "kind": "Network", "metadata": {"name": "vpc"},
               "spec": {"subnets": [{"zone": "us-east-1a", "id": "subnet-a\u0085b"}]}}
    (tmp_path / "net.json").write_text(json.dumps(network, ensure_ascii=False), encoding="utf-8")
    import pytest

    from awsprovider.cloudprovider import AWSCloudProvider

    with pytest.raises(ManifestError, match=r"spec\.subnets\[0\]\.id: contains U\+0085"):
        load_manifests([tmp_path / "net.json"], extra_kinds=AWSCloudProvider.EXTRA_KINDS)


def _nested(depth: int, alias: bool) -> str:
    """A document nested ``depth`` collections deep (block maps, then a flow list), with an anchor and
    alias when ``alias``."""
    lines = ["top:" + (" &a" if alias else "")]
    for i in range(1, depth - 2):
        lines.append(" " * i + "k:")
    lines.append(" " * (depth - 2) + "v: [1, 2]" + ("\nother: *a" if alias else ""))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("alias", [False, True])
@pytest.mark.parametrize("offset", [-3, -2, -1, 0, 1])
def test_the_libyaml_path_skips_only_shape_checks_that_would_pass(alias: bool, offset: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The composing libyaml path leaves out _check_shape when its event pass saw no alias and nesting
    below MAX_YAML_DEPTH: the same answer (documents, or the way to the reference loader) as with the
    check, at and around the limit, with and without an alias."""
    from karpy.api import loader as L

    if L._LIBYAML_LOADER is None:
        pytest.skip("PyYAML without libyaml")
    text = _nested(L.MAX_YAML_DEPTH + offset, alias)
    fast = L._read_yaml_composed(text, "f")
    compose = L._compose_documents
    checked: list[bool] = []

    def always(loader: Any, file: str, docs: list[Any], current: list[Any], check_shape: bool = True) -> None:
        checked.append(check_shape)
        compose(loader, file, docs, current, True)

    monkeypatch.setattr(L, "_compose_documents", always)
    plain = L._read_yaml_composed(text, "f")
    assert (fast is None) == (plain is None)
    if fast is not None and plain is not None:
        assert _yaml_signature(fast) == _yaml_signature(plain)
    if checked:
        assert checked == [alias or offset >= 0]
