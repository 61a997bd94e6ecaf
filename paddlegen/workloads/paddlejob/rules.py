"""The rules of workload `paddlejob`: what PaddleFlow's operator (v0.3.5) does with a spec."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import (
    Context,
    Finding,
    SpecRule,
    WorkloadRules,
    container_places,
    pod_count,
    pod_settings,
    worker_replicas,
)
from paddlegen.workloads.shared.rules import KUEUE_WORKLOAD, PS_END


def _gang_deadlock(ctx: Context) -> Iterator[Finding]:
    wanted = ctx.spec.get("scheduling", {}).get("minAvailable")
    total = pod_count(ctx)
    if wanted is not None and wanted < total and not _elastic(ctx):
        # paddle-operator v0.3.5: the endpoints ConfigMap is made once every pod has an IP
        # (paddlejob_controller.go:250, paddlejob_helper.go:41 isAllPodsReady), and each
        # container takes its env from it (envFrom, not optional: paddlejob_helper.go:346).
        yield ctx.finding(
            ("spec", "scheduling", "minAvailable"),
            f"minAvailable {wanted} of {total} pods can deadlock: Volcano may start "
            f"{wanted} pods while the rest wait for room, and the started ones cannot run "
            "until the operator's endpoints ConfigMap exists, which it makes only once every "
            "pod has an IP; the job then holds what it got and never trains",
            "leave minAvailable out (all pods start together)",
        )


def _elastic(ctx: Context) -> bool:
    """Elastic mode: the operator's pods take no endpoints ConfigMap (paddlejob_helper.go:331)."""
    return "elastic" in ctx.spec.get("paddlejob", {})


PADDLEJOB_MIN_AVAILABLE = SpecRule(
    "paddlejob-min-available",
    "a PaddleFlow gang smaller than the job (`minAvailable` below its pods) can deadlock: "
    "started pods wait for an endpoints ConfigMap the operator makes only once every pod "
    "has an IP",
    explanation=(
        "PaddleFlow's operator makes the endpoints ConfigMap every pod reads only once every pod "
        "has an IP. A gang smaller than the job lets Volcano start some pods while the rest wait "
        "for room; the started ones wait for the ConfigMap, hold what they got and never train."
    ),
    severity="warning",
    silenceable=True,
    check=_gang_deadlock,
)


def _heter(ctx: Context) -> Iterator[Finding]:
    has_ps = "ps" in ctx.spec
    if "heter" in ctx.spec and not has_ps:
        yield ctx.finding(
            ("spec", "heter"),
            "the heter role needs ps: heterogeneous training is a form of PS mode",
            "add spec.ps, or remove spec.heter",
            key=True,
        )
    elif "heter" in ctx.spec:
        # paddle-operator v0.3.5 api/v1/paddlejob_types.go:44-48 and
        # controllers/paddlejob_helper.go:265; Paddle 2.6's role maker
        # (python/paddle/distributed/fleet/base/role_maker.py, _ps_env) raises for HETER.
        yield ctx.finding(
            ("spec", "heter"),
            "the operator (v0.3.5) starts heter pods with TRAINING_ROLE=HETER, which Paddle's "
            "role maker refuses (it takes HETER_TRAINER), and lists them in "
            "PADDLE_HETER_ENDPOINTS, which Paddle does not read: without your own mapping the "
            "heter pods fail in fleet.init() and the job never trains",
            "start heter pods with an entry point that sets TRAINING_ROLE=HETER_TRAINER and the "
            "PADDLE_*HETER* variables Paddle reads, or remove spec.heter",
            key=True,
            severity="warning",
        )


