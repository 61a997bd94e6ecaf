"""The spec's volumes: sources, sizes, names, mounts, and what their objects become."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from paddlegen.rules.shared import MAX_INT64, SIZED_SOURCES
from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.model import (
    CEPHFS_CSI_DRIVER,
    CLAIM_SOURCES,
    OBJECT_SOURCES,
    PV_SOURCES,
    VOLUME_SOURCES,
    default_access_modes,
)
from paddlegen.spec.quantity import server_value, spelling
from paddlegen.spec.rule import Context, Finding, SpecRule, init_containers, mount_point, pod_count


def _sources(ctx: Context) -> Iterator[tuple[int, dict[str, Any], list[str]]]:
    """Each volume, with its index and the sources it names (one, unless volume-source says)."""
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        yield i, volume, [s for s in VOLUME_SOURCES if s in volume]


def _one_source(ctx: Context) -> Iterator[Finding]:
    for i, _, sources in ctx.once(_sources):
        if len(sources) != 1:
            found = ", ".join(sources) or "none"
            yield ctx.finding(
                ("spec", "volumes", i),
                f"a volume needs exactly one source, found {found}",
                "one of: " + ", ".join(VOLUME_SOURCES),
            )


VOLUME_SOURCE = SpecRule(
    "volume-source",
    "a volume has exactly one source",
    explanation=(
        "A volume is one of `nfs`, `efs`, `cephfs`, `hostPath`, `claim`, `dynamic`, `emptyDir`, "
        "`configMap` or `secret`. With none or several, paddlegen cannot tell what to render, so "
        "this rule cannot be silenced."
    ),
    severity="error",
    silenceable=False,
    check=_one_source,
)


def _capacity(ctx: Context) -> Iterator[Finding]:
    """A sized volume has a capacity the API server takes for a claim's storage request (and a
    PersistentVolume's capacity): more than zero, at most what Kubernetes can hold."""
    for i, volume, sources in ctx.once(_sources):
        here: FieldPath = ("spec", "volumes", i)
        if len(sources) != 1 or sources[0] not in SIZED_SOURCES:
            continue  # volume-source says so, or the volume has no size
        if "capacity" not in volume:
            yield ctx.finding(
                here,
                f"a '{sources[0]}' volume needs a capacity",
                "for example capacity: 10Gi",
            )
            continue
        value = server_value(volume["capacity"])
        text = spelling(volume["capacity"])
        if value == 0:
            yield ctx.finding(
                (*here, "capacity"),
                f"capacity '{text}' is zero: the API server wants a claim's storage "
                "request (and a PersistentVolume's capacity) greater than zero",
                "for example capacity: 10Gi",
            )
        elif value > MAX_INT64:
            yield ctx.finding(
                (*here, "capacity"),
                f"capacity '{text}' is more bytes than Kubernetes can hold "
                f"(at most {MAX_INT64}, 8 EiB)",
                "for example capacity: 10Gi",
            )


VOLUME_CAPACITY = SpecRule(
    "volume-capacity",
    "`nfs`, `efs`, `cephfs` and `dynamic` volumes have a capacity, more than zero and at "
    "most 2^63-1 bytes",
    explanation=(
        "paddlegen makes a claim, and for some sources a PersistentVolume, of the size a sized "
        "volume gives. The API server takes only a size above zero that fits in 64 bits: without "
        "one, or with another, nothing can be applied."
    ),
    severity="error",
    silenceable=True,
    check=_capacity,
)


def _first_names(ctx: Context) -> dict[str, int]:
    """Each volume name, with the index of the first volume of that name."""
    names: dict[str, int] = {}
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        names.setdefault(volume["name"], i)
    return names


def _unique(ctx: Context) -> Iterator[Finding]:
    """Volume names and mount points are unique, clear of spec.shm's, and an init container or
    sidecar mounts each path once."""
    yield from _unique_volumes(ctx)
    yield from _unique_mounts(ctx)


def _unique_volumes(ctx: Context) -> Iterator[Finding]:
    names: dict[str, int] = {}
    mounts: dict[str, int] = {}
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        here: FieldPath = ("spec", "volumes", i)
        for key, seen, what in (("name", names, "name"), ("mountPath", mounts, "mountPath")):
            value = volume[key]
            same = mount_point(value) if key == "mountPath" else value
            if same in seen:
                first = ctx.spec["volumes"][seen[same]][key]
                also = f" (as '{first}')" if first != value else ""
                yield ctx.finding(
                    (*here, key),
                    f"volume {what} '{value}' is already used by spec.volumes[{seen[same]}]{also}",
                )
            seen.setdefault(same, i)
    if ctx.spec.get("shm"):
        # spec.shm gives the training pods a Memory emptyDir named 'dshm' at /dev/shm.
        for i, volume in enumerate(ctx.spec.get("volumes", [])):
            if volume["name"] == "dshm":
                yield ctx.finding(
                    ("spec", "volumes", i, "name"),
                    "volume name 'dshm' is taken by the /dev/shm volume spec.shm adds",
                    "rename the volume",
                )
            if mount_point(volume["mountPath"]) == "/dev/shm":
                yield ctx.finding(
                    ("spec", "volumes", i, "mountPath"),
                    "spec.shm already mounts /dev/shm",
                    "set the size with spec.shm, or drop spec.shm to mount your own",
                )


