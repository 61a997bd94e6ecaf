"""`validate --server`: a job whose top-level object names a Kueue LocalQueue (the label
`kueue.x-k8s.io/queue-name`) that its namespace does not have is a warning. The server takes
such a job, and Kueue's webhook suspends it (sigs.k8s.io/kueue v0.19.2,
pkg/controller/jobframework/defaults.go): it waits, with no pod, until someone makes the queue,
and only its Workload's condition says why."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from paddlegen.errors import Diagnostic, Rule, ToolError
from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import Document, format_path

if TYPE_CHECKING:
    from paddlegen.validate.target import Server, SpecObjects

RULE = Rule(
    "kueue-local-queue",
    "the Kueue LocalQueue a job's queue-name label names exists in its namespace (`--server`)",
    explanation=(
        "With `--server`, the Kueue LocalQueue a job's queue-name label names is looked up in its "
        "namespace. A job naming a LocalQueue that does not exist waits suspended for ever."
    ),
    severity="warning",
)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # pkg/controller/constants/constants.go
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
# Where the spec names the queue (spec.scheduling.kueue.queue); else the finding is at the
# job's name.
QUEUE_FIELD = ("spec", "scheduling", "kueue", "queue")


def missing_local_queues(
    rendered: Sequence[SpecObjects], server: Server, kubectl: str
) -> list[Diagnostic]:
    """A warning for each top-level object, base and overlays, whose queue-name label names a
    LocalQueue its namespace lacks; one kubectl call per namespace."""
    known: dict[str, set[str] | None] = {}  # namespace ("": kubectl's) -> its LocalQueues
    found = []
    for doc, env, manifest, queue in _queued(rendered):
        namespace = manifest.obj["metadata"].get("namespace", "")
        if namespace not in known:
            known[namespace] = _local_queues(kubectl, server, namespace)
        queues = known[namespace]
        if queues is None:
            message = (
                f"{manifest.kind}/{manifest.name} names the Kueue LocalQueue '{queue}', but the "
                "cluster does not serve LocalQueues (kueue.x-k8s.io): without Kueue the label "
                "queues nothing and the job starts at once"
            )
        elif queue not in queues:
            where = f"namespace '{namespace}'" if namespace else "kubectl's default namespace"
            message = (
                f"{manifest.kind}/{manifest.name} names the Kueue LocalQueue '{queue}', which "
                f"{where} does not have: Kueue keeps the job suspended until it exists"
            )
        else:
            continue
        in_env = f" (environment {env})" if env else ""
        path = QUEUE_FIELD if _has(doc, QUEUE_FIELD) else ("metadata", "name")
        pos = doc.where(path)
        found.append(
            Diagnostic(
                doc.file,
                pos.line,
                pos.col,
                RULE.severity,
                format_path(path),
                message + in_env,
                RULE.id,
            )
        )
    return found


def _queued(
    rendered: Sequence[SpecObjects],
) -> Iterator[tuple[Document, str | None, Manifest, str]]:
    """(document, environment, object, queue) for each object with the queue-name label."""
    from paddlegen.spec.overlays import env_document

    for r in rendered:
        if r.doc is None:
            continue
        variants: list[tuple[Document, str | None, list[Manifest]]] = [(r.doc, None, r.manifests)]
        variants += [(env_document(r.doc, e), e, ms) for e, ms in sorted(r.environments.items())]
        for doc, env, manifests in variants:
            for manifest in manifests:
                queue = (manifest.obj["metadata"].get("labels") or {}).get(QUEUE_LABEL)
                if queue:
                    yield doc, env, manifest, queue


def _has(doc: Document, path: tuple[str, ...]) -> bool:
    node = doc.data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _local_queues(kubectl: str, server: Server, namespace: str) -> set[str] | None:
    """The LocalQueues of ``namespace`` (kubectl's default: ""), or None when the cluster
    serves none (no Kueue)."""
    argv = [kubectl]
    if server.kubeconfig:
        argv.append(f"--kubeconfig={server.kubeconfig}")
    if server.context:
        argv.append(f"--context={server.context}")
    if namespace:
        argv.append(f"--namespace={namespace}")
    argv += [f"--request-timeout={server.timeout:g}s", "get", LOCAL_QUEUES, "-o", "name"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=server.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ToolError(f"kubectl did not answer in {server.timeout:g} s") from None
    except OSError as exc:
        raise ToolError(f"kubectl could not be run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        if "doesn't have a resource type" in done.stderr:
            return None
        said = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise ToolError(f"kubectl get {LOCAL_QUEUES}: {said[0]}")
    # `-o name` prints localqueue.kueue.x-k8s.io/<name> per line
    return {line.rsplit("/", 1)[-1] for line in done.stdout.split()}
