"""The NoCompatibleInstanceTypes run warning (karpy/sim/events.py): said once per NodePool, and when a
later provisioning pass kept the NodePool again (transient capacity errors ended), it says in which
passes and when it held -- it read as the state at the end of the run before."""

from __future__ import annotations

import karpy
from karpy.cli import bundled_example
from karpy.sim.events import nodepool_event_warnings
from karpy.sim.records import ProvisioningPass

REASON = "no instance type which had enough resources and the required offering met the scheduling requirements"


def _pass(index: int, time: float, skipped: bool) -> ProvisioningPass:
    return ProvisioningPass(index=index, time=time, nodepools=[("general", 0)],
                            template_errors={"general": REASON} if skipped else {},
                            templates=[] if skipped else ["general"])


def test_a_nodepool_skipped_to_the_end_keeps_the_plain_warning() -> None:
    (line,) = nodepool_event_warnings([_pass(1, 0, False), _pass(2, 40, True), _pass(3, 80, True)])
    assert line == (f'NodePool "general": NoCompatibleInstanceTypes: NodePool requirements filtered out all '
                    f"compatible available instance types ({REASON})")


def test_a_nodepool_kept_again_says_when_it_was_skipped() -> None:
    (line,) = nodepool_event_warnings([_pass(1, 0, True), _pass(2, 40, True), _pass(3, 80, False),
                                       _pass(4, 90, False)])
    assert line.endswith(f"({REASON}); only in 2 of 4 provisioning passes (t=0s to t=40s): later passes kept "
                         f"the NodePool")


def test_transient_capacity_errors_leave_a_dated_warning_and_permanent_ones_a_plain_one() -> None:
    transient = karpy.simulate(bundled_example(), unavailable=["*:*:*:fail=3"], until="1h")
    (line,) = [w for w in transient.warnings if "NoCompatibleInstanceTypes" in w]
    assert "provisioning passes (t=" in line and line.endswith("later passes kept the NodePool")
    assert "Pending" not in {p["phase"] for p in transient.to_document()["pods"].values()}
    permanent = karpy.simulate(bundled_example(), unavailable=["*:*:*"])
    (line,) = [w for w in permanent.warnings if "NoCompatibleInstanceTypes" in w]
    assert "provisioning passes" not in line
