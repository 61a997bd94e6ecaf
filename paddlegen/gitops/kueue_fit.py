"""Queued jobs against the repository's KueueSetup: the team a job's queue names, the resources
its ClusterQueue covers, and its quota.

`validate` and `check` take a KueueSetup named among their files (pre-commit passes the changed
ones), else the one at DEFAULT_SETUP. Kueue (sigs.k8s.io/kueue v0.19.2) never admits a job
whose pods request a resource its ClusterQueue does not cover ("resource X unavailable in
ClusterQueue", pkg/scheduler/flavorassigner/flavorassigner.go:1069-1072; unless Kueue's
configuration excludes it: resources.excludeResourcePrefixes, or the feature-gated
quotaCheckStrategy IgnoreUndeclared, 802-812), nor a pod set more
than a flavor can ever hold: the ClusterQueue's nominal quota, and with a cohort all the
cohort's quota of that flavor (PotentialAvailable, flavorassigner.go:1343-1357). All the pods
of a pod set (a role) get one flavor. Such a job waits suspended, with no pod, for ever.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.errors import Diagnostic, Rule, SpecError
from paddlegen.spec.loader import Document, FieldPath, format_path

if TYPE_CHECKING:
    from paddlegen.pipeline.build import Rendered

# Where the KueueSetup is looked for when none is named: the GitOps layout's (a repository with
# jobs/ and platform/ at its root, examples/gitops), and the file `paddlegen kueue`'s help
# names. validate and check run from the repository's root, as pre-commit runs them.
DEFAULT_SETUP = Path("platform") / "kueue.yaml"

TEAM = Rule(
    "kueue-team",
    "a queued job's queue is a team of the KueueSetup, and its namespace one of the team's",
    explanation=(
        "A job's `scheduling.kueue.queue` names a LocalQueue, which the KueueSetup makes for each "
        "team in the team's namespaces only. A queue no team has, or a namespace the team lacks, "
        "leaves the job suspended for want of its LocalQueue."
    ),
    severity="warning",
)
COVERED = Rule(
    "kueue-covered",
    "every resource a queued job's pods request is one its team's quotas give",
    explanation=(
        "Kueue admits a job only if its team's ClusterQueue covers every resource the pods "
        "request: cpu, memory, GPUs, RDMA devices and any other extended resource. A job "
        "requesting one the team's `quotas` do not name is never admitted."
    ),
    severity="error",
)
QUOTA = Rule(
    "kueue-quota",
    "a queued job's pods fit the quota of one of its team's flavors, borrowing included",
    explanation=(
        "All the pods of a role get one flavor, and Kueue never admits a role needing more of a "
        "resource than a flavor can hold: the team's quota on it, and with a cohort every "
        "team's quota on it. Such a job waits suspended for ever."
    ),
    severity="error",
)
RULES = (TEAM, COVERED, QUOTA)
_QUEUE = ("spec", "scheduling", "kueue", "queue")


def setups_for(named: Sequence[Document]) -> list[Document]:
    """The KueueSetups to check the jobs against: those named, else DEFAULT_SETUP if there is
    one (a file there that is no KueueSetup is left alone)."""
    return list(named) or [s for s in [_setup_at(DEFAULT_SETUP)] if s is not None]


def named_setups(items: Iterable[str | Path]) -> tuple[list[str | Path], list[Document]]:
    """The named files that are KueueSetups (read), apart from the other items."""
    rest: list[str | Path] = []
    setups: list[Document] = []
    for item in items:
        setup = _setup_at(Path(item))
        if setup is None:
            rest.append(item)
        else:
            setups.append(setup)
    return rest, setups


def _setup_at(path: Path) -> Document | None:
    """The KueueSetup at ``path``, None for anything else (what reads it as a spec says what
    is wrong with it)."""
    from paddlegen.spec.loader import SETUP_KIND, is_setup, parse_spec

    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return None
    try:
        raw = path.read_bytes()
        if SETUP_KIND.encode() not in raw:  # a spec is not parsed twice
            return None
        doc = parse_spec(raw, str(path))
    except (OSError, SpecError):
        return None
    return doc if is_setup(doc.data) else None


def check(
    setups: Sequence[Document], docs: Sequence[Document], workload: str | None = None
) -> list[Diagnostic]:
    """The KueueSetups' own findings, and each valid one's findings in the queued ``docs``
    (valid specs: their base and each environment)."""
    from paddlegen.gitops import kueue_setup
    from paddlegen.spec.overlays import env_document, overlay_path

    found: list[Diagnostic] = []
    for doc in setups:
        own = kueue_setup.diagnostics(doc)
        found += own
        if any(d.is_error for d in own):
            continue
        for spec in docs:
            base = list(_job_fit(doc.data, spec, workload, ""))
            found += base
            for env in sorted(spec.data.get("overlays", {})):
                more = _job_fit(doc.data, env_document(spec, env), workload, env)
                found += [
                    replace(d, path=overlay_path(spec, env, d.path))
                    for d in more
                    if _unsuffixed(d, env) not in base  # a base finding shows once
                ]
    return found


def check_rendered(
    setups: Sequence[Document], rendered: Sequence[Rendered], workload: str | None = None
) -> list[Diagnostic]:
    """``check`` for the specs of a render's results: read again only when there is a
    KueueSetup (a result from another process carries no document)."""
    from paddlegen.spec.loader import read_spec

    if not setups:
        return []
    return check(setups, [r.doc or read_spec(r.file) for r in rendered], workload)


def _unsuffixed(d: Diagnostic, env: str) -> Diagnostic:
    """An environment's finding as the base's would read, to show a finding once."""
    return replace(d, message=d.message.removesuffix(_in_env(env)))


def _in_env(env: str) -> str:
    return f" (environment {env})" if env else ""


def _job_fit(
    setup: dict[str, Any], doc: Document, workload: str | None, env: str
) -> Iterator[Diagnostic]:
    from paddlegen.spec.model import build_job
    from paddlegen.spec.quantity import format_quantity
    from paddlegen.workloads import workload_of

    spec = doc.data.get("spec", {})
    queue = (spec.get("scheduling", {}).get("kueue") or {}).get("queue")
    if not queue:
        return

    def diagnostic(rule: Rule, path: FieldPath, message: str, hint: str) -> Diagnostic:
        pos = doc.where(path)
        return Diagnostic(
            doc.file,
            pos.line,
            pos.col,
            rule.severity,
            format_path(path),
            message + _in_env(env),
            rule.id,
            hint,
        )

    team = next((t for t in setup["teams"] if t["name"] == queue), None)
    if team is None:
        teams = ", ".join(t["name"] for t in setup["teams"])
        yield diagnostic(
            TEAM,
            _QUEUE,
            f"no team of the KueueSetup is named {queue!r} (teams: {teams}): no LocalQueue of "
            "that name is made, and the job waits suspended",
            "name a team, or add one",
        )
        return
    namespace = doc.data["metadata"].get("namespace")
    if namespace and namespace not in team["namespaces"]:
        yield diagnostic(
            TEAM,
            ("metadata", "namespace"),
            f"team {queue!r} has its LocalQueues in {', '.join(team['namespaces'])}, not "
            f"{namespace!r}: the job waits suspended",
            "add the namespace to the team's namespaces",
        )
    capacity = _capacity(setup, team)
    covered = {r for quota in capacity.values() for r in quota}
    job = build_job(doc.data, workload_of(doc.data, workload))
    for role in job.roles.values():
        pod = {r: n for r, n in role.pod_requests.items() if n}  # Kueue skips zero requests
        for resource in sorted(set(pod) - covered):
            yield diagnostic(
                COVERED,
                _where(spec, role.name, resource),
                f"the {role.name} pods request {resource}, which the quotas of team {queue!r} "
                f"do not give (they give {', '.join(sorted(covered))}): Kueue never admits the "
                "job",
                f"give team {queue!r} quota for {resource} on a flavor of nodes that have it",
            )
        need = {r: n * role.replicas for r, n in pod.items() if r in covered}
        if any(all(need[r] <= quota[r] for r in need) for quota in capacity.values()):
            continue
        cohort = "with its cohort " if setup.get("cohort") else ""
        pods = f"the {role.replicas} {role.name} pods need"
        short = [r for r in sorted(need) if all(need[r] > q[r] for q in capacity.values())]
        for resource in short:
            most = format_quantity(max(q[resource] for q in capacity.values()))
            yield diagnostic(
                QUOTA,
                _where(spec, role.name, resource),
                f"{pods} {format_quantity(need[resource])} {resource} on one flavor, and the "
                f"most a flavor of queue {queue!r} {cohort}holds is {most}: Kueue never admits "
                "the job",
                "ask for fewer, or raise the team's quota",
            )
        if not short:
            asked = ", ".join(f"{format_quantity(need[r])} {r}" for r in sorted(need))
            yield diagnostic(
                QUOTA,
                _QUEUE,
                f"{pods} {asked} on one flavor, and no flavor of queue {queue!r} {cohort}holds "
                "all of it: Kueue never admits the job",
                "ask for fewer, or raise the team's quota on one flavor",
            )


def _capacity(setup: dict[str, Any], team: dict[str, Any]) -> dict[str, dict[str, Fraction]]:
    """Per flavor of the team's ClusterQueue, the most of each covered resource it can hold:
    its quota, and with a cohort every team's quota of that flavor (a ClusterQueue borrows
    only on the flavors and resources it lists, with 0 where the file gives none)."""
    from paddlegen.spec.quantity import parse

    lenders = setup["teams"] if setup.get("cohort") else [team]
    covered = {r for quota in team["quotas"].values() for r in quota}
    return {
        flavor: {
            r: sum((parse(t["quotas"].get(flavor, {}).get(r, 0)) for t in lenders), Fraction(0))
            for r in covered
        }
        for flavor in team["quotas"]
    }


def _where(spec: dict[str, Any], role: str, resource: str) -> FieldPath:
    """The field that makes a role's pods request ``resource``: its gpus, a resources entry
    (the role's own resources replace the spec-wide ones), an init container's or sidecar's;
    the queue when it is paddlegen's default request."""
    from paddlegen.spec.model import CONTAINER_LISTS, accelerator

    own = spec.get(role, {})

    def place(key: str) -> tuple[dict[str, Any], FieldPath]:
        return (own, ("spec", role)) if key in own else (spec, ("spec",))

    body, prefix = place("gpus")
    if resource == accelerator(spec) and "gpus" in body:
        return (*prefix, "gpus")
    for key in ("resources", *CONTAINER_LISTS):
        body, prefix = place(key)
        given = [body.get(key, {})] if key == "resources" else body.get(key, [])
        for i, entry in enumerate(given):
            resources = entry if key == "resources" else entry.get("resources", {})
            at = (*prefix, key) if key == "resources" else (*prefix, key, i, "resources")
            for kind in ("requests", "limits"):
                if resource in resources.get(kind, {}):
                    return (*at, kind, resource)
    return _QUEUE
