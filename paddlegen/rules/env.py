"""The containers' env: unique names, one value each, no credential, references that resolve."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from paddlegen.rules.shared import CONTAINER_RESOURCES, is_qualified_name
from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.model import CHECKPOINT_DIR_ENV, RESTART_ATTEMPT_ENV
from paddlegen.spec.network import Nccl
from paddlegen.spec.quantity import canonical, server_value, spelling
from paddlegen.spec.rule import Context, Finding, SpecRule, container_places
from paddlegen.spec.secrets import has_url_password, is_literal_credential
from paddlegen.workloads import WORKLOADS


def _entries(ctx: Context) -> Iterator[tuple[FieldPath, int, dict[str, Any]]]:
    """Every env entry the spec gives: its list's place, its index, the entry."""
    for place, section in container_places(ctx, "env"):
        for i, entry in enumerate(section["env"]):
            yield (*place, "env"), i, entry


def _unique(ctx: Context) -> Iterator[Finding]:
    seen: dict[FieldPath, dict[str, int]] = {}
    for base, i, entry in ctx.once(_entries):
        name = entry["name"]
        first = seen.setdefault(base, {})
        if name in first:
            yield ctx.finding(
                (*base, i, "name"),
                f"env '{name}' is already set at {format_path((*base, first[name]))}",
            )
        first.setdefault(name, i)


ENV_UNIQUE = SpecRule(
    "env-unique",
    "env names are unique within a list",
    explanation=(
        "Two env entries of one name in a list leave only the last in effect (the API server "
        "warns). The first is then silently ignored, which is rarely what the spec meant."
    ),
    severity="error",
    silenceable=True,
    check=_unique,
)


def _one_value(ctx: Context) -> Iterator[Finding]:
    for base, i, entry in ctx.once(_entries):
        if "value" in entry and "valueFrom" in entry:
            yield ctx.finding((*base, i), f"env '{entry['name']}' sets both value and valueFrom")


ENV_VALUE = SpecRule(
    "env-value",
    "an env entry has `value` or `valueFrom`, not both",
    explanation=(
        "An env entry takes its value either literally (`value`) or from a source (`valueFrom`). "
        "The API server refuses an entry with both."
    ),
    severity="error",
    silenceable=True,
    check=_one_value,
)


def _literal_credentials(ctx: Context) -> Iterator[Finding]:
    for base, i, entry in ctx.once(_entries):
        if "value" in entry and is_literal_credential(entry["name"], entry["value"]):
            # The value itself is never repeated: it must not land in CI logs either.
            yield ctx.finding(
                (*base, i, "value"),
                f"env '{entry['name']}' holds a literal credential; "
                "it would be committed to Git in the rendered manifests",
                "use valueFrom.secretKeyRef with a Secret"
                + (
                    "; for a URL, the password in a variable of its own from a Secret, "
                    "declared before this one, as $(NAME) in the URL"
                    if has_url_password(entry["value"])
                    else ""
                ),
            )


SECRET_LITERAL = SpecRule(
    "secret-literal",
    'no literal credential in env (see "Safe by default")',
    explanation=(
        "A password, token or key written into the spec lands in Git and in every rendered "
        'manifest. Take it from a Secret (`valueFrom.secretKeyRef`) instead; see "Safe by '
        'default".'
    ),
    severity="error",
    silenceable=True,
    check=_literal_credentials,
)


def _operator_env(ctx: Context) -> Iterator[Finding]:
    """Env an operator sets itself: the spec's value would override it or be replaced."""
    workload = WORKLOADS[ctx.workload]
    if not workload.operator_env:
        return
    for base in [("spec",), *(("spec", role) for role, _ in ctx.roles())]:
        body = ctx.spec if len(base) == 1 else ctx.spec[str(base[1])]
        for i, entry in enumerate(body.get("env", [])):
            how = workload.operator_env.get(entry["name"])
            if how:
                yield ctx.finding(
                    (*base, "env", i, "name"),
                    f"env '{entry['name']}' is set by {how}",
                    f"remove it here; workload '{ctx.workload}' gets it from its operator",
                )


