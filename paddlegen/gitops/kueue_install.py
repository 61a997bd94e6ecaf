"""How Kueue was installed: the names its manager configuration and Deployment have there.

A KueueSetup's `install` says it: Kueue's release manifests (`kubectl apply`, the default) or
its Helm chart. The manifests name everything `kueue-` in `kueue-system` (sigs.k8s.io/kueue
v0.19.2 config/default/kustomization.yaml: namespace and namePrefix) and leave
`internalCertManagement` out of the configuration, so Kueue's defaults (its own certificate
rotator, for `kueue-webhook-service` and `kueue-webhook-server-cert`:
apis/config/v1beta2/defaults.go:34-35,88-93) are those of the install. The chart names them
after the release (charts/kueue/templates/_helpers.tpl `kueue.fullname`) in the release's
namespace, and always writes `internalCertManagement` into the configuration:
`{enable: false}` with `enableCertManager`, else the rotator for its own Service and Secret
(charts/kueue/templates/manager/manager-config.yaml:20,26-37). A configuration written
without it would turn the rotator on for Service and Secret names a Helm install lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CHART = "kueue"  # the chart's name (charts/kueue/Chart.yaml), the default of nameOverride
_HELM_NAME_LIMIT = 63  # _helpers.tpl: `trunc 63 | trimSuffix "-"`


@dataclass(frozen=True)
class Install:
    """Where an install keeps Kueue's configuration, and what reads it."""

    namespace: str
    config_map: str
    deployment: str
    # the configuration's internalCertManagement; None: the install leaves it to Kueue
    cert_management: dict[str, Any] | None

    def restart(self) -> str:
        """The command that restarts Kueue, which reads its configuration when it starts."""
        return f"kubectl -n {self.namespace} rollout restart deployment {self.deployment}"


# Kueue's release manifests (config/default: namespace kueue-system, namePrefix kueue-, of
# config/components/manager's manager-config and controller-manager).
MANIFESTS = Install("kueue-system", "kueue-manager-config", "kueue-controller-manager", None)


def install(given: dict[str, Any] | None) -> Install:
    """The install a KueueSetup's ``install`` section describes (None: the manifests)."""
    if not given or given["method"] == "manifests":
        return MANIFESTS
    full = fullname(given["release"], given.get("nameOverride"), given.get("fullnameOverride"))
    cert: dict[str, Any] = (
        {"enable": False}
        if given.get("enableCertManager")
        else {
            "enable": True,
            "webhookServiceName": f"{full}-webhook-service",
            "webhookSecretName": f"{full}-webhook-server-cert",
        }
    )
    return Install(
        given.get("namespace", MANIFESTS.namespace),
        f"{full}-manager-config",
        f"{full}-controller-manager",
        cert,
    )


def fullname(release: str, name_override: str | None, fullname_override: str | None) -> str:
    """The chart's `kueue.fullname`: fullnameOverride, else the release name when it contains
    the chart's name (nameOverride), else `<release>-<name>`; cut to 63, one final '-' off."""
    name = name_override or CHART
    if fullname_override:
        full = fullname_override
    elif name in release:
        full = release
    else:
        full = f"{release}-{name}"
    full = full[:_HELM_NAME_LIMIT]
    return full[:-1] if full.endswith("-") else full
