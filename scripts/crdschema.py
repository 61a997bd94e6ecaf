"""Converts vendored CRDs into strict JSON Schemas for kubeconform and jsonschema.

A maintainer tool, not shipped in the wheel. Regenerate from the repository root with
``python -m scripts.crdschema [--crds DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml

# Keywords whose meaning is the same in OpenAPI v3 structural schemas, JSON Schema draft-04 and
# 2020-12, so one file serves kubeconform and python jsonschema alike. Anything not listed here
# stops the conversion: guessing at an unknown keyword could silently loosen validation.
_KEPT = frozenset(
    {
        "default",
        "enum",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "pattern",
        "required",
        "type",
        "uniqueItems",
    }
)
_ONE_SCHEMA = frozenset({"items", "additionalProperties", "not"})
_SCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf"})
# `format` goes too: kubeconform asserts it for schemas without $schema (date-time) while python
# jsonschema needs extra packages to, so keeping it would make the two disagree. Every date-time in
# the vendored CRDs is under status, which paddlegen never writes; int32/int64 neither checks.
_DROPPED = frozenset({"description", "example", "externalDocs", "format", "title"})

# Open on purpose: apiVersion and kind already picked this schema, and ObjectMeta is the API
# server's to check (CRDs only say `type: object`), as kubeconform's CRD schemas expect.
_PERMISSIVE_ROOT = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
}

_REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CRDS_DIR = _REPO_ROOT / "hack" / "crds"  # also what hack/local-cluster installs
DEFAULT_OUT_DIR = _REPO_ROOT / "schemas" / "crds"


def strict_schema(node: dict[str, Any], where: str = "$") -> dict[str, Any]:
    """One openAPIV3Schema node as strict JSON Schema: closed objects, no annotations."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: strict_schema(sub, f"{where}.{name}") for name, sub in value.items()}
        elif key in _ONE_SCHEMA:
            out[key] = value if isinstance(value, bool) else strict_schema(value, f"{where}/{key}")
        elif key in _SCHEMA_LIST:
            out[key] = [strict_schema(sub, f"{where}/{key}") for sub in value]
        elif key in _KEPT:
            out[key] = value
        else:
            raise ValueError(f"{where}: unsupported schema keyword {key!r}")
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        # The CRD spells the same alternatives as anyOf of bare types; keep only one spelling.
        if all(set(alt) == {"type"} for alt in out.get("anyOf", [])):
            out.pop("anyOf", None)
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if "properties" in out and not preserve:
        out.setdefault("additionalProperties", False)
    return out


def crd_schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"<group>/<kind>_<version>.json": schema}`` for every served, not deprecated version."""
    spec = crd["spec"]
    kind = spec["names"]["kind"]
    schemas = {}
    for version in spec["versions"]:
        # A deprecated version (Kueue's v1beta1 beside v1beta2) gets no schema: paddlegen writes
        # only the current one, and a schema for the old one would validate what the server warns
        # about.
        if not version.get("served", False) or version.get("deprecated", False):
            continue
        schema = strict_schema(version["schema"]["openAPIV3Schema"])
        schema.setdefault("properties", {}).update(_PERMISSIVE_ROOT)
        schema["additionalProperties"] = False
        schemas[f"{spec['group']}/{kind.lower()}_{version['name']}.json"] = schema
    return schemas


def dumps(schema: Any) -> str:
    """Deterministic text, so regenerating gives byte-identical files."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def upstream_sources(sources_md: str) -> dict[str, dict[str, str]]:
    """Rows of the vendored SOURCES.md table, keyed by file name."""
    rows = {}
    for line in sources_md.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].startswith("`"):
            continue
        name, repo, path, ref, _blob, licence = cells
        commit = re.search(r"\b[0-9a-f]{40}\b", ref)
        rows[name.strip("`")] = {
            "repo": repo,
            "path": path.strip("`"),
            "commit": commit.group(0) if commit else ref,
            "licence": licence.split()[0],
        }
    return rows


def _sources_table(entries: list[tuple[str, str, str, dict[str, str]]]) -> str:
    lines = [
        "# Sources of the CRD schemas",
        "",
        "Generated by `python -m scripts.crdschema` from the unmodified upstream CRDs in",
        "`hack/crds/` (see the `SOURCES.md` there); do not edit. Each schema is the CRD's",
        "`openAPIV3Schema` made strict (unknown fields rejected), without descriptions.",
        "",
        "| schema | source CRD | source sha256 | upstream | upstream path | commit | licence |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for schema_path, source, digest, up in entries:
        lines.append(
            f"| `{schema_path}` | `{source}` | `{digest}` | {up['repo']} | `{up['path']}` "
            f"| `{up['commit']}` | {up['licence']} |"
        )
    return "\n".join(lines) + "\n"


def generate(crds_dir: Path = DEFAULT_CRDS_DIR, out_dir: Path = DEFAULT_OUT_DIR) -> list[Path]:
    """Write one schema per served CRD version plus SOURCES.md; returns the files written."""
    upstream = upstream_sources((crds_dir / "SOURCES.md").read_text(encoding="utf-8"))
    written, entries = [], []
    # Only top-level files: variants/ holds alternative definitions of the same kinds.
    for crd_file in sorted(crds_dir.glob("*.yaml")):
        if crd_file.name not in upstream:
            raise ValueError(f"{crd_file.name} is not listed in {crds_dir / 'SOURCES.md'}")
        raw = crd_file.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is 10x faster
        for doc in yaml.load_all(raw, Loader=loader):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            for rel, schema in sorted(crd_schemas(doc).items()):
                target = out_dir / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(dumps(schema), encoding="utf-8", newline="\n")
                written.append(target)
                entries.append((rel, crd_file.name, digest, upstream[crd_file.name]))
    sources = out_dir / "SOURCES.md"
    sources.write_text(_sources_table(sorted(entries)), encoding="utf-8", newline="\n")
    return [*written, sources]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.crdschema", description=__doc__)
    parser.add_argument("--crds", type=Path, default=DEFAULT_CRDS_DIR, help="vendored CRD folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR, help="schema output folder")
    args = parser.parse_args(argv)
    for path in generate(args.crds, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