def _unique_mounts(ctx: Context) -> Iterator[Finding]:
    """An init container or sidecar mounts each path once (ValidateVolumeMounts, Kubernetes
    v1.37.2 pkg/apis/core/validation/validation.go:3177-3195)."""
    volumes = {v["name"]: v for v in ctx.spec.get("volumes", [])}
    for place, container in ctx.once(init_containers):
        paths: dict[str, int] = {}
        for i, mount in enumerate(container.get("volumeMounts", [])):
            here: FieldPath = (*place, "volumeMounts", i)
            volume = volumes.get(mount["name"])
            if volume is None:
                continue  # volume-reference says so
            path = mount_point(mount.get("mountPath", volume["mountPath"]))
            if path in paths:
                yield ctx.finding(
                    (*here, "mountPath") if "mountPath" in mount else here,
                    f"{path} is already mounted by "
                    f"{format_path((*place, 'volumeMounts', paths[path]))}",
                    "give it a mountPath of its own",
                )
            paths.setdefault(path, i)


VOLUME_UNIQUE = SpecRule(
    "volume-unique",
    "volume names and mount paths are unique, and clear of `spec.shm`'s; an init container "
    "or sidecar mounts each path once",
    explanation=(
        "Two volumes of one name, or two mounts at one path, make a pod the API server refuses, "
        "and `shm` mounts `/dev/shm` itself. An init container or sidecar that mounts one path "
        "twice is refused the same way."
    ),
    severity="error",
    silenceable=True,
    check=_unique,
)


def _references(ctx: Context) -> Iterator[Finding]:
    """distributed.volume, dataPrep.volume and checkpoint.volume name a volume that can hold
    data; an init
    container's or sidecar's volumeMounts name volumes of spec.volumes."""
    names = _first_names(ctx)
    for section, use in (
        ("distributed", "the trainers read the training data on"),
        ("dataPrep", "the data Job writes the training data on"),
        ("checkpoint", "the ranks save checkpoints on"),
    ):
        ref = ctx.spec.get(section, {}).get("volume")
        if ref is None:
            continue
        if ref not in names:
            yield ctx.finding(
                ("spec", section, "volume"),
                f"no volume named '{ref}' in spec.volumes",
                "defined: " + (", ".join(names) or "none"),
            )
            continue
        source = next((s for s in OBJECT_SOURCES if s in ctx.spec["volumes"][names[ref]]), None)
        if source:
            yield ctx.finding(
                ("spec", section, "volume"),
                f"volume '{ref}' is a {source}: read-only files of one object (at most 1 MiB), "
                f"not a volume {use}",
                "name a volume that holds data (nfs, efs, cephfs, claim, dynamic, hostPath)",
            )
    for place, container in ctx.once(init_containers):
        for i, mount in enumerate(container.get("volumeMounts", [])):
            if mount["name"] not in names:
                yield ctx.finding(
                    (*place, "volumeMounts", i, "name"),
                    f"no volume named '{mount['name']}' in spec.volumes",
                    "defined: " + (", ".join(names) or "none"),
                )


VOLUME_REFERENCE = SpecRule(
    "volume-reference",
    "`distributed.volume`, `dataPrep.volume` and `checkpoint.volume` name a volume, and not "
    "a `configMap` or "
    "`secret` one (read-only files, no place for data); an init container's or sidecar's "
    "`volumeMounts` name volumes of `spec.volumes`",
    explanation=(
        "The settings that name a volume (`distributed.volume`, `dataPrep.volume`, "
        "`checkpoint.volume`) need one that exists and can hold data: a `configMap` or `secret` "
        "volume is read-only. An init container's or sidecar's mounts name volumes of "
        "`spec.volumes`. paddlegen cannot render the job otherwise, so this rule cannot be "
        "silenced."
    ),
    severity="error",
    silenceable=False,
    check=_references,
)


