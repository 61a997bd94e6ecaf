"""Hypothesis strategies for TrainingJob specs: from the published schema, plausible, broken."""

from __future__ import annotations

import copy
import json
import posixpath
import re
import types
from functools import cache
from typing import Any

from hypothesis import strategies as st

from paddlegen.resources import spec_schema_path
from paddlegen.spec.overlays import deep_merge
from paddlegen.spec.quantity import server_value
from paddlegen.spec.secrets import is_secret_name
from paddlegen.workloads import DEFAULT_WORKLOAD
from paddlegen.workloads import WORKLOADS as REGISTRY
from paddlegen.workloads.collective_job.contract import CONTRACT_ENV

# Volume fields whose absence the templates cannot render yet: the generators always set them.
# Empty since the PVC (dynamic without storageClassName) and PV (in-tree cephfs without
# secretName) templates were fixed; test_regressions.py pins both.
KNOWN_TEMPLATE_BUGS: dict[str, str] = {}

# --- from the published schema --------------------------------------------------------------

# Every keyword the published schema may use for hypothesis-jsonschema to generate from it.
# A keyword outside this set (unevaluatedProperties, dependentRequired, if/then, ...) fails
# the helper loudly instead of being silently ignored by the generator.
_GENERATED_KEYWORDS = {
    "$schema",
    "$ref",
    "type",
    "properties",
    "additionalProperties",
    "required",
    "propertyNames",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "enum",
    "const",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "definitions",
    # a cephfs volume's two forms (draft-07 has them too)
    "if",
    "then",
    "else",
    "not",
    "anyOf",
}
_ANNOTATIONS = {
    "$id",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
    "x-error",
    "x-hint",
    "x-unknown",
}


