"""The pods' containers, ports, probes, tolerations and topology spread, as the API takes them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from paddlegen.rules.shared import is_qualified_name
from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.model import CONTAINER_LISTS
from paddlegen.spec.rule import Context, Finding, SpecRule, container_places, init_containers
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.base import TRAINING_CONTAINER

_LABEL_VALUE = re.compile(r"^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _tolerations(ctx: Context) -> Iterator[Finding]:
    """Tolerations as the API server takes them (ValidateTolerations): a key is a label key;
    an empty key needs operator Exists (it matches every taint); Exists takes no value, Equal
    (the default) a label value; tolerationSeconds only with effect NoExecute."""
    for place, section in container_places(ctx, "tolerations"):
        for i, toleration in enumerate(section["tolerations"]):
            here: FieldPath = (*place, "tolerations", i)
            key = toleration.get("key", "")
            operator = toleration.get("operator", "Equal")
            value = toleration.get("value", "")
            if key and not is_qualified_name(key):
                yield ctx.finding(
                    (*here, "key"),
                    f"toleration key '{key}' is not a taint key ([prefix/]name: letters, digits, "
                    "'-', '_' and '.', starting and ending with a letter or digit)",
                )
            if not key and operator != "Exists":
                yield ctx.finding(
                    (*here, "operator") if "operator" in toleration else here,
                    "a toleration without a key matches every taint, so its operator must be "
                    f"Exists, not {operator}",
                    "set operator: Exists, or name the taint's key",
                )
            if operator == "Exists" and value:
                yield ctx.finding(
                    (*here, "value"),
                    f"operator Exists matches any value: the value '{value}' must be left out",
                )
            elif operator == "Equal" and not (len(value) <= 63 and _LABEL_VALUE.match(value)):
                yield ctx.finding(
                    (*here, "value"),
                    f"toleration value '{value}' is not a taint value (at most 63 letters, "
                    "digits, '-', '_' and '.', starting and ending with a letter or digit)",
                )
            if "tolerationSeconds" in toleration and toleration.get("effect") != "NoExecute":
                yield ctx.finding(
                    (*here, "tolerationSeconds"),
                    "tolerationSeconds needs effect NoExecute: only a NoExecute taint evicts "
                    "after a while",
                    "set effect: NoExecute, or drop tolerationSeconds",
                )


TOLERATION = SpecRule(
    "toleration",
    "tolerations as the API server takes them: a key is a taint key, an empty key goes with"
    " `operator: Exists`, `Exists` has no value and `Equal` a label-like one, "
    "`tolerationSeconds` only with `effect: NoExecute`",
    explanation=(
        "The API server checks tolerations in ways the schema cannot: a key is a taint key, an "
        "empty key needs `operator: Exists`, `Exists` takes no value, and `tolerationSeconds` goes "
        "only with `effect: NoExecute`. It refuses the pods otherwise."
    ),
    severity="error",
    silenceable=True,
    check=_tolerations,
)


def _topology_spread(ctx: Context) -> Iterator[Finding]:
    """What the API server refuses in topologySpreadConstraints that the schema cannot see
    (validateTopologySpreadConstraints, ValidateLabelSelector): two constraints with the same
    topologyKey and whenUnsatisfiable, minDomains without DoNotSchedule, matchLabelKeys
    without a labelSelector or with a key it names, values that do not fit the operator."""
    for place, section in container_places(ctx, "topologySpreadConstraints"):
        seen: dict[tuple[str, str], int] = {}
        base: FieldPath = (*place, "topologySpreadConstraints")
        for i, constraint in enumerate(section["topologySpreadConstraints"]):
            here: FieldPath = (*base, i)
            pair = (constraint["topologyKey"], constraint["whenUnsatisfiable"])
            if pair in seen:
                yield ctx.finding(
                    (*here, "topologyKey"),
                    f"topologyKey '{pair[0]}' with whenUnsatisfiable {pair[1]} is already "
                    f"constrained at {format_path((*base, seen[pair]))}",
                    "merge the two into one constraint",
                )
            seen.setdefault(pair, i)
            if "minDomains" in constraint and pair[1] != "DoNotSchedule":
                yield ctx.finding(
                    (*here, "minDomains"),
                    f"minDomains needs whenUnsatisfiable DoNotSchedule, not {pair[1]}: only "
                    "DoNotSchedule counts domains",
                    "set whenUnsatisfiable: DoNotSchedule, or drop minDomains",
                )
            selector = constraint.get("labelSelector", {})
            yield from _selector_values(ctx, (*here, "labelSelector"), selector)
            if "matchLabelKeys" in constraint and "labelSelector" not in constraint:
                yield ctx.finding(
                    (*here, "matchLabelKeys"),
                    "matchLabelKeys narrows labelSelector, and the constraint has none",
                    "add a labelSelector, e.g. matchLabels: {app.kubernetes.io/instance: <name>}",
                )
            selected = {*selector.get("matchLabels", {})}
            selected |= {e["key"] for e in selector.get("matchExpressions", [])}
            for j, key in enumerate(constraint.get("matchLabelKeys", [])):
                if key in selected:
                    yield ctx.finding(
                        (*here, "matchLabelKeys", j),
                        f"'{key}' is in labelSelector too: the API server refuses a key in both",
                        "keep it in one of them",
                    )


def _selector_values(ctx: Context, where: FieldPath, selector: dict[str, Any]) -> Iterator[Finding]:
    """In and NotIn compare with at least one value; Exists and DoesNotExist take none."""
    for i, requirement in enumerate(selector.get("matchExpressions", [])):
        operator, values = requirement["operator"], requirement.get("values", [])
        compares = operator in ("In", "NotIn")
        if compares == bool(values):
            continue
        yield ctx.finding(
            (*where, "matchExpressions", i, *(() if compares else ("values",))),
            f"operator {operator} "
            + ("needs at least one value" if compares else "looks at the key alone: no values"),
            "add values: [...]" if compares else "drop values",
        )


TOPOLOGY_SPREAD = SpecRule(
    "topology-spread",
    "`topologySpreadConstraints` as the API server takes them: one constraint per "
    "`topologyKey` and `whenUnsatisfiable`, `minDomains` only with `DoNotSchedule`, "
    "`matchLabelKeys` only with a `labelSelector` and none of its keys, `In` and `NotIn` "
    "with values, `Exists` and `DoesNotExist` without; for `paddlejob`, none of "
    "`minDomains`, `matchLabelKeys`, `nodeAffinityPolicy`, `nodeTaintsPolicy`, which "
    "PaddleFlow's CRD (v0.3.5) lacks, so the API server would drop them",
    explanation=(
        "The API server refuses topology spread constraints in ways the schema cannot see: two "
        "with one `topologyKey` and `whenUnsatisfiable`, `minDomains` without `DoNotSchedule`, "
        "`matchLabelKeys` without a `labelSelector`, values that do not fit the operator. "
        "PaddleFlow's CRD (v0.3.5) also drops the newer fields, so the constraint would not hold."
    ),
    severity="error",
    silenceable=True,
    check=_topology_spread,
)


def _pods(ctx: Context) -> Iterator[tuple[str, dict[str, list[tuple[FieldPath, dict[str, Any]]]]]]:
    """Each role's pods: the init containers and sidecars they run (a role's own list, else
    the spec's), each with its place in the spec."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    for role, body in roles.items():
        lists = {}
        for key in CONTAINER_LISTS:
            base: FieldPath = ("spec", role, key) if key in body else ("spec", key)
            given = body.get(key, ctx.spec.get(key, []))
            lists[key] = [((*base, i), container) for i, container in enumerate(given)]
        yield role, lists


