"""`paddlegen import`: a pod's volumes, and the claims and PVs behind them, back to spec volumes."""

from __future__ import annotations

import json
import re
from typing import Any

from paddlegen.spec.model import CEPHFS_CSI_DRIVER, EFS_CSI_DRIVER, EFS_MOUNT_OPTIONS
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_positions import FieldPath

# Where the input holds each of a pod's volumes, by the volume's id().
Placed = dict[int, FieldPath]
EFS_SERVER = re.compile(r"^(fs-[0-9a-f]+)\.efs\.([a-z0-9-]+)\.amazonaws\.com$")
EFS_HANDLE = re.compile(r"^fs-[0-9a-f]+(:/[^:]*)?$")
# The capacity of an NFS export a pod mounted inline, which the spec's PV must name: a
# placeholder, since Kubernetes enforces no NFS volume's capacity (it only matches a claim to
# a PV by it, and paddlegen binds the two by name).
INLINE_NFS_CAPACITY = "1Gi"


def pod_volumes(
    container: dict[str, Any], spec: dict[str, Any], ctx: Context, where: str, at: FieldPath
) -> tuple[list[dict[str, Any]], Any]:
    """The spec volumes the training container mounts, and the /dev/shm size (popped); a volume
    without a spec form is noted and dropped. ``at``: the pod's volumes in the object, where
    the notes on each one are."""
    mounts = {m.get("name"): m for m in container.get("volumeMounts", [])}
    # the first init container or sidecar mount of each volume
    others: dict[str, dict[str, Any]] = {}
    for init in spec.get("initContainers", []):
        for mount in init.get("volumeMounts", []):
            if isinstance(mount, dict) and mount.get("mountPath"):
                others.setdefault(str(mount.get("name")), mount)
    volumes: list[dict[str, Any]] = []
    shm = None
    # each volume's index in the input, for its notes
    placed = {id(v): (*at, i) for i, v in enumerate(spec.get("volumes", []))}
    _drop_repeated_volumes(spec, ctx, where, placed)
    for i, volume in reversed(list(enumerate(spec.get("volumes", [])))):
        mount = mounts.get(volume.get("name"))
        if mount is None and volume.get("name") in others:
            entry = _borrowed_volume(volume, others[volume["name"]], ctx, where, placed)
            if entry is not None:
                volumes.insert(0, entry)
                spec["volumes"].pop(i)
            continue
        if mount is None:
            continue  # not mounted into the training container: dropped below
        empty = volume.get("emptyDir", {})
        if (
            mount.get("mountPath") == "/dev/shm"
            and empty.get("medium") == "Memory"
            and "sizeLimit" in empty
            and len(volume) == 2
        ):
            shm = empty["sizeLimit"]
        else:
            source = _source(volume, ctx, where, placed)
            if source is None:
                continue
            # no mountPath (a runtime patch's template is not typed): the spec's to refuse
            entry = {"name": volume["name"], "mountPath": mount.get("mountPath"), **source}
            if mount.get("readOnly"):
                entry["readOnly"] = True
            volumes.insert(0, entry)
        for key in ("name", "mountPath", "readOnly"):
            mount.pop(key, None)
        if not mount:  # a subPath or mountPropagation stays, and is listed
            container["volumeMounts"].remove(mount)
        spec["volumes"].pop(i)
    for volume in spec.pop("volumes", []):
        _drop_volume(volume, mounts.get(volume.get("name")), container, ctx, where, placed)
    if not container.get("volumeMounts", True):
        container.pop("volumeMounts")
    return volumes, shm


def _borrowed_volume(
    volume: dict[str, Any], mount: dict[str, Any], ctx: Context, where: str, placed: Placed
) -> dict[str, Any] | None:
    """A volume only init containers or sidecars mount, as a spec volume (at the first one's
    mountPath), or None when it has no spec form: the spec mounts every volume into the
    training container too, which is noted."""
    source = _source(volume, ctx, where, placed)
    if source is None:
        return None
    entry = {"name": volume["name"], "mountPath": mount["mountPath"], **source}
    if mount.get("readOnly"):
        entry["readOnly"] = True
    ctx.note(
        LOSSY,
        where,
        f"volume '{volume['name']}' is now also mounted into the training container, at "
        f"{mount['mountPath']}: the spec mounts every volume into it (only init containers or "
        "sidecars did)",
        at=placed[id(volume)],
    )
    return entry