def _convert(node: Any, under_properties: bool = False) -> Any:
    """Draft 2020-12 -> the draft-07 subset hypothesis-jsonschema knows, annotations dropped."""
    if isinstance(node, list):
        return [_convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if under_properties:  # keys of `properties` are field names, not keywords
            out[key] = _convert(value)
            continue
        if key in _ANNOTATIONS:
            continue
        if key not in _GENERATED_KEYWORDS and key != "$defs":
            raise AssertionError(f"schema keyword {key!r}: teach tests/property/strategies.py")
        if key == "$ref":
            value = value.replace("#/$defs/", "#/definitions/")
        out["definitions" if key == "$defs" else key] = _convert(
            value, under_properties=key in ("properties", "$defs")
        )
    return out


@cache
def generator_schema(image_required: bool = False) -> dict[str, Any]:
    """The published schema as hypothesis-jsonschema can generate from it.

    Affinity is copied into the pods unchecked by design (kubeconform checks it), so random
    content there is meant to fail kubeconform; the generator makes only empty affinity terms.
    With ``image_required``, spec.image is always set: most other documents fail the
    image-required check, so few would reach the renderer. The generator writes no ``ignore``
    entries: a silenced error renders what the spec says, which need not be valid
    (tests/cli/test_ignore.py covers silencing).
    """
    schema = _convert(json.loads(spec_schema_path().read_text(encoding="utf-8")))
    del schema["properties"]["ignore"]
    if image_required:
        schema["definitions"]["spec"]["required"] = ["image"]
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    for term in schema["definitions"]["affinity"]["properties"].values():
        term["maxProperties"] = 0
    sources = schema["definitions"]["volume"]["properties"]
    for source, field in KNOWN_TEMPLATE_BUGS.items():
        sources[source]["required"] = [*sources[source].get("required", []), field]
    return schema


def _patch_hypothesis_jsonschema() -> None:
    """Three patches of hypothesis-jsonschema 0.23 internals, for this test helper only.

    ``from_schema`` inlines every $ref and canonicalises each copy again, recursively: with
    the container definitions that init containers and sidecars share (three probes each,
    spec-wide and per role) that took over two minutes of CPU per strategy, paid when a test
    module is imported. ``canonicalish`` is a pure function of its schema, so its results are
    memoised by canonical JSON (handed out as copies, as callers may change them): 12 s. It
    also canonicalises and rebuilds the strategy of every property value on every draw, about
    80% of a draw's time: strategies are immutable, so one per schema is memoised. And it
    calls ``many.more()``, which Hypothesis 6.1xx replaced by ``with many(...) as elements:
    for _ in elements``; give it the old interface back.
    """
    from hypothesis.internal.conjecture import utils as cu
    from hypothesis_jsonschema import _canonicalise, _from_schema, _resolve
    from hypothesis_jsonschema._encode import encode_canonical_json

    if getattr(_from_schema, "_paddlegen_patched", False):
        return
    _from_schema._paddlegen_patched = True  # type: ignore[attr-defined]
    canonicalish = _canonicalise.canonicalish
    canonical: dict[str, Any] = {}

    def memoised_canonicalish(schema: Any) -> Any:
        key = encode_canonical_json(schema)
        if key not in canonical:
            canonical[key] = canonicalish(schema)
        return copy.deepcopy(canonical[key])

    # Each module bound the name at import: the recursion goes through _canonicalise's.
    for module in (_canonicalise, _resolve, _from_schema):
        module.canonicalish = memoised_canonicalish  # type: ignore[attr-defined]
    build = _from_schema.merged_as_strategies
    built: dict[Any, Any] = {}

    def merged_as_strategies(schemas: list[Any], *, alphabet: Any, custom_formats: Any) -> Any:
        key = (tuple(encode_canonical_json(s) for s in schemas), id(alphabet), id(custom_formats))
        if key not in built:
            built[key] = build(schemas, alphabet=alphabet, custom_formats=custom_formats)
        return built[key]

    _from_schema.merged_as_strategies = merged_as_strategies
    if hasattr(cu.many, "more"):
        return

    class _LegacyMany:
        def __init__(self, data: Any, min_size: int, max_size: float, average_size: float) -> None:
            self._many = cu.many(
                data, min_size=min_size, max_size=max_size, average_size=average_size
            )
            self._many.__enter__()
            self._elements = iter(self._many)

        def more(self) -> bool:
            if next(self._elements, StopIteration) is StopIteration:
                self._many.__exit__(None, None, None)
                return False
            return True

        def reject(self, why: str | None = None) -> None:
            self._many.reject(why)

    patched = types.ModuleType(cu.__name__)
    patched.__dict__.update(vars(cu))
    patched.many = _LegacyMany  # type: ignore[attr-defined]
    _from_schema.cu = patched


@cache
def schema_specs() -> st.SearchStrategy[dict[str, Any]]:
    """Any document the published schema accepts (half of them with an image)."""
    from hypothesis_jsonschema import from_schema

    _patch_hypothesis_jsonschema()
    return st.one_of(from_schema(generator_schema()), from_schema(generator_schema(True)))


# --- plausible specs: real workloads, every cross-field rule kept ---------------------------

WORKLOADS = ("job", "distributed-job", "paddlejob", "kubeflow-paddlejob", "collective-job")
# Env the distributed-job image gets from paddlegen; a spec may not set it.
DISTRIBUTED_ENV = {
    "JOB_NAME",
    "JOB_PATH",
    "JOB_NAMESPACE",
    "TRAIN_CONFIG_DIR",
    "CONF_PADDLE_NIC",
    "CONF_PADDLE_PORT",
    "CONF_PADDLE_PORTS_NUM",
    "CONF_PADDLE_PORTS_NUM_SPARSE",
    "CONF_PADDLE_GRADIENT_NUM",
    "TRAINER_COUNT",
}

# Env collective-job's pods get from paddlegen, and what makes the launcher replace it.
COLLECTIVE_ENV = {*CONTRACT_ENV, "PADDLE_TRAINER_ENDPOINTS", "DISTRIBUTED_TRAINER_ENDPOINTS"}
# What YAML cannot hold (the control-character rule refuses it): see paddlegen/rules/names.py.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
job_names = st.from_regex(r"[a-z][a-z0-9]{0,12}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)
dns_labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?", fullmatch=True)
label_keys = st.one_of(
    st.sampled_from(["team", "tier", "app.kubernetes.io/version", "example.com/owner"]),
    st.from_regex(
        r"([a-z]{1,8}\.[a-z]{2,4}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?", fullmatch=True
    ),
)
label_values = st.from_regex(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,20})?[A-Za-z0-9])?", fullmatch=True)
# Any text a user may put in a free-form value: quoting, newlines, unicode, YAML look-alikes.
free_text = st.one_of(
    st.sampled_from(
        [
            "",
            "yes",
            "no",
            "on",
            "y",
            "N",
            "null",
            "~",
            "1e3",
            "0x1F",
            "012",
            "1:30",
            "2024-01-01",
            "- a",
            "a: b",
            "#x",
            "&a",
            "*a",
            "!tag",
            "{}",
            "[]",
            "'",
            '"',
            " lead",
            "trail ",
            "a\nb",
            "a\n",
            "\n",
            "ünï",
            "tab\there",
            "%x",
            "@x",
        ]
    ),
    # YAML's printable characters only: any other is a control-character error.
    st.text(st.characters().filter(lambda c: not _NOT_PRINTABLE.match(c)), max_size=30),
)
images = st.one_of(
    st.sampled_from(
        [
            "registry.baidubce.com/paddle-operator/demo-wide-and-deep:v1",
            "paddlepaddle/paddle:2.6.1-gpu",
            "img:1",
            "localhost:5000/a/b:tag",
            "repo/img@sha256:" + "a" * 64,
        ]
    ),
    st.from_regex(r"[a-z0-9]{1,8}(/[a-z0-9]{1,8}){0,2}:[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True),
)
quantities = st.one_of(
    st.sampled_from(
        [
            "500m",
            "2",
            "4Gi",
            "512Mi",
            "1.5",
            "0",
            "+1",
            ".5",
            "1e3",
            "1E-3",
            "10k",
            "1Ti",
            "100n",
            "3u",
        ]
    ),
    st.integers(0, 10**12),
    st.floats(0, 1e6, allow_nan=False, allow_infinity=False),
    st.from_regex(
        r"\+?([0-9]{1,6}(\.[0-9]{0,3})?|\.[0-9]{1,3})(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9])?",
        fullmatch=True,
    ),
)
abs_paths = st.from_regex(r"(/[a-z0-9_.-]{1,8}){1,3}/?", fullmatch=True)
string_lists = st.lists(free_text, max_size=4)


def _env_names(workload: str) -> st.SearchStrategy[str]:
    return st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,12}", fullmatch=True).filter(
        lambda n: (
            not is_secret_name(n)
            and not (workload == "distributed-job" and n in DISTRIBUTED_ENV)
            and not (workload == "collective-job" and n in COLLECTIVE_ENV)
            and n not in REGISTRY[workload].operator_env
        )
    )


