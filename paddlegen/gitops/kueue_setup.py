"""`paddlegen kueue`: the Kueue objects a platform team sets up once, from a file of teams.

From a KueueSetup file (schemas/kueue.v1.schema.json) to ResourceFlavors, a ClusterQueue per
team, a LocalQueue of the team's name in each of its namespaces, WorkloadPriorityClasses and
Topologies (and, when the file bounds `waitForPodsReady`, Kueue's manager configuration:
kueue_manager, named as the file's `install` has it: kueue_install), at
kueue.x-k8s.io/v1beta2 (sigs.k8s.io/kueue v0.19.2), one file each beside a kustomization.yaml,
as `paddlegen render` lays out a job: an Argo CD Application (or `kubectl apply -k`) deploys
the folder. The file has the error model of a spec: every finding
at its file:line:col with its field path and rule id, exit 1, nothing written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.errors import Diagnostic, ManifestError, Rule, SpecError
from paddlegen.gitops.kueue_install import Install, install
from paddlegen.output.layout import HEADER, KUSTOMIZATION
from paddlegen.output.writer import WriteReport
from paddlegen.spec.loader import Document, FieldPath, format_path, read_spec
from paddlegen.spec.model import GPU_RESOURCE, MANAGED_BY
from paddlegen.yamlio import dump_yaml

if TYPE_CHECKING:
    from paddlegen.validate.locations import ExtraSchemas

API_VERSION = "kueue.x-k8s.io/v1beta2"
OUTPUT = "kueue"  # the default folder, beside argocd/ and deploy/ in a GitOps repository
# Kueue's default LocalQueue: a namespace that has one gets every Job without a queue label
# put in it, the data-preparation Job too (sigs.k8s.io/kueue v0.19.2
# pkg/controller/jobframework/defaults.go:80-98; rules/scheduling.py kueue-data-prep).
DEFAULT_QUEUE = "default"

# The rules of a KueueSetup file's findings.
FLAVOR = Rule(
    "kueue-setup-flavor",
    "a team's quota is on a flavor of `flavors`",
    explanation=(
        "A team's quota is on a flavor of `flavors`: a ClusterQueue naming a ResourceFlavor that "
        "does not exist admits nothing."
    ),
    severity="error",
)

UNIQUE = Rule(
    "kueue-setup-unique",
    "no two flavors, priority classes, teams or topologies share a name",
    explanation=(
        "Flavors, priority classes, teams and topologies each become objects named after them: two "
        "of one name would be one object."
    ),
    severity="error",
)

NO_DEFAULT_QUEUE = Rule(
    "kueue-setup-default-queue",
    (
        "no team is named `default`: its LocalQueues would be Kueue's default queue, which takes "
        "every Job of the namespace without a queue label, paddlegen's data Jobs too"
    ),
    explanation=(
        "A team named `default` would get LocalQueues named `default`, Kueue's default queue, "
        "which takes every Job of the namespace without a queue label, paddlegen's data Jobs too."
    ),
    severity="error",
)

QUANTITY = Rule(
    "kueue-setup-quantity",
    "an extended resource's quota (`nvidia.com/gpu`) is a whole number",
    explanation=(
        "An extended resource's quota (`nvidia.com/gpu`) counts whole devices: a fraction cannot "
        "be admitted."
    ),
    severity="error",
)

UNUSED = Rule(
    "kueue-setup-unused",
    "every flavor has a team's quota on it, every topology a flavor",
    explanation=(
        "A flavor no team has quota on runs no queued job on its nodes, and a topology no flavor "
        "names places no job: both are likely mistakes."
    ),
    severity="warning",
)

TOPOLOGY = Rule(
    "kueue-setup-topology",
    (
        "a flavor's topology is one of `topologies`, on the nodes its `nodeLabels` pick; "
        "`kubernetes.io/hostname` is a topology's last level"
    ),
    explanation=(
        "A flavor's topology is one of `topologies`, on the nodes its `nodeLabels` pick (Kueue "
        "reads the topology from them), and `kubernetes.io/hostname` can only be a topology's last "
        "level."
    ),
    severity="error",
)
RULES = (FLAVOR, UNIQUE, NO_DEFAULT_QUEUE, QUANTITY, UNUSED, TOPOLOGY)
# Kueue's Topology admits kubernetes.io/hostname only as its last level (v0.19.2
# apis/kueue/v1beta2/topology_types.go:117, a CEL rule kubeconform does not run).
HOSTNAME = "kubernetes.io/hostname"
# Resources listed first, in this order, in a ClusterQueue's one resource group; then the
# others sorted.
_FIRST = ("cpu", "memory", GPU_RESOURCE)
_LABELS = {"app.kubernetes.io/managed-by": MANAGED_BY}


@dataclass(frozen=True)
class KueueFiles:
    report: WriteReport
    warnings: list[Diagnostic]
    backend: str  # which validator ran: kubeconform or in-process
    manager_config: bool  # Kueue's own configuration is among the files (kueue_manager)
    install: Install  # where that configuration is, and what reads it

    def restart_note(self, path: str | Path) -> str:
        """What Kueue needs once the files of the KueueSetup at ``path`` are synced: a restart
        when they hold its configuration, else a bound on requeueing set in the file."""
        if self.manager_config:
            where = self.install
            return (
                f"note: Kueue reads {where.namespace}/{where.config_map} when it starts: once a "
                f"change to it is synced, restart Kueue ({where.restart()})"
            )
        return (
            f"note: {path} sets no waitForPodsReady: Kueue then queues a job whose pods never "
            "start again and again, without end; a bound set there is written as Kueue's manager "
            "configuration"
        )


def load(path: str | Path) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The file's data and its warnings; SpecError with every finding if it is invalid."""
    doc = read_spec(path)
    found = diagnostics(doc)
    if any(d.is_error for d in found):
        raise SpecError(f"{doc.file} has errors", found)
    return doc.data, found