OPERATOR_ENV = SpecRule(
    "operator-env",
    "no env that the `paddlejob` or `kubeflow-paddlejob` operator sets itself "
    "(`PADDLE_PORT`, `PADDLE_TRAINER_ID`, `POD_IP`, `PADDLE_MASTER`, ...): it would "
    "override the operator's value or be replaced",
    explanation=(
        "The `paddlejob` and `kubeflow-paddlejob` operators set env of their own in the training "
        "container (`PADDLE_PORT`, `PADDLE_TRAINER_ID`, `POD_IP`, `PADDLE_MASTER`, ...). The "
        "spec's entry would override the operator's value, or be replaced by it: either way the "
        "job does not run as written."
    ),
    severity="error",
    silenceable=True,
    check=_operator_env,
)


def _generated(ctx: Context) -> dict[str, tuple[str, str]]:
    """The variables paddlegen writes into every training container from a setting of the
    spec: name -> (the setting, its value as a message says it)."""
    out: dict[str, tuple[str, str]] = {}
    given = ctx.spec.get("checkpoint")
    if given is not None:
        volumes = ctx.spec.get("volumes", [])
        volume: dict[str, Any] = next((v for v in volumes if v["name"] == given["volume"]), {})
        folder = given.get("path", ctx.data["metadata"]["name"])
        where = f"{str(volume.get('mountPath', '')).rstrip('/')}/{folder}"
        out[CHECKPOINT_DIR_ENV] = ("spec.checkpoint", f"the {where!r}")
        out[RESTART_ATTEMPT_ENV] = ("spec.checkpoint", "the group's attempt")
    if "nccl" in ctx.spec:
        nccl = Nccl(**ctx.spec["nccl"]).env
        out.update((k, ("spec.nccl", f"the {v!r}")) for k, v in nccl.items())
    return out


def _override(ctx: Context) -> Iterator[Finding]:
    """An env entry of the spec (or a role) setting a variable a setting writes: the entry
    wins (it comes after in the container's env, or replaces it), silently but for this."""
    generated = _generated(ctx)
    if not generated:
        return
    places = [(("spec",), ctx.spec), *((("spec", role), body) for role, body in ctx.roles())]
    for place, body in places:
        for i, entry in enumerate(body.get("env", [])):
            if entry["name"] in generated:
                setting, value = generated[entry["name"]]
                yield ctx.finding(
                    (*place, "env", i, "name"),
                    f"env '{entry['name']}' replaces {value} {setting} writes: env wins",
                    "keep one of them",
                )


ENV_OVERRIDE = SpecRule(
    "env-override",
    "no `env` entry sets a variable paddlegen writes from another setting (`spec.checkpoint`'s "
    "`PADDLE_CHECKPOINT_DIR` and `PADDLE_RESTART_ATTEMPT`, `spec.nccl`'s `NCCL_*`): the entry "
    "would win over it",
    explanation=(
        "paddlegen writes some variables from other settings: `spec.checkpoint` the checkpoint "
        "folder and the restart attempt, `spec.nccl` NCCL's. An `env` entry of the same name "
        "comes after them in the container and wins, so the job runs otherwise than those "
        "settings say, and nothing else tells."
    ),
    severity="warning",
    silenceable=True,
    check=_override,
)


_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)


_RESOURCE_FIELDS = tuple(
    f"{kind}.{r}" for kind in ("limits", "requests") for r in CONTAINER_RESOURCES
)


_BYTE_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")


def _field_path_problem(field_path: str) -> str:
    """Why the API server refuses ``field_path`` in an env fieldRef ("" if it does not)."""
    if field_path.endswith("']") and "['" in field_path and not field_path.startswith("['"):
        path, _, key = field_path[:-2].partition("['")
        if path not in ("metadata.labels", "metadata.annotations"):
            return f"'{path}' takes no ['key'] (only metadata.labels and metadata.annotations do)"
        if not is_qualified_name(key.lower() if path == "metadata.annotations" else key):
            return f"'{key}' is not a label or annotation key"
        return ""
    if field_path in (*_FIELD_PATHS, "spec.host"):
        return ""
    return f"'{field_path}' is not a pod field env can read"


def _divisor_problem(resource: str, divisor: Any) -> str:
    """Why the API server refuses ``divisor`` for ``resource`` ("" if it does not): it compares
    the divisor's canonical spelling, so 1024 is not 1Ki and 1e3 is not 1k."""
    if server_value(divisor) == 0:
        return ""  # an unset divisor: 1
    spelled = canonical(divisor)
    kind = resource.partition(".")[2]
    if kind == "cpu":
        allowed: tuple[str, ...] = ("1m", "1")
    elif kind in ("memory", "ephemeral-storage") or kind.startswith("hugepages-"):
        allowed = _BYTE_DIVISORS
    else:
        return ""
    if spelled in allowed:
        return ""
    read = f" (the API server reads it as '{spelled}')" if spelled != spelling(divisor) else ""
    return (
        f"divisor '{spelling(divisor)}'{read} is not one of {', '.join(allowed)}, "
        f"the divisors of {kind}"
    )


