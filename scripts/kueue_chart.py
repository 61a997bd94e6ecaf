"""Renders Kueue's Helm chart's manager ConfigMap and Deployment into tests/data/kueue/helm/.

A maintainer tool, not shipped in the wheel. The tests compare `paddlegen kueue`'s ConfigMap for
a Helm install with what the chart itself renders; CI has neither helm nor the chart, so the
chart's output is kept, with its sha256 (`SHA256SUMS`). Regenerate from the repository root,
after a change to Kueue's configuration in paddlegen/gitops/kueue_manager.py, with helm as
benchmarks/bench.py builds it (`GOBIN=benchmarks/.tools/bin go install
helm.sh/helm/v3/cmd/helm@v3.22.0`) and the chart at Kueue's pinned tag (v0.19.2, commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):

    git clone --depth 1 --branch v0.19.2 https://github.com/kubernetes-sigs/kueue /tmp/kueue
    python -m scripts.kueue_chart --chart /tmp/kueue/charts/kueue --helm benchmarks/.tools/bin/helm
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from paddlegen.gitops.kueue_install import MANIFESTS
from paddlegen.gitops.kueue_manager import configuration
from paddlegen.yamlio import dump_yaml

CHART_VERSION = "0.19.2"
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "kueue" / "helm"
SUMS = "SHA256SUMS"
# What the chart renders the ConfigMap and the Deployment that reads it from.
TEMPLATES = ("templates/manager/manager-config.yaml", "templates/manager/manager.yaml")
BOUND = {"timeout": "10m", "backoffLimitCount": 3}
# name -> a KueueSetup's install: the chart's default release, cert-manager in a namespace of
# its own, and the overrides that name the objects otherwise.
CASES: dict[str, dict[str, Any]] = {
    "kueue": {"method": "helm", "release": "kueue"},
    "cert-manager": {
        "method": "helm",
        "release": "platform",
        "namespace": "queues",
        "enableCertManager": True,
    },
    "name-override": {"method": "helm", "release": "batch", "nameOverride": "queues"},
    "fullname-override": {"method": "helm", "release": "kueue", "fullnameOverride": "admission"},
}
_VALUES = ("enableCertManager", "nameOverride", "fullnameOverride")


def helm_template(helm: str, chart: Path, install: dict[str, Any], config: Path) -> str:
    """The chart's ConfigMap and Deployment for ``install``, given paddlegen's configuration
    (without internalCertManagement: the chart adds its own) as the chart's value."""
    argv = [helm, "template", install["release"], str(chart)]
    argv += ["--namespace", install.get("namespace", MANIFESTS.namespace)]
    argv += ["--set-file", f"managerConfig.controllerManagerConfigYaml={config}"]
    for value in _VALUES:
        given = install.get(value)
        if isinstance(given, bool):
            argv += ["--set", f"{value}={'true' if given else 'false'}"]
        elif given:
            argv += ["--set-string", f"{value}={given}"]
    for template in TEMPLATES:
        argv += ["--show-only", template]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chart", type=Path, required=True, help="charts/kueue at v0.19.2")
    parser.add_argument("--helm", default="helm", help="the helm binary")
    args = parser.parse_args()
    version = yaml.safe_load((args.chart / "Chart.yaml").read_text())["version"]
    if version != CHART_VERSION:
        parser.error(f"{args.chart} is chart version {version}, not {CHART_VERSION}")
    OUT.mkdir(parents=True, exist_ok=True)
    sums = []
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(dump_yaml(configuration(BOUND, MANIFESTS)), encoding="utf-8")
        for name, install in CASES.items():
            text = helm_template(args.helm, args.chart, install, config)
            (OUT / f"{name}.yaml").write_text(text, encoding="utf-8")
            sums.append(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}.yaml\n")
    (OUT / SUMS).write_text("".join(sums), encoding="utf-8")


if __name__ == "__main__":
    main()