PADDLEJOB_HETER = SpecRule(
    "paddlejob-heter",
    "PaddleJob's `heter` role needs `ps` (error); with it, the operator (v0.3.5) starts "
    "heter pods with `TRAINING_ROLE=HETER`, which Paddle's role maker refuses, so they fail"
    " unless your entry point maps it (warning)",
    explanation=(
        "PaddleFlow's heterogeneous training is a form of parameter-server training: `heter` "
        "without `ps` is refused. With `ps`, the operator (v0.3.5) starts heter pods with "
        "`TRAINING_ROLE=HETER`, which Paddle's role maker does not know: a warning says they fail "
        "unless the entry point maps it."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_heter,
)


def _gloo(ctx: Context) -> Iterator[Finding]:
    gloo = ctx.spec.get("paddlejob", {}).get("withGloo", 0)  # 0 is off, so it is harmless anywhere
    if gloo and "ps" not in ctx.spec:
        yield ctx.finding(
            ("spec", "paddlejob", "withGloo"),
            f"withGloo {gloo} needs ps: the operator only starts Gloo in PS mode",
            "add spec.ps, or remove withGloo",
        )
    # (withGloo works with every intranet: the operator sets Gloo up whenever ps exists,
    # paddle-operator v0.3.5 paddlejob_helper.go:268-275, and its own wide_and_deep_service
    # example combines it with intranet Service.)


PADDLEJOB_GLOO = SpecRule(
    "paddlejob-gloo",
    "`withGloo` needs `ps` (it works with every `intranet`)",
    explanation=(
        "`withGloo` turns on Gloo for parameter-server training in PaddleFlow's operator. Without "
        "`ps` it does nothing the job can use, so the spec is refused."
    ),
    severity="error",
    silenceable=True,
    check=_gloo,
)


def _paddlejob_elastic(ctx: Context) -> Iterator[Finding]:
    """The operator turns elastic mode on when the field is present, whatever its value
    (paddlejob_helper.go:331, 364): then the pods do not get its endpoints ConfigMap (no
    envFrom), which PS mode needs, and every pod runs with restartPolicy OnFailure."""
    if not _elastic(ctx):
        return
    settings = ctx.spec["paddlejob"]
    where = ("spec", "paddlejob", "elastic")
    if settings["elastic"] == 0:
        yield ctx.finding(
            where,
            "elastic: 0 turns elastic mode on: the operator only checks that the field is there",
            "remove paddlejob.elastic to turn it off",
            severity="warning",
        )
    if "ps" in ctx.spec:
        yield ctx.finding(
            where,
            "elastic mode has no PS mode: the operator then gives the pods no endpoints "
            "(its ConfigMap is not passed on), which ps and worker pods need to find each other",
            "remove spec.ps (collective training), or remove elastic",
        )
    restart = ctx.spec.get("run", {}).get("restartPolicy")
    if restart and restart != "OnFailure":
        yield ctx.finding(
            ("spec", "run", "restartPolicy"),
            f"elastic mode runs every pod with restartPolicy OnFailure; {restart} is overridden",
            "remove run.restartPolicy",
            severity="warning",
        )


PADDLEJOB_ELASTIC = SpecRule(
    "paddlejob-elastic",
    "elastic mode (on whenever `paddlejob.elastic` is there, `0` too) has no PS mode, and "
    "forces `restartPolicy: OnFailure`",
    explanation=(
        "PaddleFlow's operator turns elastic mode on whenever `paddlejob.elastic` is present, `0` "
        "too. Its pods then get no endpoints ConfigMap, which PS mode needs (an error), and run "
        "with `restartPolicy: OnFailure` whatever the spec says (a warning)."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_paddlejob_elastic,
)


def _paddlejob_clean_pod_policy(ctx: Context) -> Iterator[Finding]:
    """paddle-operator v0.3.5 deletes the pods of a Completed job only under "", Always or
    OnCompletion (controllers/paddlejob_controller.go:188-199); otherwise every reconcile
    creates each missing pod (:239-247), Completed or not, even while the job is being deleted.
    A pod gone after the job finished then trains again, with the endpoints of the first run
    (the ConfigMap is never updated, :250-251), and under Volcano waits Pending for ever: the
    job's PodGroup was deleted when it finished (:121-125)."""
    policy = ctx.spec.get("paddlejob", {}).get("cleanPodPolicy")
    if policy in ("Never", "OnFailure"):
        yield ctx.finding(
            ("spec", "paddlejob", "cleanPodPolicy"),
            f"cleanPodPolicy {policy} keeps the pods of a completed PaddleJob, and the "
            "operator creates any of them that goes later (node scale-down, pod garbage "
            "collection, a delete by hand): it trains again, with the first run's endpoints",
            "use OnCompletion (or leave it unset): logs stay readable until the job ends; "
            "keep them longer with a log collector",
        )


PADDLEJOB_CLEAN_POD_POLICY = SpecRule(
    "paddlejob-clean-pod-policy",
    "a PaddleFlow `cleanPodPolicy` of `Never` or `OnFailure` keeps a completed job's pods, "
    "and the operator (v0.3.5) creates any that goes later: it trains again, with stale "
    "endpoints",
    explanation=(
        "PaddleFlow's operator (v0.3.5) deletes a completed job's pods only under `Always` or "
        "`OnCompletion`. Under `Never` or `OnFailure` it re-creates any pod that goes later, which "
        "then trains again with the endpoints of the first run."
    ),
    severity="warning",
    silenceable=True,
    check=_paddlejob_clean_pod_policy,
)


# Fields of a topology spread constraint newer than PaddleFlow's PaddleJob CRD (v0.3.5, whose pod
# template has maxSkew, topologyKey, whenUnsatisfiable and labelSelector only): its structural
# schema prunes them.
_NOT_IN_PADDLEFLOW_CRD = ("minDomains", "matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy")


def _pruned_spread(ctx: Context) -> Iterator[Finding]:
    """topology-spread: what PaddleFlow's CRD would silently drop."""
    for place, section in container_places(ctx, "topologySpreadConstraints"):
        for i, constraint in enumerate(section["topologySpreadConstraints"]):
            for key in _NOT_IN_PADDLEFLOW_CRD:
                if key in constraint:
                    yield ctx.finding(
                        (*place, "topologySpreadConstraints", i, key),
                        f"the PaddleFlow PaddleJob (v0.3.5) pod template has no {key}: the API "
                        "server would drop it, and the constraint would not hold",
                        "spread with maxSkew, topologyKey, whenUnsatisfiable and labelSelector",
                    )


def _intranet_service(ctx: Context) -> Iterator[Finding]:
    """PaddleFlow's Collective mode (several workers, no ps) with intranet Service: the
    operator writes PADDLE_TRAINER_ENDPOINTS=<job>-worker-0:36000,... and POD_IP=<pod name>
    (paddle-operator v0.3.5 controllers/paddlejob_helper.go:234-235, 308-309); Paddle's
    launcher takes the master from the first endpoint, ignores a POD_IP without a dot (paddle
    3.3.1 distributed/launch/plugins/__init__.py:45-73) and serves the master only where its
    host is the pod's own IP (launch/controllers/master.py:80-93): nobody serves it."""
    settings = ctx.spec.get("paddlejob", {})
    if settings.get("intranet") != "Service" or "ps" in ctx.spec or worker_replicas(ctx) < 2:
        return
    yield ctx.finding(
        ("spec", "paddlejob", "intranet"),
        "a PaddleFlow Collective job with intranet Service hangs for ever: the operator names "
        "the master by its Service, and Paddle's launcher starts the master only where that "
        "name is the pod's own IP, so no rank serves it",
        "leave intranet out (PodIP) or set Host; or use workload collective-job",
    )


PADDLEJOB_INTRANET = SpecRule(
    "paddlejob-intranet",
    "a PaddleFlow Collective job (several workers, no `ps`) does not use `intranet: Service`, "
    "with which no rank serves the launcher's master and the job hangs",
    explanation=(
        "In a PaddleFlow Collective job with `intranet: Service`, the operator names the master by "
        "its Service, and Paddle's launcher serves the master only where that name is the pod's "
        "own IP. No rank serves it, and the job hangs for ever."
    ),
    severity="error",
    silenceable=True,
    check=_intranet_service,
)


def _host_network_dns(ctx: Context) -> Iterator[Finding]:
    """dns-policy under intranet Host, where the operator puts the pods on their nodes'
    network (workloads/paddlejob): there the kubelet resolves ClusterFirst as Default, with
    the node's resolver (Kubernetes v1.37.2 pkg/kubelet/network/dns/dns.go:311-318), which is
    why paddlegen gives these pods ClusterFirstWithHostNet."""
    if ctx.spec.get("paddlejob", {}).get("intranet") != "Host":
        return
    said: set[FieldPath] = set()
    for pod, given in pod_settings(ctx, ("dnsPolicy",)):
        place, policy = given.get("dnsPolicy", ((), None))
        if pod != "data" and policy == "ClusterFirst" and place not in said:
            said.add(place)
            yield ctx.finding(
                place,
                "with intranet Host the pods are on their nodes' network, where dnsPolicy "
                "ClusterFirst falls back to Default, the node's resolver: "
                f"{ctx.entry.peer_names}, which would not resolve",
                "remove it: paddlegen gives these pods ClusterFirstWithHostNet",
            )


RULES = WorkloadRules(
    rules=(
        PADDLEJOB_MIN_AVAILABLE,
        PADDLEJOB_HETER,
        PADDLEJOB_GLOO,
        PADDLEJOB_ELASTIC,
        PADDLEJOB_CLEAN_POD_POLICY,
        KUEUE_WORKLOAD,
        PADDLEJOB_INTRANET,
        PS_END,
    ),
    extends={"topology-spread": _pruned_spread, "dns-policy": _host_network_dns},
)