def _drop_repeated_volumes(spec: dict[str, Any], ctx: Context, where: str, placed: Placed) -> None:
    """Every volume of a name an earlier one has (the API refuses them: "Duplicate value"),
    with a note: one volume of a name, one mount."""
    if "volumes" not in spec:
        return
    seen: set[Any] = set()
    kept = []
    for volume in spec["volumes"]:
        name = volume.get("name")
        if name in seen:
            ctx.note(
                LOSSY,
                where,
                f"volume '{name}' is given twice: the second is not carried over",
                at=placed[id(volume)],
            )
        else:
            kept.append(volume)
        seen.add(name)
    spec["volumes"] = kept


def _drop_volume(
    volume: dict[str, Any],
    mount: dict[str, Any] | None,
    container: dict[str, Any],
    ctx: Context,
    where: str,
    placed: Placed,
) -> None:
    """One note for a pod volume the spec cannot carry, and its mount removed with it."""
    source = ", ".join(sorted(set(volume) - {"name"})) or "no source"
    if mount is None:
        reason = "the training container does not mount it"
    else:
        container["volumeMounts"].remove(mount)
        reason = f"mounted at {mount.get('mountPath')}, it has no spec volume form"
    ctx.note(
        LOSSY,
        where,
        f"volume '{volume.get('name')}' ({source}) is not carried over: {reason}",
        at=placed[id(volume)],
    )


def _source(
    volume: dict[str, Any], ctx: Context, where: str, placed: Placed
) -> dict[str, Any] | None:
    """The spec volume fields for a pod volume, or None (left in place) if it has no spec form."""
    kinds = set(volume) - {"name"}
    if kinds in ({"hostPath"}, {"emptyDir"}, {"configMap"}, {"secret"}):
        return {k: volume[k] for k in kinds}
    if kinds == {"nfs"} and _inline_nfs(volume["nfs"]):
        return _nfs_source(volume, ctx, where, placed[id(volume)])
    claim = volume.get("persistentVolumeClaim", {})
    if kinds != {"persistentVolumeClaim"} or not set(claim) <= {"claimName", "readOnly"}:
        return None
    name = claim["claimName"]
    if name not in ctx.claims:
        ctx.claims[name] = _claim_source(name, ctx)
    source, pv_name = ctx.claims[name]
    ctx.storage_names.setdefault(volume["name"], (name, pv_name))
    return {**source, **({"readOnly": True} if claim.get("readOnly") else {})}


def _inline_nfs(nfs: Any) -> bool:
    """Whether a pod's inline nfs volume is one the spec's nfs volume mounts alike."""
    return (
        isinstance(nfs, dict)
        and set(nfs) <= {"server", "path", "readOnly"}
        and all(isinstance(nfs.get(key), str) and nfs[key] for key in ("server", "path"))
        and nfs.get("readOnly", False) in (True, False)
    )


def _nfs_source(volume: dict[str, Any], ctx: Context, where: str, at: FieldPath) -> dict[str, Any]:
    """An inline NFS export as the spec's nfs volume, which mounts the same export through a
    PersistentVolume and a claim bound to it (said in a note)."""
    nfs = volume["nfs"]
    ctx.note(
        COSMETIC,
        where,
        f"volume '{volume['name']}' (nfs {nfs['server']}:{nfs['path']}) becomes the spec's nfs "
        "volume: the pods mount the same export through a PersistentVolume and a claim bound "
        f"to it, whose capacity {INLINE_NFS_CAPACITY} is a placeholder (Kubernetes enforces no "
        "NFS volume's capacity); creating the PersistentVolume takes a cluster-wide permission",
        at=(*at, "nfs"),
    )
    source = {"nfs": {"server": nfs["server"], "path": nfs["path"]}}
    return {
        **source,
        "capacity": INLINE_NFS_CAPACITY,
        **({"readOnly": True} if nfs.get("readOnly") else {}),
    }


