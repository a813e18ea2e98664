"""Ports of pkg/controllers/state/statenodepool_test.go (core 2266468) for
:class:`karpy.static.nodepoolstate.NodePoolState`, and its re-derivation from the simulation's
NodeClaims (:meth:`NodePoolState.observe`). Not ported: the two "should be thread-safe ..." Its
(karpy is single-threaded)."""

from __future__ import annotations

from karpy.static.nodepoolstate import ACTIVE, DELETING, PENDING_DISRUPTION, NodePoolState

POOL = "nodepool-2"


# upstream: state/statenodepool_test.go "should reserve requested capacity when available"
def test_reserve_when_available():
    s = NodePoolState()
    assert s.reserve_node_count(POOL, 5, 3) == 3
    assert s.reserve_node_count(POOL, 5, 2) == 2


# upstream: state/statenodepool_test.go "should grant partial capacity when requested exceeds available"
def test_reserve_partially():
    s = NodePoolState()
    assert s.reserve_node_count(POOL, 5, 4) == 4
    assert s.reserve_node_count(POOL, 5, 5) == 1


# upstream: state/statenodepool_test.go "should return zero when no capacity available"
def test_reserve_nothing_left():
    s = NodePoolState()
    assert s.reserve_node_count(POOL, 5, 5) == 5
    assert s.reserve_node_count(POOL, 5, 1) == 0


# upstream: state/statenodepool_test.go "should account for running NodeClaims"
def test_reserve_counts_running():
    s = NodePoolState()
    s.update_nodeclaim(POOL, "nc", False)
    assert s.reserve_node_count(POOL, 5, 4) == 4
    assert s.reserve_node_count(POOL, 5, 1) == 0


# upstream: state/statenodepool_test.go "should account for deleting NodeClaims"
def test_reserve_counts_deleting():
    s = NodePoolState()
    s.update_nodeclaim(POOL, "nc", False)
    s.mark_deleting(POOL, "nc")
    assert s.get_node_count(POOL) == (0, 1, 0)
    assert s.reserve_node_count(POOL, 5, 4) == 4


# upstream: state/statenodepool_test.go "should release reserved capacity"
def test_release():
    s = NodePoolState()
    assert s.reserve_node_count(POOL, 5, 3) == 3
    assert s.reserve_node_count(POOL, 5, 3) == 2
    s.release_node_count(POOL, 4)
    assert s.reserve_node_count(POOL, 5, 4) == 4


# upstream: state/statenodepool_test.go "should handle releasing more than reserved"
def test_release_more_than_reserved():
    s = NodePoolState()
    assert s.reserve_node_count(POOL, 5, 2) == 2
    s.release_node_count(POOL, 5)
    assert s.reserve_node_count(POOL, 5, 5) == 5


def test_observe_rederives_the_sets_and_cleans_up_gone_nodeclaims():
    s = NodePoolState()
    s.observe([(POOL, "a", ACTIVE), (POOL, "b", DELETING), (POOL, "c", PENDING_DISRUPTION), ("other", "x", ACTIVE)])
    assert s.get_node_count(POOL) == (1, 1, 1) and s.get_node_count("other") == (1, 0, 0)
    s.observe([(POOL, "a", DELETING), (POOL, "c", ACTIVE), ("other", "x", None)])  # b deleted, x's launch failed
    assert s.get_node_count(POOL) == (1, 1, 0) and s.get_node_count("other") == (0, 0, 0)


def test_cleanup_of_the_last_nodeclaim_drops_the_reservation():
    """statenodepool.go Cleanup: a pool with no active or deleting NodeClaim loses its entry."""
    s = NodePoolState()
    s.update_nodeclaim(POOL, "a", False)
    assert s.reserve_node_count(POOL, 5, 2) == 2
    s.cleanup("a")
    assert s.get_node_count(POOL) == (0, 0, 0) and s.reserved(POOL) == 0
