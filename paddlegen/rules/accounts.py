"""The pods' ServiceAccount token: mounted where the workload needs it, and not the namespace's
default account's."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import Context, Finding, SpecRule, pod_settings
from paddlegen.workloads import WORKLOADS

_TOKEN = "automountServiceAccountToken"
_ACCOUNT = "serviceAccountName"


def _needed_token(ctx: Context) -> Iterator[Finding]:
    """A workload whose training pods talk to the API server (``Workload.api_token``) cannot
    run without their token: automountServiceAccountToken false on them stops the job."""
    workload = WORKLOADS[ctx.workload]
    if not workload.api_token:
        return
    said: set[FieldPath] = set()
    for pod, given in pod_settings(ctx, (_TOKEN,)):
        place, value = given.get(_TOKEN, ((), None))
        if pod == "data" or value is not False or place in said:
            continue
        said.add(place)
        yield ctx.finding(
            place,
            f"automountServiceAccountToken false leaves the {workload.title}'s pods without "
            f"an API token, and {workload.api_token}: no pod would find its peers",
            "remove it: paddlegen mounts the token on these pods alone",
        )


SERVICE_ACCOUNT_TOKEN = SpecRule(
    "service-account-token",
    "no `automountServiceAccountToken: false` on pods that need their token: "
    "`distributed-job`'s trainers list the job's pods through the API server to find their "
    "peers",
    explanation=(
        "Some workloads' pods talk to the API server (`distributed-job`'s trainers list the job's "
        "pods to find their peers). `automountServiceAccountToken: false` on them stops the job."
    ),
    severity="error",
    silenceable=True,
    check=_needed_token,
)


def _default_account(ctx: Context) -> Iterator[Finding]:
    """A token mounted without a serviceAccountName is the namespace's `default` account's
    (the ServiceAccount admission plugin names it, Kubernetes v1.37.2
    plugin/pkg/admission/serviceaccount/admission.go:155-168): a credential every pod of the
    namespace that names no account shares, so what it may do is granted to all of them, and
    what the job's code calls is granted to no account of the job's own."""
    own_account = WORKLOADS[ctx.workload].api_token  # its trainers run as an account of the job's
    pods: dict[FieldPath, list[str]] = {}
    for pod, given in pod_settings(ctx, (_TOKEN, _ACCOUNT)):
        place, value = given.get(_TOKEN, ((), None))
        if value is True and _ACCOUNT not in given and not (own_account and pod != "data"):
            pods.setdefault(place, []).append(
                "the data Job's pod" if pod == "data" else f"the {pod} pods"
            )
    for place, which in pods.items():
        yield ctx.finding(
            place,
            "with no serviceAccountName the token mounted in "
            f"{' and '.join(which)} is the namespace's default ServiceAccount's: the job may "
            "then do whatever that account may, and so may every pod in the namespace that "
            "names no account",
            "give serviceAccountName an account of the job's own, bound to a Role with just "
            "what the training code calls",
        )


DEFAULT_ACCOUNT_TOKEN = SpecRule(
    "default-account-token",
    "`automountServiceAccountToken: true` goes with a `serviceAccountName`: without one the "
    "pods carry the token of the namespace's `default` ServiceAccount, which every pod that "
    "names no account shares",
    explanation=(
        "A token mounted without a `serviceAccountName` is the namespace's `default` "
        "ServiceAccount's, which every pod that names no account shares: what it may do is granted "
        "to all of them."
    ),
    severity="warning",
    silenceable=True,
    check=_default_account,
)