def _env_var(name: str) -> st.SearchStrategy[dict[str, Any]]:
    key_ref = st.fixed_dictionaries(
        {"name": dns_labels, "key": st.sampled_from(["k", "a.b"])},
        optional={"optional": st.booleans()},
    )
    source = st.one_of(
        st.fixed_dictionaries({"secretKeyRef": key_ref}),
        st.fixed_dictionaries({"configMapKeyRef": key_ref}),
        st.fixed_dictionaries(
            {
                "fieldRef": st.fixed_dictionaries(
                    {"fieldPath": st.sampled_from(["metadata.name", "status.podIP"])},
                    optional={"apiVersion": st.just("v1")},
                )
            }
        ),
        st.fixed_dictionaries({"resourceFieldRef": _resource_field_refs()}),
    )
    return st.one_of(
        st.just({"name": name}),
        st.fixed_dictionaries({"name": st.just(name), "value": free_text}),
        st.fixed_dictionaries({"name": st.just(name), "valueFrom": source}),
    )


# Divisors the API server accepts (it compares the canonical spelling: 1000m is 1, 1024Ki is 1Mi;
# 0 means unset), in several spellings.
_DIVISORS = {
    "limits.cpu": ["1", "1m", 1, "1000m", "0.001", "0"],
    "requests.memory": ["1", 1, "1k", "1000", "1Mi", "1024Ki", "1Gi", "1E", "0"],
}


@st.composite
def _resource_field_refs(draw: Any) -> dict[str, Any]:
    resource = draw(st.sampled_from(sorted(_DIVISORS)))
    return {
        "resource": resource,
        **draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "containerName": st.just("paddle"),
                    "divisor": st.sampled_from(_DIVISORS[resource]),
                },
            )
        ),
    }


@st.composite
def _env(draw: Any, workload: str) -> list[dict[str, Any]]:
    names = draw(st.lists(_env_names(workload), max_size=4, unique=True))
    return [draw(_env_var(name)) for name in names]


_EXTENDED = ("nvidia.com/gpu", "example.com/fpga")  # counted in whole devices, never overcommitted
device_counts = st.one_of(st.integers(0, 16), st.sampled_from(["1", "8", "+2", "1e1", "2k"]))


def fit_resources(given: dict[str, Any]) -> dict[str, Any]:
    """``resources`` with every request within its limit, as the request-limit rule wants: an
    overcommittable request at most its limit, an extended resource's request equal to it."""
    requests = dict(given.get("requests", {}))
    limits = dict(given.get("limits", {}))
    for name, quantity in requests.items():
        if name in _EXTENDED:
            limits[name] = limits.get(name, quantity)
            requests[name] = limits[name]
        elif name in limits and server_value(quantity) > server_value(limits[name]):
            requests[name] = limits[name]
    fitted = {**given}
    if "requests" in given:
        fitted["requests"] = requests
    if "limits" in given or limits:
        fitted["limits"] = limits
    return fitted


