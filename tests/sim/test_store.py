from types import SimpleNamespace as NS

import pytest

from karpy.sim.store import ObjectStore


def obj(name, ns="default"):
    return NS(metadata=NS(name=name, namespace=ns))


def test_watchers_see_every_change_in_order():
    store = ObjectStore()
    seen = []
    store.watch("Pod", lambda e: seen.append((e.type, e.obj.metadata.name)))
    a = store.create("Pod", obj("a"))
    store.create("Pod", obj("b"))
    store.update("Pod", a)
    store.delete("Pod", a)
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert [o.metadata.name for o in store.list("Pod")] == ["b"]
    assert store.resource_version == 4


def test_duplicate_and_missing_objects_are_errors():
    store = ObjectStore()
    store.create("Node", obj("n", ns=""))
    with pytest.raises(KeyError):
        store.create("Node", obj("n", ns=""))
    with pytest.raises(KeyError):
        store.update("Node", obj("m", ns=""))
    assert store.get("Node", "n") is not None


def test_get_all_answers_the_existing_objects_in_the_keys_order():
    store = ObjectStore()
    for name in ("a", "b", "c"):
        store.create("Pod", obj(name))
    store.create("Pod", obj("a", ns="other"))
    got = store.get_all("Pod", [("default", "c"), ("default", "gone"), ("other", "a"), ("default", "a")])
    assert [(o.metadata.namespace, o.metadata.name) for o in got] == [("default", "c"), ("other", "a"), ("default", "a")]
    assert store.get_all("Node", [("", "n")]) == []