def diagnostics(doc: Document) -> list[Diagnostic]:
    """Every finding in a loaded KueueSetup: the schema's, else its rules'."""
    from paddlegen.resources import kueue_schema_path
    from paddlegen.spec.schema import file_validator, schema_diagnostics

    found = schema_diagnostics(doc, file_validator(str(kueue_schema_path())))
    if not found:  # the rules read fields of the shape the schema checked
        found = sorted(_checks(doc))
    return found


def _error(
    doc: Document, path: FieldPath, message: str, rule: Rule, hint: str = "", **how: Any
) -> Diagnostic:
    pos = doc.where(path, **how)
    return Diagnostic(
        doc.file, pos.line, pos.col, rule.severity, format_path(path), message, rule.id, hint
    )


def _checks(doc: Document) -> Iterator[Diagnostic]:
    data = doc.data
    for section in ("flavors", "priorityClasses", "teams", "topologies"):
        seen: dict[str, int] = {}
        for i, item in enumerate(data.get(section, [])):
            if item["name"] in seen:
                yield _error(
                    doc,
                    (section, i, "name"),
                    f"{item['name']!r} is {section}[{seen[item['name']]}]'s name too: one "
                    "object of a name",
                    UNIQUE,
                )
            seen.setdefault(item["name"], i)
    flavors = [f["name"] for f in data["flavors"]]
    used: set[str] = set()
    for i, team in enumerate(data["teams"]):
        if team["name"] == DEFAULT_QUEUE:
            yield _error(
                doc,
                ("teams", i, "name"),
                "a LocalQueue named 'default' is Kueue's default queue: Kueue puts every Job "
                "of its namespace without a queue label in it, paddlegen's data-preparation "
                "Jobs too, which Argo CD then reads as finished while they wait or run",
                NO_DEFAULT_QUEUE,
                "name the team otherwise",
            )
        for flavor, quota in team["quotas"].items():
            used.add(flavor)
            if flavor not in flavors:
                yield _error(
                    doc,
                    ("teams", i, "quotas", flavor),
                    f"no flavor {flavor!r} (flavors: {', '.join(dict.fromkeys(flavors))})",
                    FLAVOR,
                    "add it to flavors, or name one of them",
                    key=True,
                )
            for resource, amount in quota.items():
                yield from _quantity(doc, ("teams", i, "quotas", flavor, resource), amount)
    yield from _topology_checks(doc)
    for i, flavor in enumerate(flavors):
        if flavor not in used:
            yield _error(
                doc,
                ("flavors", i, "name"),
                f"no team has quota on flavor {flavor!r}: its nodes run no queued job",
                UNUSED,
                "give a team quota on it, or remove it",
            )


