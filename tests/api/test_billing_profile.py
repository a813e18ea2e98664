"""The karpy.io/v1alpha1 BillingProfile kind: loading, and bad profiles rejected with one line naming
the file, document and field path (exit 2 on the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from karpy.api.billing import BillingProfile
from karpy.api.loader import ManifestError, load_manifests

GOOD = """\
apiVersion: karpy.io/v1alpha1
kind: BillingProfile
metadata: {name: acme}
spec:
  enterpriseDiscount: "10%"
  spotDiscount: "2.5%"
  savingsPlans:
  - {name: sp-m7i, type: EC2Instance, family: m7i, region: us-east-1, commitment: "1.20",
     rates: {m7i: "38%", m7i.large: "37%"}}
  - {name: compute, type: Compute, commitment: 0.5, rates: {c7i: "30%", m8i: "28%"}}
  reservedInstances:
  - {instanceType: m8i.xlarge, zone: us-east-1a, count: 2, discount: "40%"}
  - {name: regional, instanceType: m8i.xlarge, count: 1, discount: "35%"}
  nodeFees:
  - {name: agent, perNodeHour: "0.01"}
  - {name: licence, perVCPUHour: 0.002}
"""


def test_a_profile_loads_like_any_manifest() -> None:
    loaded = load_manifests([GOOD])
    [profile] = loaded.billing_profiles
    assert isinstance(profile, BillingProfile) and profile.metadata.name == "acme"
    s = profile.spec
    assert (s.enterprise_discount, s.spot_discount) == (0.1, 0.025)
    assert s.savings_plans[0].rate("m7i.large") == 0.37 and s.savings_plans[0].rate("m7i.xlarge") == 0.38
    assert s.savings_plans[0].rate("c7i.large") is None and s.savings_plans[1].rate("c7i.large") == 0.3
    assert [ri.label for ri in s.reserved_instances] == ["ri-m8i.xlarge-us-east-1a", "regional"]
    assert (s.node_fees[0].per_node_hour, s.node_fees[1].per_vcpu_hour) == (0.01, 0.002)
    assert profile.source == ("<yaml text>", 1)


@pytest.mark.parametrize("old, new, message", [
    ('commitment: "1.20"', 'commitment: "-1"',
     'spec.savingsPlans[0].commitment: \'-1\' must not be negative'),
    ('commitment: 0.5', 'commitment: 0', "spec.savingsPlans[1].commitment: 0 must be greater than 0 ($/h)"),
    ('enterpriseDiscount: "10%"', "enterpriseDiscount: 10",
     'spec.enterpriseDiscount: 10 is not a percentage; write it as a string such as "10%"'),
    ('enterpriseDiscount: "10%"', 'enterpriseDiscount: "100%"', "spec.enterpriseDiscount: '100%' must be below 100%"),
    ('family: m7i,', 'family: M7,', "spec.savingsPlans[0].family: 'M7' is not an instance family (e.g. m7i)"),
    ('m7i.large: "37%"', 'c7i.large: "37%"', "spec.savingsPlans[0]: rates: 'c7i.large' is outside the plan's family 'm7i'"),
    ('count: 2,', 'count: 0,', "spec.reservedInstances[0].count: "),
    ('{name: regional, instanceType: m8i.xlarge, count: 1', '{instanceType: m8i.xlarge, zone: us-east-1a, count: 1',
     "spec.reservedInstances: [1] overlaps [0] (m8i.xlarge, us-east-1a): give one entry with the total count"),
    ('perNodeHour: "0.01"', 'perNodeHour: "-0.01"', "spec.nodeFees[0].perNodeHour: '-0.01' must not be negative"),
    ('perVCPUHour: 0.002', 'perNodeHour: 1, perVCPUHour: 0.002', "spec.nodeFees[1]: "),
    ('enterpriseDiscount: "10%"', 'enterpriseDiscout: "10%"', "spec.enterpriseDiscout: "),
    ('type: Compute,', 'type: Compute, family: c7i,', "spec.savingsPlans[1]: "),
    ('name: compute,', 'name: sp-m7i,', "commitment name 'sp-m7i' is used twice"),
])
def test_bad_profiles_are_one_line_naming_file_document_and_field(old: str, new: str, message: str) -> None:
    assert old in GOOD
    with pytest.raises(ManifestError) as err:
        load_manifests([GOOD.replace(old, new)])
    text = str(err.value)
    assert "\n" not in text and text.startswith('<yaml text>: document 1 (BillingProfile "acme"): ')
    assert message in text


def test_a_run_takes_one_profile() -> None:
    with pytest.raises(ManifestError, match='document 2 .*: kind: a run takes one BillingProfile; another was defined '
                                            'in <yaml text> document 1'):
        load_manifests([GOOD + "---\n" + GOOD.replace("name: acme", "name: other")])


def test_unknown_family_or_type_is_bad_input_exit_2(tmp_path: Path) -> None:
    """Checked against the run's price table: exit 2, one line on stderr, no traceback."""
    from karpy.cli import bundled_example, cli

    cases = {"family: m7i,": ("family: m9zz,", "spec.savingsPlans[0].family: unknown instance family 'm9zz'"),
             "c7i: \"30%\"": ("c9q: \"30%\"", "spec.savingsPlans[1].rates.c9q: unknown instance family 'c9q'"),
             "{instanceType: m8i.xlarge, zone": ("{instanceType: m8i.huge, zone",
                                                 "spec.reservedInstances[0].instanceType: unknown instance type 'm8i.huge'")}
    for old, (new, message) in cases.items():
        path = tmp_path / "billing.yaml"
        text = GOOD.replace(old, new)
        if old.startswith("family"):
            text = text.replace('m7i: "38%", m7i.large: "37%"', 'm9zz: "38%"')
        path.write_text(text)
        out = CliRunner().invoke(cli, ["simulate", str(bundled_example()), str(path), "--prices", "2026-07-20"])
        assert out.exit_code == 2, out.output
        lines = [line for line in out.output.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], out.output
        assert "Traceback" not in out.output


def test_billing_argument_without_a_profile_is_bad_input() -> None:
    import karpy
    from karpy.cli import bundled_example

    with pytest.raises(ManifestError, match="no karpy.io/v1alpha1 BillingProfile found"):
        karpy.simulate([str(bundled_example())], prices="2026-07-20", billing={"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                                                            "metadata": {"name": "p"}, "value": 1})