def _claim_source(name: str, ctx: Context) -> tuple[dict[str, Any], str | None]:
    """The volume source behind a claim: its PV's (nfs, efs, cephfs), dynamic, or the claim."""
    label = f"PersistentVolumeClaim/{name}"
    pvc = ctx.pvcs.get(name)
    if pvc is None:
        return {"claim": {"name": name}}, None
    spec = pvc.setdefault("spec", {})
    pv_name = spec.get("volumeName") or next(
        (
            n
            for n, pv in ctx.pvs.items()
            if pv.get("spec", {}).get("claimRef", {}).get("name") == name
        ),
        None,
    )
    only = next(iter(ctx.pvs.items())) if len(ctx.pvs) == 1 else None
    if pv_name is None and only is not None and _free_for(name, *only, ctx):
        pv_name = only[0]
        ctx.note(
            COSMETIC,
            label,
            f"bound to PersistentVolume/{pv_name}, the only one in the input (the "
            "cluster would match them by size and access mode)",
        )
    pv = ctx.pvs.get(pv_name or "")
    if pv is not None and _pv_kind(pv.get("spec", {})) is None:
        return {"claim": {"name": name}}, None  # a PV source paddlegen cannot make: both listed
    ctx.consumed.append((label, ctx.pvcs.pop(name)))
    take(spec, "volumeName")
    if spec.get("volumeMode") == "Filesystem":
        take(spec, "volumeMode")  # the default
    requested = take(spec, "resources", "requests", "storage")
    modes, storage_class = take(spec, "accessModes"), take(spec, "storageClassName")
    if pv is None:
        dynamic = {"storageClassName": storage_class} if storage_class else {}
        return {
            "dynamic": dynamic,
            "capacity": requested,
            **({"accessModes": modes} if modes else {}),
        }, None
    source = _pv_source(pv_name or "", pv, ctx)
    for what, mine, theirs in (
        ("requests.storage", requested, source.get("capacity")),
        ("accessModes", modes, source.get("accessModes")),
        ("storageClassName", storage_class or None, source.get("storageClassName")),
    ):
        if mine is not None and mine != theirs:
            ctx.note(
                COSMETIC,
                label,
                f"{what} {json.dumps(mine)} differs from the PersistentVolume's "
                f"{json.dumps(theirs)}; the PersistentVolume's value serves both",
            )
    return source, pv_name


def _free_for(claim: str, pv_name: str, pv: dict[str, Any], ctx: Context) -> bool:
    """Whether the cluster could bind ``claim`` to the PV ``pv_name``: no other claim of the
    input names it (``volumeName``) and it is not pre-bound to another (``claimRef``)."""
    bound_to = pv.get("spec", {}).get("claimRef", {}).get("name")
    named = any(
        other != claim and pvc.get("spec", {}).get("volumeName") == pv_name
        for other, pvc in ctx.pvcs.items()
    )
    return not named and bound_to in (None, claim)


def _pv_kind(spec: dict[str, Any]) -> str | None:
    """The PV source paddlegen makes that ``spec`` has (nfs also for EFS over NFS; efs: a
    volume of the EFS CSI driver; csi: a static volume of the CephFS CSI driver, with every
    field paddlegen writes), or None."""
    for kind in ("nfs", "cephfs"):
        if isinstance(spec.get(kind), dict):
            return kind
    csi = spec.get("csi")
    if isinstance(csi, dict) and csi.get("driver") == EFS_CSI_DRIVER:
        # <fileSystemId>[:<path>]; an access point (fs-..::fsap-..) has no spec form
        plain = set(csi) <= {"driver", "volumeHandle", "readOnly"}
        return "efs" if plain and EFS_HANDLE.match(csi.get("volumeHandle", "")) else None
    if not isinstance(csi, dict) or csi.get("driver") != CEPHFS_CSI_DRIVER:
        return None
    attributes = csi.get("volumeAttributes", {})
    static = attributes.get("staticVolume") == "true"
    fields = all(attributes.get(k) for k in ("clusterID", "fsName", "rootPath"))
    return "csi" if static and fields and csi.get("nodeStageSecretRef", {}).get("name") else None