@st.composite
def resources(draw: Any) -> dict[str, Any]:
    """Requests and limits the request-limit rule accepts. nvidia.com/gpu only as a limit: gpus,
    spec-wide or a role's, replaces it (a warning), and a request would have to equal gpus."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    names = st.sampled_from(["cpu", "memory", "ephemeral-storage", *_EXTENDED])
    for name in draw(st.lists(names, max_size=3, unique=True)):
        if name in _EXTENDED:
            limits[name] = draw(device_counts)
            if name != "nvidia.com/gpu" and draw(st.booleans()):
                requests[name] = limits[name]
            continue
        kind = draw(st.sampled_from(["requests", "limits", "both"]))
        if kind == "both":
            low, high = sorted((draw(quantities), draw(quantities)), key=server_value)
            requests[name], limits[name] = low, high
        else:
            (requests if kind == "requests" else limits)[name] = draw(quantities)
    out: dict[str, Any] = {}
    if requests or draw(st.booleans()):
        out["requests"] = requests
    if limits or draw(st.booleans()):
        out["limits"] = limits
    return out


tolerations = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"operator": st.just("Exists")},
            optional={
                "key": st.sampled_from(["", "nvidia.com/gpu"]),
                "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
            },
        ),
        st.fixed_dictionaries(
            {"key": st.sampled_from(["dedicated", "gpu"]), "value": label_values},
            optional={
                "operator": st.just("Equal"),
                "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule"]),
            },
        ),
        st.fixed_dictionaries(
            {
                "key": st.just("node.kubernetes.io/unreachable"),
                "operator": st.just("Exists"),
                "effect": st.just("NoExecute"),
                "tolerationSeconds": st.integers(0, 2**31 - 1),
            }
        ),
    ),
    max_size=3,
)
affinities = st.sampled_from(
    [
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "gpu", "operator": "In", "values": ["v100", "a100"]}
                            ]
                        }
                    ]
                }
            }
        },
        {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"a": "b"}},
                        },
                    }
                ]
            }
        },
        {"podAffinity": {}},
    ]
)
node_selectors = st.dictionaries(label_keys, label_values, max_size=3)


def _container_fields(workload: str) -> dict[str, st.SearchStrategy[Any]]:
    """Fields spec-wide and per role alike."""
    return {
        "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
        "command": st.lists(free_text, min_size=1, max_size=3),
        "args": string_lists,
        "workingDir": abs_paths,
        "env": _env(workload),
        "resources": resources(),
        "gpus": st.integers(0, 8),
        "nodeSelector": node_selectors,
        "tolerations": tolerations,
        "affinity": affinities,
    }


def _role(workload: str, replicas: st.SearchStrategy[int]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"replicas": replicas}, optional={"image": images, **_container_fields(workload)}
    )


def _mount_point(path: str) -> str:
    """The directory a mount path names, as the volume-unique check reads it."""
    return "/" + posixpath.normpath(path).lstrip("/")


@st.composite
def _volume(draw: Any, name: str, mount: str) -> dict[str, Any]:
    source = draw(
        st.sampled_from(["nfs", "efs", "cephfs", "hostPath", "claim", "dynamic", "emptyDir"])
    )
    configs = {
        "nfs": st.fixed_dictionaries(
            {"server": st.sampled_from(["10.0.0.1", "nfs.example.com"]), "path": abs_paths}
        ),
        "efs": st.fixed_dictionaries(
            {
                "fileSystemId": st.from_regex(r"fs-[0-9a-f]{8}", fullmatch=True),
                "region": st.sampled_from(["us-west-2", "eu-central-1"]),
                "nfs": st.just(True),  # region is the NFS mount's (without it: schema error)
            },
            optional={"path": abs_paths},
        ),
        "cephfs": st.one_of(
            # the CSI driver's static volume; the Secret's namespace defaults to the job's
            st.fixed_dictionaries(
                {
                    "clusterID": st.sampled_from(["ceph-a", "5e5b7ae6-2f4e-4c2a-9f0e"]),
                    "fsName": st.sampled_from(["cephfs", "myfs"]),
                    "secretName": dns_labels,
                },
                optional={"path": abs_paths, "secretNamespace": dns_labels},
            ),
            # the in-tree plugin, asked for (a warning, not an error)
            st.fixed_dictionaries(
                {
                    "inTree": st.just(True),
                    "monitors": st.lists(
                        st.sampled_from(["172.19.32.166:6789", "[::1]:6789", "ceph-mon:6789"]),
                        min_size=1,
                        max_size=3,
                    ),
                },
                optional={
                    "user": st.sampled_from(["admin", "paddle"]),
                    "path": abs_paths,
                    "secretName": dns_labels,
                },
            ),
        ),
        "hostPath": st.fixed_dictionaries(
            {"path": abs_paths.filter(lambda p: ".." not in p.split("/"))},  # host-path
            optional={"type": st.sampled_from(["", "DirectoryOrCreate", "Directory"])},
        ),
        "claim": st.fixed_dictionaries({"name": dns_labels}),
        "dynamic": st.fixed_dictionaries({}),
        "emptyDir": st.fixed_dictionaries(
            {}, optional={"medium": st.sampled_from(["", "Memory"]), "sizeLimit": quantities}
        ),
    }
    config = draw(configs[source])
    if source in KNOWN_TEMPLATE_BUGS:
        config[KNOWN_TEMPLATE_BUGS[source]] = draw(dns_labels)
    volume = {"name": name, "mountPath": mount, source: config}
    if source in ("nfs", "efs", "cephfs", "dynamic"):
        # more than zero and at most 2^63-1 bytes (volume-capacity)
        volume["capacity"] = draw(quantities.filter(lambda q: 0 < server_value(q) < 2**63))
    volume.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "readOnly": st.booleans(),
                    # ReadWriteMany, or ReadWriteOncePod alone (it takes no other mode): the
                    # single-node modes only warn, but keep them in the mix
                    "accessModes": st.one_of(
                        st.lists(
                            st.sampled_from(["ReadWriteOnce", "ReadOnlyMany"]),
                            max_size=2,
                            unique=True,
                        ).map(lambda m: ["ReadWriteMany", *m]),
                        st.just(["ReadWriteOncePod"]),
                    ),
                    "storageClassName": st.one_of(st.just(""), dns_labels),
                    "reclaimPolicy": st.sampled_from(["Retain", "Delete", "Recycle"]),
                    "mountOptions": st.lists(
                        st.sampled_from(["hard", "nfsvers=4.1", "ro"]), max_size=2
                    ),
                },
            )
        )
    )
    return volume


def _total(spec: dict[str, Any]) -> int:
    return sum(
        spec[role].get("replicas", 1) for role in ("ps", "worker", "heter") if role in spec
    ) + ("worker" not in spec)


@st.composite
def plausible_specs(draw: Any) -> dict[str, Any]:
    """A spec the schema and every check accept (warnings allowed), across all workloads."""
    workload = draw(st.sampled_from(WORKLOADS))
    spec: dict[str, Any] = {"workload": workload, "image": draw(images)}
    if draw(st.booleans()) and workload == DEFAULT_WORKLOAD:
        del spec["workload"]  # the default workload
    spec.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    **_container_fields(workload),
                    "shm": quantities,
                    "security": st.fixed_dictionaries(
                        {},
                        optional={
                            "restricted": st.booleans(),
                            "runAsNonRoot": st.booleans(),
                            "runAsUser": st.integers(0, 2**31 - 1),
                            "runAsGroup": st.integers(0, 65535),
                            "fsGroup": st.integers(0, 65535),
                            "readOnlyRootFilesystem": st.booleans(),
                        },
                    ),
                },
            )
        )
    )
    many = st.integers(1, 6)
    if workload == "job":
        if draw(st.booleans()):
            spec["worker"] = draw(_role(workload, st.just(1)))
    else:
        spec["worker"] = draw(_role(workload, many))
    if workload in ("paddlejob", "kubeflow-paddlejob") and draw(st.booleans()):
        spec["ps"] = draw(_role(workload, many))
        if workload == "paddlejob" and draw(st.booleans()):
            spec["heter"] = draw(_role(workload, many))

    names = draw(st.lists(dns_labels, max_size=3, unique=True))
    mounts = draw(
        st.lists(
            abs_paths.filter(lambda p: _mount_point(p) != "/dev/shm"),
            min_size=len(names),
            max_size=len(names),
            # the check compares directories ('/a' and '/a/' are one): unique as it sees them
            unique_by=_mount_point,
        )
    )
    if names:
        spec["volumes"] = [draw(_volume(n, m)) for n, m in zip(names, mounts, strict=True)]
    if workload == "distributed-job":
        if not names:
            spec["volumes"] = [draw(_volume("jobpath", "/home/jobpath"))]
            names = ["jobpath"]
        port = draw(st.integers(1, 65535 - 20))
        spec["distributed"] = {
            "volume": draw(st.sampled_from(names)),
            "trainConfigDir": "quick_start",
            **draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "nic": st.sampled_from(["eth0", "ib0"]),
                        "port": st.just(port),
                        "portsNum": st.integers(1, 10),
                        "portsNumSparse": st.integers(0, 10),
                        "trainerCount": st.integers(1, 8),
                        "hostPorts": st.booleans(),
                    },
                )
            ),
        }
        if "command" not in spec and "command" not in spec["worker"] and draw(st.booleans()):
            spec["distributed"]["command"] = draw(st.lists(free_text, min_size=1, max_size=3))
    if workload == "paddlejob" and draw(st.booleans()):
        spec["paddlejob"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "cleanPodPolicy": st.sampled_from(
                        ["Always", "Never", "OnFailure", "OnCompletion"]
                    ),
                    "intranet": st.sampled_from(["PodIP", "Service", "Host"]),
                    "elastic": st.integers(0, 3),
                },
            )
        )
        if "ps" in spec:
            spec["paddlejob"]["withGloo"] = draw(st.sampled_from([0, 1, 2]))
            spec["paddlejob"].pop("elastic", None)  # elastic mode has no PS mode
    if workload == "collective-job":
        if not any(body.get(key) for body in (spec, spec["worker"]) for key in ("command", "args")):
            spec["args"] = ["train.py"]  # what the launcher, the default command, runs
        if draw(st.booleans()):
            spec["collective"] = {"port": draw(st.integers(1, 65535))}
    if workload == "kubeflow-paddlejob" and draw(st.booleans()):
        spec["kubeflow"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "cleanPodPolicy": st.sampled_from(["All", "Running", "None"]),
                    "port": st.integers(1, 65535),
                },
            )
        )
    if names and draw(st.booleans()):
        spec["dataPrep"] = {
            "volume": spec.get("distributed", {}).get("volume", draw(st.sampled_from(names))),
            **draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "image": images,
                        "splitCount": st.integers(1, 10),
                        "outDir": abs_paths,
                        "command": st.lists(free_text, min_size=1, max_size=2),
                        "args": string_lists,
                    },
                )
            ),
        }
    if draw(st.booleans()):
        spec["scheduling"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "scheduler": st.sampled_from(["default", "volcano"]),
                    "queue": dns_labels,
                    "priorityClassName": dns_labels,
                    "minAvailable": st.integers(1, _total(spec)),
                },
            )
        )
    if draw(st.booleans()):
        spec["run"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "restartPolicy": st.sampled_from(_restart_policies(workload)),
                    "backoffLimit": st.integers(0, 10),
                    "activeDeadlineSeconds": st.integers(1, 10**6),
                    "ttlSecondsAfterFinished": st.integers(0, 10**6),
                },
            )
        )

    metadata = {
        "name": draw(job_names),
        **draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "namespace": dns_labels,
                    "labels": node_selectors,
                    "annotations": st.dictionaries(label_keys, free_text, max_size=3),
                },
            )
        ),
    }
    if "namespace" not in metadata:
        # A CSI volume's Secret is in the job's namespace unless it names its own.
        for volume in spec.get("volumes", []):
            if "clusterID" in volume.get("cephfs", {}):
                volume["cephfs"].setdefault("secretNamespace", "ceph-csi")
    doc = {"apiVersion": "paddlegen/v1", "kind": "TrainingJob", "metadata": metadata, "spec": spec}
    if draw(st.booleans()):
        doc["overlays"] = draw(st.dictionaries(dns_labels, _overlay(spec), min_size=1, max_size=2))
    return doc


def _restart_policies(workload: str) -> list[str]:
    """collective-job's pods restart never (rule collective-restart)."""
    return ["Never"] if workload == "collective-job" else ["Never", "OnFailure"]