def _topology_checks(doc: Document) -> Iterator[Diagnostic]:
    """A flavor's topology is one of the file's, on nodes its nodeLabels pick (Kueue's
    ResourceFlavor wants them with a topologyName: a CEL rule of its CRD); the host level is
    the narrowest; every topology is some flavor's."""
    topologies = [t["name"] for t in doc.data.get("topologies", [])]
    named: set[str] = set()
    for i, flavor in enumerate(doc.data["flavors"]):
        if "topology" not in flavor:
            continue
        named.add(flavor["topology"])
        if flavor["topology"] not in topologies:
            yield _error(
                doc,
                ("flavors", i, "topology"),
                f"no topology {flavor['topology']!r}"
                + (f" (topologies: {', '.join(dict.fromkeys(topologies))})" if topologies else ""),
                TOPOLOGY,
                "add it to topologies, or name one of them",
            )
        if not flavor.get("nodeLabels"):
            yield _error(
                doc,
                ("flavors", i, "topology"),
                "a flavor with a topology needs nodeLabels: Kueue reads the topology from the "
                "nodes they pick",
                TOPOLOGY,
                "add the labels of the flavor's nodes",
                key=True,
            )
    for i, topology in enumerate(doc.data.get("topologies", [])):
        levels = topology["levels"]
        if HOSTNAME in levels[:-1]:
            yield _error(
                doc,
                ("topologies", i, "levels", levels.index(HOSTNAME)),
                f"{HOSTNAME} is the narrowest domain: Kueue takes it as the last level only",
                TOPOLOGY,
                "move it to the end",
            )
        if topology["name"] not in named:
            yield _error(
                doc,
                ("topologies", i, "name"),
                f"no flavor names topology {topology['name']!r}: Kueue places no job by it",
                UNUSED,
                "name it in a flavor's topology, or remove it",
            )


def _quantity(doc: Document, path: FieldPath, amount: Any) -> Iterator[Diagnostic]:
    """An extended resource (a name with a domain: nvidia.com/gpu) is counted in whole units."""
    from paddlegen.spec.quantity import parse

    resource = path[-1]
    if isinstance(resource, str) and "/" in resource and parse(amount).denominator != 1:
        yield _error(
            doc,
            path,
            f"{resource} is counted in whole units, not {amount!r}",
            QUANTITY,
        )