def _container_names(ctx: Context) -> Iterator[Finding]:
    """A pod's containers have names of their own (validateInitContainers, Kubernetes v1.37.2
    pkg/apis/core/validation/validation.go:3944-3950): not the training container's, nor an
    init container's that the operator adds to every pod."""
    if not ctx.once(init_containers):
        return  # the training container alone
    workload = WORKLOADS[ctx.workload]
    reserved = {TRAINING_CONTAINER: "the training container's"}
    reserved |= dict.fromkeys(
        workload.operator_init_containers,
        f"the init container the {workload.title} operator adds to every pod",
    )
    said: set[FieldPath] = set()
    for _, lists in _pods(ctx):
        seen: dict[str, FieldPath] = {}
        for place, container in [*lists["sidecars"], *lists["initContainers"]]:
            name = container["name"]
            if name in reserved and (*place, "name") not in said:
                said.add((*place, "name"))
                yield ctx.finding(
                    (*place, "name"),
                    f"name '{name}' is {reserved[name]}",
                    "choose another name",
                )
            elif name in seen:
                # at the role's own entry when a role's list meets the spec's: it makes the clash
                first, later = sorted((seen[name], place), key=len)
                if (*later, "name") not in said:
                    said.add((*later, "name"))
                    yield ctx.finding(
                        (*later, "name"),
                        f"name '{name}' is already taken by {format_path(first)}: the "
                        "containers of a pod have names of their own",
                        "choose another name",
                    )
            seen.setdefault(name, place)


CONTAINER_NAME = SpecRule(
    "container-name",
    "the containers of a pod have names of their own: an init container or sidecar is not "
    "named `paddle` (the training container), nor, for `paddlejob`, `coord-paddle` (the "
    "operator's init container), nor like another of the pod's (a role's own list counts "
    "with the spec's lists it keeps)",
    explanation=(
        "The containers of a pod need names of their own: the API server refuses two of one name. "
        "An init container or sidecar may not take the training container's name (`paddle`) nor "
        "that of an init container the operator adds."
    ),
    severity="error",
    silenceable=True,
    check=_container_names,
)