def _overlay_resources(spec: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``overlay`` with what keeps the merged resources within their limits: a base request
    may meet an overlay limit (and the other way round)."""
    merged = deep_merge(spec.get("resources", {}), overlay)
    fitted = fit_resources(merged)
    out = {kind: dict(values) for kind, values in overlay.items()}
    for kind in ("requests", "limits"):
        for name, quantity in fitted.get(kind, {}).items():
            if merged.get(kind, {}).get(name) != quantity:
                out.setdefault(kind, {})[name] = quantity
    return out


def _overlay(spec: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Overlay changes that keep the merged spec valid."""
    workload = spec.get("workload", DEFAULT_WORKLOAD)
    changes: dict[str, st.SearchStrategy[Any]] = {
        "image": images,
        "gpus": st.integers(0, 8),
        "shm": st.one_of(st.none(), quantities),
        "env": _env(workload),
        "resources": st.one_of(st.none(), resources().map(lambda r: _overlay_resources(spec, r))),
        "nodeSelector": node_selectors,
        "tolerations": tolerations,
        "run": st.fixed_dictionaries(
            {},
            optional={
                "backoffLimit": st.integers(0, 5),
                "restartPolicy": st.sampled_from(_restart_policies(workload)),
            },
        ),
    }
    if workload != "job" and "minAvailable" not in spec.get("scheduling", {}):
        changes["worker"] = st.fixed_dictionaries({"replicas": st.integers(1, 8)})
        changes["scheduling"] = st.fixed_dictionaries(
            {"scheduler": st.sampled_from(["default", "volcano"])}
        )
    return st.fixed_dictionaries(
        {},
        optional={
            "spec": st.fixed_dictionaries({}, optional=changes),
            "metadata": st.fixed_dictionaries(
                {},
                optional={
                    "labels": node_selectors,
                    "annotations": st.dictionaries(label_keys, free_text, max_size=2),
                },
            ),
        },
    )


# --- broken specs: a plausible spec with one known mistake ----------------------------------


def _set(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node = doc
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return doc


def _first_volume_dup(doc: dict[str, Any], key: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    volumes = doc["spec"].setdefault("volumes", [])
    if not volumes:
        volumes.append({"name": "a", "mountPath": "/a", "emptyDir": {}})
    twin = {"name": "twin", "mountPath": "/twin", "emptyDir": {}, key: volumes[0][key]}
    volumes.append(twin)
    return doc


def _without_role_images(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for role in ("ps", "worker", "heter"):
        doc["spec"].get(role, {}).pop("image", None)
    return doc


# Each mistake: a name and a function of (plausible spec, drawn text) -> broken spec.
_MISTAKES: dict[str, Any] = {
    "unknown top key": lambda d, t: _set(d, ("spce",), {}),
    "unknown spec key": lambda d, t: _set(d, ("spec", "wokrer"), {"replicas": 2}),
    "unknown metadata key": lambda d, t: _set(d, ("metadata", "lables"), {"a": "b"}),
    "wrong apiVersion": lambda d, t: _set(d, ("apiVersion",), "paddlegen/v2"),
    "a Kubernetes manifest": lambda d, t: _set(
        _set(d, ("apiVersion",), "kubeflow.org/v1"), ("kind",), "PaddleJob"
    ),
    "replicas as text": lambda d, t: _set(d, ("spec", "worker", "replicas"), "two"),
    "replicas zero": lambda d, t: _set(d, ("spec", "worker", "replicas"), 0),
    "replicas huge": lambda d, t: _set(d, ("spec", "worker", "replicas"), 10**6),
    "bad workload": lambda d, t: _set(d, ("spec", "workload"), "pytorchjob"),
    "bad quantity": lambda d, t: _set(d, ("spec", "resources"), {"limits": {"memory": "1XB"}}),
    "negative gpus": lambda d, t: _set(d, ("spec", "gpus"), -1),
    "upper-case name": lambda d, t: _set(d, ("metadata", "name"), "Bad-Name"),
    "name with slash": lambda d, t: _set(d, ("metadata", "name"), "../etc"),
    "name too long": lambda d, t: _set(d, ("metadata", "name"), "a" * 64),
    "derived name too long": lambda d, t: _set(
        _set(d, ("metadata", "name"), "a" * 60), ("spec", "workload"), "paddlejob"
    ),
    "bad label value": lambda d, t: _set(d, ("metadata", "labels"), {"team": "-x-"}),
    "number label": lambda d, t: _set(d, ("metadata", "labels"), {"team": 5}),
    "relative mountPath": lambda d, t: _set(
        d, ("spec", "volumes"), [{"name": "a", "mountPath": "data", "emptyDir": {}}]
    ),
    "volume without source": lambda d, t: _set(
        d, ("spec", "volumes"), [{"name": "a", "mountPath": "/a"}]
    ),
    "volume two sources": lambda d, t: _set(
        d,
        ("spec", "volumes"),
        [{"name": "a", "mountPath": "/a", "emptyDir": {}, "hostPath": {"path": "/x"}}],
    ),
    "nfs without capacity": lambda d, t: _set(
        d,
        ("spec", "volumes"),
        [{"name": "a", "mountPath": "/a", "nfs": {"server": "s", "path": "/x"}}],
    ),
    "duplicate volume name": lambda d, t: _first_volume_dup(d, "name"),
    "duplicate mountPath": lambda d, t: _first_volume_dup(d, "mountPath"),
    "undefined data volume": lambda d, t: _set(d, ("spec", "dataPrep"), {"volume": "nope"}),
    "duplicate env": lambda d, t: _set(
        d, ("spec", "env"), [{"name": "A", "value": t}, {"name": "A", "value": "2"}]
    ),
    "value and valueFrom": lambda d, t: _set(
        d,
        ("spec", "env"),
        [{"name": "A", "value": t, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    ),
    # Any text, made a password: an empty value, a boolean or a path is not one.
    "secret literal": lambda d, t: _set(
        d, ("spec", "env"), [{"name": "DB_PASSWORD", "value": f"{t} hunter2"}]
    ),
    "no image": lambda d, t: _set(_without_role_images(d), ("spec", "image"), None),
    "minAvailable too big": lambda d, t: _set(d, ("spec", "scheduling"), {"minAvailable": 30000}),
    "bad enum": lambda d, t: _set(d, ("spec", "run"), {"restartPolicy": "Always"}),
    "env as mapping": lambda d, t: _set(d, ("spec", "env"), {"A": t}),
    "overlay unknown key": lambda d, t: _set(d, ("overlays",), {"prod": {"spce": {}}}),
    "overlay bad replicas": lambda d, t: _set(
        d, ("overlays",), {"prod": {"spec": {"worker": {"replicas": 0}}}}
    ),
    "overlay removes image": lambda d, t: _set(
        _without_role_images(d), ("overlays",), {"dev": {"spec": {"image": None}}}
    ),
    "overlay bad name": lambda d, t: _set(d, ("overlays",), {"Prod": {}}),
    "job with ps": lambda d, t: _set(
        _set(d, ("spec", "workload"), "job"), ("spec", "ps"), {"replicas": 1}
    ),
    "heter without ps": lambda d, t: _set(
        _set(_set(d, ("spec", "workload"), "paddlejob"), ("spec", "heter"), {"replicas": 1}),
        ("spec", "ps"),
        None,
    ),
    "distributed ports past 65535": lambda d, t: _set(
        _set(d, ("spec", "workload"), "distributed-job"),
        ("spec", "distributed"),
        {"volume": "v", "trainConfigDir": "x", "port": 65535, "portsNum": 2},
    ),
}


def _strip_none(node: Any) -> Any:
    """`None` in a mistake means "remove the key" (outside overlays, where null is meaningful)."""
    if isinstance(node, dict):
        return {
            k: _strip_none(v) if k != "overlays" else v for k, v in node.items() if v is not None
        }
    return node


# Each level doubles the one before: 10 * 2**19 values, far past the loader's bound.
_ALIAS_BOMB = "bomb0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"bomb{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 20)
)

# Text-level mistakes, on the dumped YAML: what no dict can express.
_TEXT_MISTAKES: dict[str, Any] = {
    "duplicate key": lambda text: text + "kind: TrainingJob\n",
    "python tag": lambda text: text.replace(
        "kind: TrainingJob", "kind: !!python/object/apply:os.system [id]", 1
    ),
    "tab indentation": lambda text: text.replace("\n  ", "\n\t", 1),
    "unclosed flow": lambda text: text + "extra: [1, 2\n",
    "second document": lambda text: text + "---\napiVersion: paddlegen/v1\n",
    "not a mapping": lambda text: "- " + text.replace("\n", "\n  "),
    "alias bomb": lambda text: text + _ALIAS_BOMB,
}


@st.composite
def broken_specs(draw: Any) -> tuple[str, dict[str, Any], str | None]:
    """(mistake, data, text mistake): a plausible spec with one mistake in its data, or valid
    data whose dumped YAML gets the named text mistake (see apply_text_mistake)."""
    base = draw(plausible_specs())
    if draw(st.integers(0, 4)) == 0:
        name = draw(st.sampled_from(list(_TEXT_MISTAKES)))
        return name, base, name
    name = draw(st.sampled_from(list(_MISTAKES)))
    return name, _strip_none(_MISTAKES[name](base, draw(free_text))), None


def apply_text_mistake(name: str, text: str) -> str:
    return _TEXT_MISTAKES[name](text)