def objects(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object, in the order they are applied: what the queues name comes first."""
    cohort = data.get("cohort")
    out = [_priority_class(p) for p in data.get("priorityClasses", [])]
    out += [_topology(t) for t in data.get("topologies", [])]
    out += [_flavor(f) for f in data["flavors"]]
    for team in data["teams"]:
        out.append(_cluster_queue(team, cohort))
        out += [_local_queue(team["name"], ns) for ns in team["namespaces"]]
    if "waitForPodsReady" in data:
        from paddlegen.gitops.kueue_manager import config_map

        out.append(config_map(data["waitForPodsReady"], _LABELS, install(data.get("install"))))
    return out


def _object(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    metadata["labels"] = dict(_LABELS)
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata}


def _priority_class(given: dict[str, Any]) -> dict[str, Any]:
    obj = _object("WorkloadPriorityClass", given["name"])
    obj["value"] = given["value"]
    if "description" in given:
        obj["description"] = given["description"]
    return obj


def _topology(given: dict[str, Any]) -> dict[str, Any]:
    levels = [{"nodeLabel": label} for label in given["levels"]]
    return {**_object("Topology", given["name"]), "spec": {"levels": levels}}


def _flavor(given: dict[str, Any]) -> dict[str, Any]:
    # spec.nodeLabels, never the object's own labels: those once leaked into every admitted
    # pod's nodeSelector (kueue#425).
    spec: dict[str, Any] = {k: given[k] for k in ("nodeLabels", "tolerations") if k in given}
    if "topology" in given:
        spec["topologyName"] = given["topology"]
    return {**_object("ResourceFlavor", given["name"]), "spec": spec}


def _covered(quotas: dict[str, dict[str, Any]]) -> list[str]:
    names = {resource for quota in quotas.values() for resource in quota}
    return [r for r in _FIRST if r in names] + sorted(names - set(_FIRST))


def _cluster_queue(team: dict[str, Any], cohort: str | None) -> dict[str, Any]:
    """One resource group: Kueue lets a resource be in one group only, and every flavor of a
    group list the group's resources in its order (v0.19.2 pkg/webhooks/clusterqueue_webhook.go
    validateResourceGroups, validateFlavorQuotas), so a flavor without quota for one has 0."""
    from paddlegen.spec.quantity import canonical

    covered = _covered(team["quotas"])
    flavors = [
        {
            "name": flavor,
            "resources": [{"name": r, "nominalQuota": canonical(quota.get(r, 0))} for r in covered],
        }
        for flavor, quota in team["quotas"].items()
    ]
    # Priorities act within the team's queue; with a cohort, a team takes back what others
    # borrowed of its quota, whatever their priority.
    preemption: dict[str, Any] = {"withinClusterQueue": "LowerPriority"}
    spec: dict[str, Any] = {}
    if cohort:
        spec["cohortName"] = cohort
        preemption["reclaimWithinCohort"] = "Any"
    spec |= {
        # only the team's namespaces (a nil selector would match none, {} every one)
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "In",
                    "values": sorted(team["namespaces"]),
                }
            ]
        },
        "preemption": preemption,
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    return {**_object("ClusterQueue", team["name"]), "spec": spec}


def _local_queue(team: str, namespace: str) -> dict[str, Any]:
    return {**_object("LocalQueue", team, namespace), "spec": {"clusterQueue": team}}


def file_name(obj: dict[str, Any]) -> str:
    """`<group>_<version>_<kind>_[<namespace>_]<name>.yaml`, as a rendered job's files."""
    group_version = obj["apiVersion"].replace("/", "_")
    meta = obj["metadata"]
    where = f"{meta['namespace']}_" if "namespace" in meta else ""
    return f"{group_version}_{obj['kind'].lower()}_{where}{meta['name']}.yaml"


def plan(data: dict[str, Any]) -> dict[str, str]:
    """Every file of the output folder, in memory: an object each, and the kustomization."""
    files = {file_name(obj): HEADER + dump_yaml(obj) for obj in objects(data)}
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(files),
        "sortOptions": {"order": "fifo"},
    }
    return {**files, KUSTOMIZATION: HEADER + dump_yaml(kustomization)}


def generate(
    path: str | Path,
    out_dir: str | Path,
    kubeconform: str | None = None,
    kubernetes_version: str | None = None,
    extra: ExtraSchemas | None = None,
) -> KueueFiles:
    """Load the file, plan the objects, validate them against Kueue's CRD schemas and write
    them; nothing is written when the file or an object is invalid."""
    from paddlegen.output.claim import KUEUE
    from paddlegen.output.folder import write_folder
    from paddlegen.validate import k8s_schemas
    from paddlegen.validate.locations import NO_EXTRA
    from paddlegen.validate.manifests import validate_manifests

    data, warnings = load(path)
    files = plan(data)
    manifests = [(str(Path(out_dir) / name), text) for name, text in files.items()]
    found, backend = validate_manifests(
        [m for m in manifests if not m[0].endswith(KUSTOMIZATION)],
        kubernetes_version or k8s_schemas.DEFAULT_KUBERNETES_VERSION,
        kubeconform,
        extra=extra or NO_EXTRA,
    )
    if any(d.is_error for d in found):
        raise ManifestError("invalid manifests", found)
    return KueueFiles(
        write_folder(out_dir, KUEUE, files),
        warnings,
        backend,
        "waitForPodsReady" in data,
        install(data.get("install")),
    )