def _env_downward_api(ctx: Context) -> Iterator[Finding]:
    """fieldRef and resourceFieldRef name what the API server lets env read, in its units."""
    for place, section in container_places(ctx, "env"):
        for i, entry in enumerate(section["env"]):
            source = entry.get("valueFrom", {})
            here: FieldPath = (*place, "env", i, "valueFrom")
            if "fieldRef" in source:
                ref = source["fieldRef"]
                version = ref.get("apiVersion") or "v1"
                if version != "v1":
                    yield ctx.finding(
                        (*here, "fieldRef", "apiVersion"),
                        f"fieldRef apiVersion '{version}' is not v1, the only version of pods",
                        "leave apiVersion out",
                    )
                problem = _field_path_problem(ref["fieldPath"])
                if problem:
                    yield ctx.finding(
                        (*here, "fieldRef", "fieldPath"),
                        problem,
                        "one of " + ", ".join(_FIELD_PATHS) + ", metadata.labels['KEY'] "
                        "or metadata.annotations['KEY']",
                    )
            if "resourceFieldRef" in source:
                ref = source["resourceFieldRef"]
                resource = ref["resource"]
                known = resource in _RESOURCE_FIELDS or resource.startswith(
                    ("limits.hugepages-", "requests.hugepages-")
                )
                if not known:
                    yield ctx.finding(
                        (*here, "resourceFieldRef", "resource"),
                        f"'{resource}' is not a resource env can read",
                        "one of " + ", ".join(_RESOURCE_FIELDS) + " or "
                        "limits.hugepages-<size>, requests.hugepages-<size>",
                    )
                if "divisor" in ref:
                    problem = _divisor_problem(resource, ref["divisor"])
                    if problem:
                        yield ctx.finding(
                            (*here, "resourceFieldRef", "divisor"),
                            problem,
                            "leave divisor out for 1",
                        )


ENV_DOWNWARD_API = SpecRule(
    "env-downward-api",
    "env `fieldRef` reads a pod field env may read (apiVersion v1); `resourceFieldRef` a "
    "resource env may read, with a divisor the API server accepts (`1m` or `1` for cpu; "
    "`1`, `1k`...`1E`, `1Ki`...`1Ei` for bytes, as the server spells them: `1024` is not "
    "`1Ki`)",
    explanation=(
        "Env may read only some pod fields (`fieldRef`) and container resources "
        "(`resourceFieldRef`), with divisors the API server accepts. It refuses the pods "
        "otherwise."
    ),
    severity="error",
    silenceable=True,
    check=_env_downward_api,
)


_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def _env_key_refs(ctx: Context) -> Iterator[Finding]:
    """secretKeyRef and configMapKeyRef name a key a Secret or ConfigMap can hold
    (IsConfigMapKey)."""
    for place, section in container_places(ctx, "env"):
        for i, entry in enumerate(section["env"]):
            for source in ("secretKeyRef", "configMapKeyRef"):
                ref = entry.get("valueFrom", {}).get(source)
                if ref is None:
                    continue
                key = ref["key"]
                if not _CONFIG_KEY.match(key) or len(key) > 253:
                    problem = (
                        "holds only letters, digits, '-', '_' and '.' (at most 253 characters)"
                    )
                elif key.startswith(".."):
                    problem = "does not start with '..'"
                elif key == ".":
                    problem = "is not '.'"
                else:
                    continue
                yield ctx.finding(
                    (*place, "env", i, "valueFrom", source, "key"),
                    f"'{key}' is not a key a Secret or ConfigMap can hold: a key {problem}",
                )


ENV_KEY_REF = SpecRule(
    "env-key-ref",
    "`secretKeyRef` and `configMapKeyRef` name a key a Secret or ConfigMap can hold "
    "(letters, digits, `-`, `_`, `.`; not starting with `..`)",
    explanation=(
        "A Secret or ConfigMap key holds only letters, digits, `-`, `_` and `.`, and does not "
        "start with `..`. A `secretKeyRef` or `configMapKeyRef` naming another can never resolve, "
        "and the API server refuses it."
    ),
    severity="error",
    silenceable=True,
    check=_env_key_refs,
)
