"""`validate --server`: the user's kubectl sends the rendered objects to their API server as a
server-side apply dry-run; each refusal and warning becomes a finding at the spec position it
maps to. Nothing is created: the server validates, runs admission, and discards."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from paddlegen.errors import Diagnostic, Rule, ToolError
from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import Document, format_path
from paddlegen.validate.target import Server, SpecObjects

RULE = Rule(
    "server",
    "the API server accepts the objects (a server-side apply dry-run, `--server`)",
    explanation=(
        "With `--server`, the objects are sent to the API server as a server-side apply dry-run. "
        "What it refuses (errors) or warns about (warnings) is reported at the spec."
    ),
    severity="error",
    also=("warning",),
)
FIELD_MANAGER = "paddlegen"
# kubectl's words for a cluster it cannot use: exit 2, never a finding, never a silent pass.
_UNREACHABLE = (
    "Unable to connect to the server",
    "connection refused",
    "no such host",
    "i/o timeout",
    "context deadline exceeded",
    "the server has asked for the client to provide credentials",
    "error loading config file",
    "invalid configuration",
    "no configuration has been provided",
)
_URL = re.compile(r'(?:Get|Post|Patch) "(https?://[^/"?]+)')
_NO_CRD = re.compile(r'no matches for kind "([^"]+)" in version "([^"]+)"')
_NO_RESOURCE = re.compile(
    r"the server could not find the requested resource \(patch ([a-z0-9.-]+) "
)
_NO_CONTEXT = re.compile(r'context "([^"]*)" does not exist')
_NO_NAMESPACE = re.compile(r'namespaces "([^"]+)" not found')
# `Job.batch "demo" is invalid: <field>: <message>` or `... is invalid: [<f>: <m>, <f>: <m>]`
_INVALID = re.compile(r'(?:The )?([A-Za-z0-9]+)(?:\.[a-z0-9.-]+)? "([^"]+)" is invalid: (.*)$')
_FIELD = re.compile(r"(?:^|, )([A-Za-z0-9_.\[\]/-]+): ")
# A whole pod template as the rejected value says nothing a person reads: keep its outline.
_BIG_VALUE = re.compile(r"Invalid value: ([{\[])[^\n]{200,}([}\]]): ")
_PREFIX = re.compile(r"^Error from server \([A-Za-z]+\): (?:error when [a-z]+ \"[^\"]*\": )?")


@dataclass(frozen=True)
class _Variant:
    """One spec in one environment (None: its base): its document and its objects."""

    doc: Document
    env: str | None
    manifests: list[Manifest]


def dry_run(rendered: Sequence[SpecObjects], server: Server) -> list[Diagnostic]:
    """Every refusal and warning of a server-side dry-run of ``rendered``, base and overlays.

    Each environment goes in one kubectl call for every spec (objects of one job share names
    across environments); only a call that the server answers with a refusal or a warning is
    repeated spec by spec, to say whose it is. Then what the dry-run cannot see: a Kueue
    LocalQueue that does not exist (kueue_queues.py).
    """
    from paddlegen.spec.overlays import env_document
    from paddlegen.validate.kueue_queues import missing_local_queues

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ToolError("kubectl not found on PATH: --server sends the objects with it")
    by_env: dict[str | None, list[_Variant]] = {}
    for r in rendered:
        if r.doc is None:
            continue
        by_env.setdefault(None, []).append(_Variant(r.doc, None, r.manifests))
        for env, manifests in r.environments.items():
            by_env.setdefault(env, []).append(_Variant(env_document(r.doc, env), env, manifests))
    found: list[Diagnostic] = []
    for key in sorted(by_env, key=lambda e: (e is not None, e or "")):
        variants = by_env[key]
        lines = _apply(kubectl, server, variants)
        if not lines:
            continue
        if len(variants) > 1:
            for variant in variants:
                found += _findings(variant, _apply(kubectl, server, [variant]), server)
        else:
            found += _findings(variants[0], lines, server)
    if not any(d.is_error for d in found):
        found += missing_local_queues(rendered, server, kubectl)
    return sorted(set(found))


def _apply(kubectl: str, server: Server, variants: list[_Variant]) -> list[str]:
    """kubectl's refusals and warnings for ``variants`` (empty: all accepted, no warning)."""
    argv = [kubectl]
    if server.kubeconfig:
        argv.append(f"--kubeconfig={server.kubeconfig}")
    if server.context:
        argv.append(f"--context={server.context}")
    argv += [
        f"--request-timeout={server.timeout:g}s",
        "apply",
        "--server-side",
        "--dry-run=server",
        f"--field-manager={FIELD_MANAGER}",
        "-f",
        "-",
    ]
    stream = "".join(f"---\n{m.text()}" for v in variants for m in v.manifests)
    try:
        done = subprocess.run(
            argv,
            input=stream,
            capture_output=True,
            text=True,
            timeout=server.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolError(f"kubectl did not answer in {server.timeout:g} s") from None
    except OSError as exc:
        raise ToolError(f"kubectl could not be run: {exc.strerror or exc}") from None
    lines = _one_per_error(done.stderr.splitlines())
    _raise_for_cluster(lines, server)
    if done.returncode != 0 and not lines:
        raise ToolError(f"kubectl exited {done.returncode} and said nothing")
    return lines


def _one_per_error(raw: list[str]) -> list[str]:
    """kubectl lists several errors of one object as `... is invalid: ` and then a `* field:
    message` line each: one line per error, with the object's head."""
    lines: list[str] = []
    head = ""
    for line in (line.strip() for line in raw):
        if line.startswith("* ") and head:
            lines.append(head + line[2:])
        elif line:
            head = line if line.endswith("is invalid:") else ""
            if not head:
                lines.append(line)
            else:
                head += " "
    return lines


def _raise_for_cluster(lines: list[str], server: Server) -> None:
    """A cluster that cannot answer for the objects is exit 2, whatever the objects are."""
    text = "\n".join(lines)
    which = f"context '{server.context}'" if server.context else "the current context"
    missing_context = _NO_CONTEXT.search(text)
    if missing_context:
        raise ToolError(f"kubeconfig has no context '{missing_context.group(1)}'")
    for marker in _UNREACHABLE:
        if marker in text:
            url = _URL.search(text)
            at = f" at {url.group(1)}" if url else ""
            raise ToolError(f"cannot use the API server of {which}{at}: {marker}")
    missing = set(_NO_CRD.findall(text))
    resources = sorted(set(_NO_RESOURCE.findall(text)))  # a CRD deleted since kubectl cached it
    crds = sorted(f"{kind} ({version})" for kind, version in missing) + resources
    if crds:
        kinds = ", ".join(crds)
        raise ToolError(
            f"the cluster of {which} does not serve {kinds}: install its CRDs (the operator) "
            "before validating against it" + "".join(f"; {n}" for n in _needs(missing, resources))
        )


def _needs(missing: set[tuple[str, str]], resources: list[str]) -> list[str]:
    """What each kind the server does not serve needs, as its workloads say
    (TrainingObject.needs), given as ``(kind, apiVersion)`` or as a resource."""
    from paddlegen.workloads import judged_objects

    return [
        obj.needs
        for obj in judged_objects()
        if obj.needs and ((obj.kind, obj.api_version) in missing or obj.resource in resources)
    ]


def _plain(line: str) -> str:
    return _PREFIX.sub("", line.removeprefix("error: "))


def _findings(variant: _Variant, lines: list[str], server: Server) -> list[Diagnostic]:
    found = []
    for line in lines:
        if line.startswith("Warning: "):
            found.append(_at_name(variant, line[len("Warning: ") :], "warning"))
            continue
        message = _plain(line)
        namespace = _NO_NAMESPACE.search(message)
        invalid = _INVALID.search(message)
        if namespace:
            found.append(_missing_namespace(variant, namespace.group(1), server))
        elif invalid:
            found += _invalid(variant, *invalid.groups())
        elif not line.endswith("(server dry run)"):  # kubectl's "<kind>/<name> serverside-applied"
            found.append(_at_name(variant, message, "error"))
    return found


def _diagnostic(
    variant: _Variant, path: tuple[str | int, ...], where: str, message: str, severity: str
) -> Diagnostic:
    from paddlegen.spec.overlays import overlay_path

    pos = variant.doc.where(path)
    shown = where or format_path(path)
    if variant.env and not where:
        shown = overlay_path(variant.doc, variant.env, shown)
    in_env = f" (environment {variant.env})" if variant.env else ""
    return Diagnostic(
        variant.doc.file, pos.line, pos.col, severity, shown, message + in_env, RULE.id
    )


def _at_name(variant: _Variant, message: str, severity: str) -> Diagnostic:
    return _diagnostic(variant, ("metadata", "name"), "", message, severity)


def _missing_namespace(variant: _Variant, namespace: str, server: Server) -> Diagnostic:
    which = f"context '{server.context}'" if server.context else "the current context"
    path = ("metadata", "namespace") if "namespace" in variant.doc.data["metadata"] else ()
    return _diagnostic(
        variant,
        path or ("metadata",),
        "",
        f"namespace '{namespace}' does not exist on the cluster of {which}",
        "error",
    )


def _invalid(variant: _Variant, kind: str, name: str, rest: str) -> list[Diagnostic]:
    """One finding per field error of ``Kind "name" is invalid: ...``, at its spec origin."""
    from paddlegen.validate.provenance import field_tokens, origin_path

    manifest = next(
        (m for m in variant.manifests if m.kind == kind and m.name == name),
        None,
    )
    body = rest[1:-1] if rest.startswith("[") and rest.endswith("]") else rest
    starts = list(_FIELD.finditer(body))
    errors = [
        (match.group(1), body[match.end() : starts[i + 1].start() if i + 1 < len(starts) else None])
        for i, match in enumerate(starts)
    ] or [("", body)]
    found = []
    for field, message in errors:
        where = f"{kind}/{name} {field}".strip()
        origin = origin_path(variant.doc, manifest.obj, field_tokens(where)) if manifest else None
        message = _BIG_VALUE.sub(r"Invalid value: \1…\2: ", message.strip())
        found.append(_diagnostic(variant, origin or ("metadata", "name"), where, message, "error"))
    return found
