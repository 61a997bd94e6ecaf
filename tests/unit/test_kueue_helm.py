"""A KueueSetup's `install` (gitops/kueue_install.py): for a Helm install, `paddlegen kueue`'s
manager ConfigMap is the one Kueue's chart renders, and the restart names the chart's
Deployment. The chart's output is kept in tests/data/kueue/helm (scripts/kueue_chart.py)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.gitops import kueue_install, kueue_manager, kueue_setup
from scripts import kueue_chart
from tests.conftest import EXAMPLES
from tests.helpers import assert_sha256sums

SETUP = EXAMPLES / "gitops" / "platform" / "kueue.yaml"
HELM = kueue_chart.OUT


def chart_output(case: str) -> dict[str, dict[str, Any]]:
    """The chart's objects for a case, by kind."""
    docs = yaml.safe_load_all((HELM / f"{case}.yaml").read_text(encoding="utf-8"))
    return {d["kind"]: d for d in docs if d}


def paddlegen_config_map(install: dict[str, Any]) -> dict[str, Any]:
    data = kueue_setup.load(SETUP)[0]
    data = {**data, "waitForPodsReady": kueue_chart.BOUND, "install": install}
    (found,) = [o for o in kueue_setup.objects(data) if o["kind"] == "ConfigMap"]
    return found


def test_the_kept_chart_output_is_what_the_script_wrote():
    listed = assert_sha256sums(HELM, kueue_chart.SUMS)
    assert sorted(listed) == sorted(f"{case}.yaml" for case in kueue_chart.CASES)


@pytest.mark.parametrize("case", kueue_chart.CASES)
def test_a_helm_installs_config_map_is_the_one_its_chart_renders(case: str):
    chart = chart_output(case)["ConfigMap"]
    ours = paddlegen_config_map(kueue_chart.CASES[case])
    for key in ("name", "namespace"):
        assert ours["metadata"][key] == chart["metadata"][key], key
    key = kueue_manager.KEY
    # the chart was given paddlegen's configuration without internalCertManagement, and adds
    # its own: equal only if paddlegen writes the section as the chart does
    assert yaml.safe_load(ours["data"][key]) == yaml.safe_load(chart["data"][key])
    assert "internalCertManagement" in yaml.safe_load(ours["data"][key])


@pytest.mark.parametrize("case", kueue_chart.CASES)
def test_the_restart_names_the_deployment_that_reads_it(case: str):
    objects = chart_output(case)
    install = kueue_install.install(kueue_chart.CASES[case])
    deployment = objects["Deployment"]
    assert install.restart() == (
        f"kubectl -n {deployment['metadata']['namespace']} rollout restart deployment "
        f"{deployment['metadata']['name']}"
    )
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert {"name": "manager-config", "configMap": {"name": install.config_map}} in volumes


@pytest.mark.parametrize(
    ("release", "overrides", "expected"),
    [
        ("kueue", {}, "kueue"),
        ("my-kueue-prod", {}, "my-kueue-prod"),  # contains the chart's name
        ("platform", {}, "platform-kueue"),
        ("platform", {"name_override": "queues"}, "platform-queues"),
        ("platform", {"fullname_override": "admission"}, "admission"),
        ("a" * 53, {"name_override": "b" * 20}, "a" * 53 + "-" + "b" * 9),  # cut at 63
        ("a" * 57 + "-b", {"fullname_override": "x" * 62 + "-y"}, "x" * 62),  # cut, '-' off
    ],
)
def test_the_objects_are_named_as_the_charts_fullname(release, overrides, expected):
    found = kueue_install.fullname(
        release, overrides.get("name_override"), overrides.get("fullname_override")
    )
    assert found == expected


def test_the_manifests_install_is_the_default_and_leaves_certificates_to_kueue():
    data = kueue_setup.load(SETUP)[0]
    assert "install" not in data
    default = kueue_setup.plan(data)
    assert kueue_setup.plan({**data, "install": {"method": "manifests"}}) == default
    (config_map,) = [o for o in kueue_setup.objects(data) if o["kind"] == "ConfigMap"]
    assert "internalCertManagement" not in yaml.safe_load(config_map["data"][kueue_manager.KEY])


def test_kueue_names_the_helm_releases_config_map_and_deployment(runner, tmp_path):
    setup = tmp_path / "kueue.yaml"
    setup.write_text(
        SETUP.read_text()
        + "install: {method: helm, release: platform, namespace: queues, enableCertManager: true}\n"
    )
    out = tmp_path / "kueue"
    result = runner.invoke(cli, ["kueue", str(setup), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "v1_configmap_queues_platform-kueue-manager-config.yaml").is_file()
    assert not (out / "v1_configmap_kueue-system_kueue-manager-config.yaml").exists()
    assert (
        "Kueue reads queues/platform-kueue-manager-config when it starts: once a change to it is "
        "synced, restart Kueue (kubectl -n queues rollout restart deployment "
        "platform-kueue-controller-manager)"
    ) in result.stderr