def _cephfs_volumes(ctx: Context) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """The schema holds each form of a cephfs volume to its fields; what it cannot see: that
    the in-tree form no longer works, and whether the CSI form's Secret has a namespace."""
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        cephfs = volume.get("cephfs")
        if isinstance(cephfs, dict):
            yield i, volume, cephfs


def _cephfs_in_tree(ctx: Context) -> Iterator[Finding]:
    for i, volume, cephfs in _cephfs_volumes(ctx):
        if cephfs.get("inTree"):
            yield ctx.finding(
                ("spec", "volumes", i),
                f"volume '{volume['name']}' uses the in-tree CephFS plugin (PV spec.cephfs): "
                "Kubernetes deprecated it in 1.28, and from 1.31 it does nothing (pods cannot "
                "mount the volume)",
                f"use the CephFS CSI driver, {CEPHFS_CSI_DRIVER}: drop inTree, monitors and "
                "user, and set clusterID, fsName and secretName, a Secret with userID and userKey",
            )


CEPHFS_IN_TREE = SpecRule(
    "cephfs-in-tree",
    "no `cephfs` volume asks for the in-tree plugin (`inTree: true`), which does nothing "
    "from Kubernetes 1.31",
    explanation=(
        "Kubernetes removed the in-tree CephFS plugin in 1.31: a volume that asks for it (`inTree: "
        "true`) mounts nothing there, and its pods stay in ContainerCreating. The CSI driver is "
        "the way from then on."
    ),
    severity="warning",
    silenceable=True,
    check=_cephfs_in_tree,
)


def _cephfs_secret_namespace(ctx: Context) -> Iterator[Finding]:
    namespace = ctx.data["metadata"].get("namespace")
    for i, volume, cephfs in _cephfs_volumes(ctx):
        if not cephfs.get("inTree") and "secretNamespace" not in cephfs and not namespace:
            # A cluster-scoped PV names its Secret's namespace. The API server takes a reference
            # without one, but the kubelet then looks the Secret up in no namespace: the volume
            # never mounts.
            yield ctx.finding(
                ("spec", "volumes", i, "cephfs", "secretName"),
                f"the CephFS CSI volume '{volume['name']}' needs the namespace of its Secret "
                f"'{cephfs['secretName']}', and the job has none to default to",
                "set cephfs.secretNamespace (where the Secret is), or metadata.namespace",
            )


CEPHFS_SECRET_NAMESPACE = SpecRule(
    "cephfs-secret-namespace",
    "a CSI `cephfs` volume's Secret has a namespace: `secretNamespace` or `metadata.namespace`",
    explanation=(
        "A CSI CephFS PersistentVolume names the Secret with the Ceph credentials by name and "
        "namespace. Without `secretNamespace`, or a `metadata.namespace` to take it from, the "
        "PersistentVolume cannot name it and the mount fails."
    ),
    severity="error",
    silenceable=True,
    check=_cephfs_secret_namespace,
)


# Access modes that confine a volume to one node (or one pod): several pods cannot share it.
_SINGLE_MOUNT_MODES = {"ReadWriteOnce": "one node", "ReadWriteOncePod": "one pod"}


def _sharing_pods(ctx: Context, volume: dict[str, Any]) -> int:
    """The pods that mount ``volume``: every trainer, and the data Job's if it uses it."""
    data_volume = ctx.spec.get("dataPrep", {}).get("volume")
    return pod_count(ctx) + (1 if volume["name"] == data_volume else 0)


def _access_modes(ctx: Context) -> Iterator[Finding]:
    """Several pods cannot share a volume that one node (or one pod) mounts; and the API
    server refuses ReadWriteOncePod combined with other access modes."""
    data_volume = ctx.spec.get("dataPrep", {}).get("volume")
    for i, volume, sources in ctx.once(_sources):
        modes = volume.get("accessModes", [])
        sized = len(sources) == 1 and sources[0] in SIZED_SOURCES
        if sized and "ReadWriteOncePod" in modes and len(modes) > 1:
            yield ctx.finding(
                ("spec", "volumes", i, "accessModes"),
                "ReadWriteOncePod cannot be combined with other access modes: the API "
                "server refuses the claim"
                + (" and the PersistentVolume" if sources[0] in PV_SOURCES else ""),
                "keep ReadWriteOncePod alone, or drop it",
            )
        single = [m for m in modes if m in _SINGLE_MOUNT_MODES]
        if not single or "ReadWriteMany" in modes or not any(s in volume for s in CLAIM_SOURCES):
            continue
        pods = _sharing_pods(ctx, volume)
        if pods > 1:
            data = " including the data Job" if volume["name"] == data_volume else ""
            yield ctx.finding(
                ("spec", "volumes", i, "accessModes"),
                f"{single[0]} lets only "
                f"{_SINGLE_MOUNT_MODES[single[0]]} mount volume '{volume['name']}', "
                f"but {pods} pods{data} share it; the others cannot mount it",
                "use accessModes: [ReadWriteMany] (NFS, EFS and CephFS support it)",
                severity="warning",
            )


