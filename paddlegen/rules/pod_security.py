"""The Pod Security level a spec's training pods need, as the API server's admission judges them."""

# Pod Security admission is built into the kube-apiserver: a namespace labelled
# pod-security.kubernetes.io/enforce=LEVEL gets every pod above LEVEL refused. It judges a
# Job's pod template only to warn, so a Job whose pods break the level is created and then
# never gets a pod. The checks below are those of k8s.io/pod-security-admission v0.37.2 (the
# Kubernetes v1.37.2 paddlegen pins), policy/check_*.go, for the fields paddlegen writes.

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import Context, Finding, SpecRule
from paddlegen.workloads import WORKLOADS

LEVELS = ("restricted", "baseline", "privileged")  # each allows more than the one before
ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
# policy/check_capabilities_baseline.go:61-77 (capabilities_allowed_1_0)
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# policy/check_capabilities_restricted.go:29-32, :103-109: all dropped, only this one added
RESTRICTED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})


class Need(NamedTuple):
    """One thing in the spec that needs a level above restricted: the level, where, why."""

    level: str
    path: FieldPath
    why: str


def needs(spec: dict[str, Any], workload: str) -> list[Need]:
    """What in ``spec`` makes its training pods need more than restricted, in spec order."""
    security = spec.get("security", {})
    here: FieldPath = ("spec", "security")
    found = [
        _capability(name, (*here, "capabilities", "add", i))
        for i, name in enumerate(security.get("capabilities", {}).get("add", []))
        if name not in RESTRICTED_CAPABILITIES
    ]
    # restricted: check_capabilities_restricted.go (drop ALL), check_allowPrivilegeEscalation.go
    # (false), check_seccompProfile_restricted.go (RuntimeDefault or Localhost)
    if security.get("restricted") is False:
        why = "without the restricted profile the containers keep their capabilities, may "
        why += "escalate privileges and run without a seccomp profile"
        found.append(Need("baseline", (*here, "restricted"), why))
    # restricted: check_runAsNonRoot.go, check_runAsUser.go
    if security.get("runAsNonRoot") is not True:
        where = (*here, "runAsNonRoot") if "runAsNonRoot" in security else here
        found.append(Need("baseline", where, "runAsNonRoot is not true"))
    if security.get("runAsUser") == 0:
        found.append(Need("baseline", (*here, "runAsUser"), "runAsUser is 0"))
    # baseline: check_hostPathVolumes.go, check_hostPorts.go
    for i, volume in enumerate(spec.get("volumes", [])):
        if "hostPath" in volume:
            why = f"volume '{volume['name']}' is a hostPath"
            found.append(Need("privileged", ("spec", "volumes", i, "hostPath"), why))
    # spec.distributed.hostPorts, on by default, binds hostPorts in the workload that reads
    # that section (distributed-job)
    distributed = spec.get("distributed", {})
    own = WORKLOADS[workload].settings
    if own is not None and own.section == "distributed" and own.of(spec).hostPorts:
        why = "the pservers and trainers bind hostPorts (distributed.hostPorts: false turns "
        why += "them off)"
        where = ("spec", "distributed", *(["hostPorts"] if "hostPorts" in distributed else []))
        found.append(Need("privileged", where, why))
    # baseline: check_hostNamespaces.go. paddle-operator v0.3.5 sets hostNetwork on every pod
    # of a PaddleFlow PaddleJob with intranet Host (controllers/paddlejob_helper.go:358-362),
    # the workload whose settings have an intranet.
    if own is not None and getattr(own.of(spec), "intranet", None) == "Host":
        why = "with intranet Host the operator puts the pods on their nodes' network "
        why += "(hostNetwork)"
        found.append(Need("privileged", ("spec", own.section, "intranet"), why))
    return found


def _capability(name: str, path: FieldPath) -> Need:
    """check_capabilities_restricted.go: only NET_BIND_SERVICE; check_capabilities_baseline.go:
    only its list."""
    if name in BASELINE_CAPABILITIES:
        return Need("baseline", path, f"capability {name}, beyond restricted's NET_BIND_SERVICE")
    return Need("privileged", path, f"capability {name}, beyond baseline's list")


def level_needed(spec: dict[str, Any], workload: str) -> str:
    """The lowest Pod Security level that admits the training pods of ``spec``."""
    return _highest(needs(spec, workload))


def _highest(found: list[Need]) -> str:
    return max((n.level for n in found), key=LEVELS.index, default=LEVELS[0])


def _pod_security(ctx: Context) -> Iterator[Finding]:
    security = ctx.spec.get("security", {})
    declared = security.get("podSecurity")
    added = security.get("capabilities", {}).get("add", [])
    if declared is None and not set(added) - RESTRICTED_CAPABILITIES:
        return  # nothing asked beyond paddlegen's own profile, and no level to hold it to
    found = needs(ctx.spec, ctx.workload)
    needed = _highest(found)
    if declared is not None:
        for need in found:
            if LEVELS.index(need.level) > LEVELS.index(declared):
                yield ctx.finding(
                    need.path,
                    f"a namespace enforcing Pod Security level {declared} refuses the training "
                    f"pods: {need.why}, needs {need.level}; the API server takes the "
                    f"{WORKLOADS[ctx.workload].title} and then refuses every pod of it",
                    f"run the job where {ENFORCE_LABEL}={needed} and declare that level, or "
                    "drop what needs more",
                    severity="error",
                )
        return
    above = [n for n in found if n.level == needed]
    kept = (
        ". The containers keep the rest of the restricted profile (drop: [ALL] but what is "
        "added, no privilege escalation, RuntimeDefault seccomp)"
        if security.get("restricted", True)
        else ""
    )
    yield ctx.finding(
        ("spec", "security", "capabilities", "add"),
        f"the training pods need Pod Security level {needed}: "
        + "; ".join(n.why for n in above)
        + kept,
        f"run the job in a namespace labelled {ENFORCE_LABEL}={needed}, where the API server "
        "admits the pods, and declare it as spec.security.podSecurity",
    )


POD_SECURITY = SpecRule(
    "pod-security",
    "the Pod Security level (`restricted`, `baseline`, `privileged`) the training pods need, "
    "as the API server's admission judges them: a warning naming it when "
    "`security.capabilities.add` goes beyond `restricted` (`restricted` adds only "
    "`NET_BIND_SERVICE`; `baseline` a fixed list without `IPC_LOCK`), an error for what "
    "needs more than a declared `security.podSecurity` (a capability, `runAsNonRoot` unset, "
    "a hostPath, hostPorts, the host network of `paddlejob.intranet: Host`)",
    explanation=(
        "A namespace's Pod Security admission refuses pods that need more than its level. A "
        "warning names the level the training pods need when their capabilities go beyond "
        "`restricted`; an error when they need more than a declared `security.podSecurity`."
    ),
    severity="warning",
    also=("error",),
    silenceable=True,
    check=_pod_security,
)