def _sidecar_ports(ctx: Context) -> Iterator[Finding]:
    """The containers of a pod share its network: a sidecar's port is no other container's
    (two cannot listen on one; the API server warns about a name or number declared twice,
    Kubernetes v1.37.2 pkg/api/pod/warnings.go:300-350), and a probe names a port of its own
    sidecar (the kubelet finds a named port in the container's ports alone)."""
    if not ctx.once(init_containers):
        return  # no sidecar
    training = ctx.own.training_ports(ctx) if ctx.own.training_ports else {}
    said: set[FieldPath] = set()
    for _, lists in _pods(ctx):
        # what each port number (with its protocol) and name is already
        taken: dict[Any, str] = {}
        for (given, protocol), name in training.items():
            taken[(given, protocol)] = f"the training container's port '{name}'"
            taken[name] = f"the training container's port {given}"
        for place, sidecar in lists["sidecars"]:
            for i, port in enumerate(sidecar.get("ports", [])):
                here: FieldPath = (*place, "ports", i)
                number = (port["containerPort"], port.get("protocol", "TCP"))
                for field, value, what in (
                    ("containerPort", number, f"{number[0]}/{number[1]}"),
                    ("name", port.get("name"), f"name '{port.get('name')}'"),
                ):
                    if value is None:
                        continue
                    if value in taken and (*here, field) not in said:
                        said.add((*here, field))
                        yield ctx.finding(
                            (*here, field),
                            f"port {what} is already {taken[value]}: the containers of a pod "
                            "share its network",
                            "use another port",
                        )
                    taken.setdefault(value, f"declared at {format_path(here)}")
            yield from _probe_ports(ctx, place, sidecar)


def _probe_ports(ctx: Context, place: FieldPath, sidecar: dict[str, Any]) -> Iterator[Finding]:
    own = [p["name"] for p in sidecar.get("ports", []) if "name" in p]
    for probe in ("startupProbe", "livenessProbe"):
        for handler in ("httpGet", "tcpSocket"):
            port = sidecar.get(probe, {}).get(handler, {}).get("port")
            if isinstance(port, str) and port not in own:
                yield ctx.finding(
                    (*place, probe, handler, "port"),
                    f"port '{port}' names no port of this sidecar, and the kubelet looks for "
                    "it there: the probe would fail",
                    "its ports: " + (", ".join(own) or "none") + "; or give the number",
                )


CONTAINER_PORT = SpecRule(
    "container-port",
    "a sidecar's port number (with its protocol) and name are no other container's of the "
    "pod (the training container's `master` port for `kubeflow-paddlejob`, `jobport<i>` for"
    " `distributed-job`, another sidecar's): they share one network; a probe's named port "
    "is one of its own sidecar's",
    explanation=(
        "The containers of a pod share its network: two cannot listen on one port, and the API "
        "server warns about a port name or number declared twice. A probe's named port is looked "
        "up in its own container's ports alone."
    ),
    severity="error",
    silenceable=True,
    check=_sidecar_ports,
)


def _paddlejob_sidecars(ctx: Context) -> Iterator[Finding]:
    """A workload whose object cannot carry native sidecars refuses them where they are set."""
    why = WORKLOADS[ctx.workload].no_sidecars
    places = [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]
    given = [base for base, body in places if body.get("sidecars")]
    if not why or not given:
        return
    able = [w for w in WORKLOADS.values() if not w.no_sidecars and "sidecars" not in w.unsupported]
    # an operator's first: the same shape of job
    names = [w.name for w in sorted(able, key=lambda w: w.scheduling_policy is None)]
    hint = f"use workload {', '.join(names[:-1])} or {names[-1]} for sidecars, or make it an "
    hint += "init container that exits"
    for base in given:
        yield ctx.finding((*base, "sidecars"), why, hint, key=True)


PADDLEJOB_SIDECAR_PRUNED = SpecRule(
    "paddlejob-sidecar-pruned",
    "no `sidecars` for `paddlejob`: PaddleFlow's CRD (v0.3.5) has no `restartPolicy` for "
    "init containers, so the sidecar would be an init container that never exits (use "
    "`kubeflow-paddlejob`, `job` or `distributed-job`)",
    explanation=(
        "PaddleFlow's CRD (v0.3.5) has no `restartPolicy` for init containers, so a sidecar would "
        "become an init container that never exits, and the training container would never start."
    ),
    severity="error",
    silenceable=True,
    check=_paddlejob_sidecars,
)