def _pv_source(name: str, pv: dict[str, Any], ctx: Context) -> dict[str, Any]:
    ctx.consumed.append((f"PersistentVolume/{name}", ctx.pvs.pop(name)))
    spec = pv["spec"]
    kind = _pv_kind(spec) or "nfs"
    out: dict[str, Any] = {}
    if kind == "csi":
        out["cephfs"] = _cephfs_csi(name, spec, ctx)
        fields = {"readOnly": take(spec, "csi", "readOnly")}
    elif kind == "efs":
        fs_id, _, path = take(spec, "csi", "volumeHandle").partition(":")
        take(spec, "csi", "driver")
        out["efs"] = {"fileSystemId": fs_id, "path": path or "/"}
        fields = {"readOnly": take(spec, "csi", "readOnly")}
    else:
        present = [k for k in ("server", "path", "monitors", "user", "readOnly") if k in spec[kind]]
        fields = {key: take(spec, kind, key) for key in present}
        secret = take(spec, kind, "secretRef", "name")
        secret_namespace = take(spec, kind, "secretRef", "namespace")
        efs = EFS_SERVER.match(fields["server"]) if kind == "nfs" else None
        if efs:
            out["efs"] = {"fileSystemId": efs[1], "region": efs[2], "path": fields.get("path", "/"),
                          "nfs": True}  # fmt: skip
        elif kind == "nfs":
            out["nfs"] = {"server": fields["server"], "path": fields["path"]}
        else:
            out["cephfs"] = {
                "inTree": True,
                **{k: fields[k] for k in ("monitors", "user", "path") if k in fields},
            }
            if secret:
                out["cephfs"]["secretName"] = secret
            if secret_namespace:
                out["cephfs"]["secretNamespace"] = secret_namespace
    if fields.get("readOnly"):
        out["readOnly"] = True
    out["capacity"] = take(spec, "capacity", "storage")
    out["accessModes"] = take(spec, "accessModes")
    if spec.get("volumeMode") == "Filesystem":
        take(spec, "volumeMode")
    policy = take(spec, "persistentVolumeReclaimPolicy")
    if policy != "Retain":
        out["reclaimPolicy"] = policy
    out["storageClassName"] = take(spec, "storageClassName") or None
    options = take(spec, "mountOptions")
    if not (out.get("efs", {}).get("nfs") and options == EFS_MOUNT_OPTIONS):
        out["mountOptions"] = options
    if spec.get("claimRef", {}).get("name"):
        take(spec, "claimRef")  # paddlegen binds the PV to its own claim
    return {k: v for k, v in out.items() if v is not None}


def _cephfs_csi(name: str, spec: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The cephfs fields of a static CephFS CSI volume (``_pv_kind`` checked they are there)."""
    take(spec, "csi", "driver")
    handle = take(spec, "csi", "volumeHandle")
    if handle != name:
        ctx.note(
            COSMETIC,
            f"PersistentVolume/{name}",
            f"volumeHandle {json.dumps(handle)} not kept: paddlegen uses the "
            "PersistentVolume's name as the handle, unique among the driver's volumes",
        )
    take(spec, "csi", "volumeAttributes", "staticVolume")
    out = {
        "clusterID": take(spec, "csi", "volumeAttributes", "clusterID"),
        "fsName": take(spec, "csi", "volumeAttributes", "fsName"),
        "secretName": take(spec, "csi", "nodeStageSecretRef", "name"),
        "path": take(spec, "csi", "volumeAttributes", "rootPath"),
    }
    namespace = take(spec, "csi", "nodeStageSecretRef", "namespace")
    if namespace and namespace != ctx.namespace:
        out["secretNamespace"] = namespace
    return out