VOLUME_ACCESS_MODE = SpecRule(
    "volume-access-mode",
    "`ReadWriteOncePod` stands alone; no `ReadWriteOnce` volume shared by several pods",
    explanation=(
        "The API server refuses `ReadWriteOncePod` combined with other access modes (an error). A "
        "`ReadWriteOnce` volume mounts on one node: several pods of the job sharing it would wait "
        "for one another (a warning)."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_access_modes,
)


def _rwx_default_class(ctx: Context) -> Iterator[Finding]:
    """A `dynamic` claim for ReadWriteMany (asked for, or the default for a shared volume) on
    the cluster's default StorageClass: the default classes of the clouds and of local
    storage are block or node-local volumes that cannot provide it (EBS, Persistent Disk,
    Azure Disk, local-path), so the claim stays Pending, and so do the pods, while Kueue holds
    the job's quota."""
    for i, volume, sources in ctx.once(_sources):
        named = volume.get("dynamic", {}).get("storageClassName") or "storageClassName" in volume
        if sources != ["dynamic"] or named:
            continue
        pods = _sharing_pods(ctx, volume)
        modes = volume.get("accessModes", default_access_modes("dynamic", pods))
        if "ReadWriteMany" not in modes:
            continue
        why = "asks for" if "accessModes" in volume else f"is shared by {pods} pods, so asks for"
        yield ctx.finding(
            ("spec", "volumes", i, "dynamic"),
            f"volume '{volume['name']}' {why} ReadWriteMany from the cluster's default "
            "StorageClass, which on most clusters cannot provide it (EBS, Persistent Disk, "
            "Azure Disk, local-path): the claim and the pods would stay Pending",
            "set dynamic.storageClassName to a class that provides ReadWriteMany, such as an "
            "NFS, EFS, CephFS, Filestore or Azure Files one; or use an nfs, efs or cephfs volume",
        )


RWX_STORAGE_CLASS = SpecRule(
    "rwx-storage-class",
    "a `dynamic` volume that asks for `ReadWriteMany` (given, or the default for a volume "
    "several pods share) names the StorageClass that provides it: most default classes "
    "(EBS, Persistent Disk, Azure Disk, local-path) cannot, and the claim stays Pending",
    explanation=(
        "Most default StorageClasses (EBS, Persistent Disk, Azure Disk, local-path) cannot provide "
        "`ReadWriteMany`. A `dynamic` volume that asks for it on the default class leaves the "
        "claim, and the pods, Pending."
    ),
    severity="warning",
    silenceable=True,
    check=_rwx_default_class,
)


def _recycle(ctx: Context) -> Iterator[Finding]:
    """The PersistentVolumes volumes become are not recycled: the API server warns."""
    for i, volume, sources in ctx.once(_sources):
        if len(sources) != 1 or sources[0] not in PV_SOURCES:
            continue
        source = sources[0]
        if volume.get("reclaimPolicy") == "Recycle":
            cannot = (
                ", and Kubernetes recycles only NFS and hostPath volumes: the released "
                f"{source} volume would fail to recycle"
                if source == "cephfs"
                else ""
            )
            yield ctx.finding(
                ("spec", "volumes", i, "reclaimPolicy"),
                "reclaimPolicy Recycle is deprecated (the API server warns about it): it "
                f"empties the volume with rm -rf for the next claim{cannot}",
                "use Retain and clean up yourself, or a dynamic volume, which its StorageClass "
                "deletes",
            )


NFS_RECYCLE = SpecRule(
    "nfs-recycle",
    "no `reclaimPolicy: Recycle` (deprecated upstream; the recycler handles only NFS) on a "
    "volume paddlegen makes a PersistentVolume for",
    explanation=(
        "The `Recycle` reclaim policy is deprecated upstream and works for NFS only; the API "
        "server warns about it. `Retain` or `Delete` say what happens to the data."
    ),
    severity="warning",
    silenceable=True,
    check=_recycle,
)


def _pv_binding(ctx: Context) -> Iterator[Finding]:
    """A PersistentVolume that nothing keeps for its claim: without a namespace it has no
    `claimRef`, and a class the spec names may be requested by other claims (without one,
    paddlegen gives the PV a class of its own: spec/model.py _own_class)."""
    if ctx.data.get("metadata", {}).get("namespace"):
        return
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        if "storageClassName" in volume and any(s in volume for s in PV_SOURCES):
            named = volume["storageClassName"]
            yield ctx.finding(
                ("spec", "volumes", i, "storageClassName"),
                "without a namespace the PersistentVolume is not pre-bound to its claim "
                "(claimRef needs one), so any claim that requests storageClassName "
                f"'{named}'{' (no class)' if not named else ''} may bind it first",
                "set metadata.namespace, and the PV is pre-bound; or leave storageClassName "
                "out, and the PV gets a class of its own that only its claim requests",
            )


PV_BINDING = SpecRule(
    "pv-binding",
    "in a spec without a namespace, a volume paddlegen makes a PersistentVolume for (`nfs`,"
    " `efs`, `cephfs`) names no `storageClassName`: the PV has no `claimRef` (it needs the "
    "namespace), so other claims of the class named could bind it first (without "
    '`storageClassName` the PV gets a class of its own; see "Workloads")',
    explanation=(
        "Without a namespace, a PersistentVolume paddlegen makes has no `claimRef` keeping it for "
        "its claim. If the volume names a `storageClassName`, another claim of that class could "
        "bind it first."
    ),
    severity="warning",
    silenceable=True,
    check=_pv_binding,
)


def _host_paths(ctx: Context) -> Iterator[Finding]:
    """A hostPath names its directory without '..' (validatePathNoBacksteps)."""
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        path = volume.get("hostPath", {}).get("path")
        if path is not None and ".." in path.split("/"):
            yield ctx.finding(
                ("spec", "volumes", i, "hostPath", "path"),
                f"hostPath '{path}' steps up with '..', which the API server refuses",
                "write the directory without '..'",
            )


HOST_PATH = SpecRule(
    "host-path",
    "a `hostPath` has no `..` in it",
    explanation="The API server refuses a `hostPath` with a `..` in it.",
    severity="error",
    silenceable=True,
    check=_host_paths,
)


def _checkpoint_volume(ctx: Context) -> Iterator[Finding]:
    """The checkpoint volume must outlive the pods and take every rank's writes; a hostPath
    is each node's own, so ranks on other nodes (or on another node after a restart) do not
    find what rank 0 saved."""
    ref = ctx.spec.get("checkpoint", {}).get("volume")
    path = ctx.spec.get("checkpoint", {}).get("path", "")
    # Normalised, the folder stays on the volume: the schema's pattern refuses a '..' step,
    # but its lookahead stops at a line break ("x\n/../../etc" is /etc beside the mount).
    if ".." in path.split("/"):
        yield ctx.finding(
            ("spec", "checkpoint", "path"),
            f"checkpoint.path {path!r} steps out of volume '{ref}' with '..' (normalised: "
            f"{posixpath.normpath(path)!r})",
            "name a folder inside the volume, relative, without '..'",
        )
    names = _first_names(ctx)
    if ref not in names:
        return  # volume-reference says so
    volume = ctx.spec["volumes"][names[ref]]
    at = ("spec", "checkpoint", "volume")
    if "emptyDir" in volume:
        yield ctx.finding(
            at,
            f"volume '{ref}' is an emptyDir: it is deleted with its pod, so a job that "
            "starts again finds no checkpoint",
            "name a volume that outlives the pods (nfs, efs, cephfs, claim, dynamic)",
        )
    elif volume.get("readOnly"):
        yield ctx.finding(
            at,
            f"volume '{ref}' is mounted readOnly: the ranks cannot save checkpoints on it",
            f"drop readOnly from volume '{ref}'",
        )
    elif "hostPath" in volume and pod_count(ctx) > 1:
        yield ctx.finding(
            at,
            f"volume '{ref}' is a hostPath, each node's own: a rank on another node, or on "
            "another node after a restart, does not find the checkpoint",
            "use a volume every node mounts (nfs, efs, cephfs, a ReadWriteMany claim)",
            severity="warning",
        )


CHECKPOINT_VOLUME = SpecRule(
    "checkpoint-volume",
    "`checkpoint.volume` outlives the pods and can be written: not an `emptyDir` nor "
    "`readOnly` (errors), nor a `hostPath` shared by several pods (warning); "
    "`checkpoint.path` stays inside it (no `..` step)",
    explanation=(
        "The checkpoint volume must outlive the pods and take every rank's writes: an `emptyDir` "
        "or a `readOnly` volume cannot (errors). A `hostPath` is each node's own, so ranks on "
        "other nodes do not find what rank 0 saved (a warning). `checkpoint.path` is a folder "
        "inside the volume: a `..` step would leave it (an error)."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_checkpoint_volume,
)
