"""What the training container's capabilities let the user it runs as do."""

# Capabilities on Kubernetes: the runtime puts `capabilities.add` in the bounding, permitted
# and effective sets of the container's first process when it runs as root, and in no set a
# non-root process keeps: Kubernetes, containerd and CRI-O never fill the ambient set
# (kubernetes/kubernetes#56374, open; containerd#5668 and cri-o#5043 closed unmerged), and
# `allowPrivilegeEscalation: false` (the restricted profile) sets no_new_privs, which also
# blocks file capabilities. `drop: [ALL]` takes root's too (capabilities(7)).

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.spec.model import PV_SOURCES
from paddlegen.spec.rule import Context, Finding, SpecRule

IPC_LOCK = "IPC_LOCK"
DAC_OVERRIDE = "DAC_OVERRIDE"
# The other way to lock memory: a container inherits its runtime's RLIMIT_MEMLOCK, which
# containerd takes from its systemd unit.
RAISE_MEMLOCK = (
    "raise the nodes' memlock limit, which containers inherit from their runtime: "
    "LimitMEMLOCK=infinity in containerd's systemd unit"
)


def _added(ctx: Context) -> list[str]:
    added: list[str] = ctx.spec.get("security", {}).get("capabilities", {}).get("add", [])
    return added


def _non_root(security: dict[str, Any]) -> bool:
    """The spec says the training process runs as a user other than root."""
    user = security.get("runAsUser")
    return bool(user) or (user is None and security.get("runAsNonRoot") is True)


def _ipc_lock_non_root(ctx: Context) -> Iterator[Finding]:
    security = ctx.spec.get("security", {})
    added = _added(ctx)
    if IPC_LOCK not in added or not _non_root(security):
        return
    who = f"runAsUser {security['runAsUser']}" if security.get("runAsUser") else "runAsNonRoot"
    yield ctx.finding(
        ("spec", "security", "capabilities", "add", added.index(IPC_LOCK)),
        f"IPC_LOCK does nothing for a non-root container ({who}): Kubernetes' runtimes give "
        "added capabilities to no non-root process (no ambient capabilities, and no file "
        "capabilities without privilege escalation), so locking memory stays capped by the "
        "node's RLIMIT_MEMLOCK, which NCCL's RDMA memory registration outgrows unless the nodes "
        "raise it",
        "run the training container as root to use IPC_LOCK, without runAsNonRoot and "
        f"runAsUser; or keep it non-root, drop IPC_LOCK and {RAISE_MEMLOCK}",
    )


IPC_LOCK_NON_ROOT = SpecRule(
    "ipc-lock-non-root",
    "`IPC_LOCK` in `security.capabilities.add` is not given to a non-root container "
    "(`runAsNonRoot`, `runAsUser` other than 0), where it does nothing",
    explanation=(
        "Kubernetes' runtimes give added capabilities to a container's root process only: no "
        "non-root process gets them as ambient capabilities (kubernetes/kubernetes#56374), and "
        "`allowPrivilegeEscalation: false` blocks file capabilities. A non-root rank with "
        "`IPC_LOCK` added may still lock only as much memory as the node's `RLIMIT_MEMLOCK` "
        "allows, and NCCL's InfiniBand transport, which registers (locks) memory, fails where "
        "that is too low. A warning, not an error: a node whose runtime raises the memlock "
        "limit runs the job all the same, with the capability doing nothing. The fix: root "
        "with `IPC_LOCK`, or non-root on nodes whose memlock limit is raised, without it."
    ),
    severity="warning",
    silenceable=True,
    check=_ipc_lock_non_root,
)


def _root(security: dict[str, Any]) -> bool:
    """The spec leaves the training process root: runAsUser 0, or the image's user (root in
    Paddle's images) where neither runAsUser nor runAsNonRoot says otherwise."""
    user = security.get("runAsUser")
    return user == 0 or (user is None and security.get("runAsNonRoot") is not True)


def _root_volume_owner(ctx: Context) -> Iterator[Finding]:
    security = ctx.spec.get("security", {})
    if security.get("restricted") is False or not _root(security) or DAC_OVERRIDE in _added(ctx):
        return
    name = ctx.spec.get("checkpoint", {}).get("volume")
    # A volume that is not readOnly is no sign the job writes to it; every rank writes its
    # checkpoints. A `dynamic` volume is new, and its provisioner's (root's or everyone's).
    volume: dict[str, Any] = next((v for v in ctx.spec.get("volumes", []) if v["name"] == name), {})
    source = next((s for s in (*PV_SOURCES, "claim") if s in volume), None)
    if source is not None and not volume.get("readOnly"):
        yield ctx.finding(
            ("spec", "checkpoint", "volume"),
            "the training container runs as root with every capability dropped "
            f"(security.restricted) and saves its checkpoints on volume '{name}' ({source}): "
            "without DAC_OVERRIDE root cannot write a directory another user owns unless its "
            "mode lets everyone write, as is common on shared storage",
            "run as the user that owns the volume's directories with security.runAsUser and "
            "runAsGroup, which works under NFS root squashing too; or add DAC_OVERRIDE to "
            "security.capabilities.add, which Pod Security baseline allows",
        )


ROOT_VOLUME_OWNER = SpecRule(
    "root-volume-owner",
    "a root training container with every capability dropped (the restricted profile) that "
    "saves its checkpoints on shared storage (`nfs`, `efs`, `cephfs`, `claim`) is warned that "
    "it cannot write directories another user owns",
    explanation=(
        "Root with `capabilities.drop: [ALL]`, which `security.restricted` (the default) writes, "
        "has no CAP_DAC_OVERRIDE, CAP_CHOWN or CAP_FOWNER: it cannot write a directory another "
        "user owns without group or other write permission, as an NFS export or an existing "
        "claim often holds, and the ranks fail at their first checkpoint. Only the checkpoint "
        "volume is checked: every rank writes there, while a volume that is not `readOnly` is "
        "no sign the job writes to it. A warning: paddlegen cannot see who owns the "
        "directories. The fix it proposes first is to run as the user "
        "who owns them (`security.runAsUser`): that keeps the restricted profile, and works "
        "where an NFS server maps root to nobody (root squashing), which DAC_OVERRIDE would not "
        "get past; adding `DAC_OVERRIDE` is the other way, where the storage keeps root root."
    ),
    severity="warning",
    silenceable=True,
    check=_root_volume_owner,
)
