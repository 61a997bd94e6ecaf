"""Which lists kustomize merges by key when it applies a strategic-merge patch, and by which.

kustomize v5.7.1 applies such a patch with kyaml's merge2 (api/filters/patchstrategicmerge/
patchstrategicmerge.go:21-27 at kustomize/v5.7.1). A list is merged element by element only
when its schema says `x-kubernetes-patch-strategy: merge` (kyaml/yaml/schema/schema.go:16-24);
merge2 never infers a key from the elements (kyaml/yaml/merge2/merge2.go:15-19 leaves
InferAssociativeLists unset). The only schema it knows is its built-in Kubernetes 1.21.2 one
(kyaml/openapi/openapi.go:580): every list of a custom resource, and every field newer than
Kubernetes 1.21, is replaced whole.

The table lists those merged lists for the built-in kinds paddlegen writes, as kyaml v0.20.1
(kustomize v5.7.1's) reports them through `openapi.SchemaForResourceType` and
`PatchStrategyAndKeyList`: every other list of these kinds is replaced whole.
"""

from __future__ import annotations

from collections.abc import Mapping

Path = tuple[str, ...]  # field names from the object's root; "[]" steps into a list's elements
Keys = tuple[str, ...]  # () for a list of scalars merged by value (metadata.finalizers)

_OBJECT_META: dict[Path, Keys] = {("finalizers",): (), ("ownerReferences",): ("uid",)}
_CONTAINER: dict[Path, Keys] = {
    ("env",): ("name",),
    ("ports",): ("containerPort", "protocol"),
    ("volumeDevices",): ("devicePath",),
    ("volumeMounts",): ("mountPath",),
}
_POD_SPEC: dict[Path, Keys] = {
    ("hostAliases",): ("ip",),
    ("imagePullSecrets",): ("name",),
    ("topologySpreadConstraints",): ("topologyKey", "whenUnsatisfiable"),
    ("volumes",): ("name",),
    **{
        (containers, *sub): keys
        for containers in ("containers", "initContainers", "ephemeralContainers")
        for sub, keys in {(): ("name",), **{("[]", *p): k for p, k in _CONTAINER.items()}}.items()
        # an ephemeral container's ports (which the API refuses) had no strategy in 1.21
        if (containers, *sub) != ("ephemeralContainers", "[]", "ports")
    },
    **{
        ("volumes", "[]", "ephemeral", "volumeClaimTemplate", "metadata", *p): k
        for p, k in _OBJECT_META.items()
    },
}


def _at(prefix: Path, table: Mapping[Path, Keys]) -> dict[Path, Keys]:
    return {(*prefix, *path): keys for path, keys in table.items()}


_POD_TEMPLATE = {**_at(("metadata",), _OBJECT_META), **_at(("spec",), _POD_SPEC)}

# (apiVersion, kind) -> merged lists. A built-in kind missing here would have its merged lists
# replaced whole: tests/unit/test_merge_keys.py fails for any kind paddlegen writes that is
# neither listed nor a custom resource.
MERGED_LISTS: dict[tuple[str, str], dict[Path, Keys]] = {
    ("batch/v1", "Job"): {
        **_at(("metadata",), _OBJECT_META),
        **_at(("spec", "template"), _POD_TEMPLATE),
    },
    ("v1", "Service"): {
        **_at(("metadata",), _OBJECT_META),
        ("spec", "ports"): ("port", "protocol"),
    },
    ("v1", "ServiceAccount"): {**_at(("metadata",), _OBJECT_META), ("secrets",): ("name",)},
    **{
        (api_version, kind): _at(("metadata",), _OBJECT_META)
        for api_version, kind in (
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "PersistentVolume"),
            ("v1", "PersistentVolumeClaim"),
            ("rbac.authorization.k8s.io/v1", "Role"),
            ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        )
    },
}


def merged_lists(api_version: str, kind: str) -> Mapping[Path, Keys]:
    """The lists kustomize merges by key in an object of this kind; empty for the rest (custom
    resources), whose lists a patch replaces whole."""
    return MERGED_LISTS.get((api_version, kind), {})
