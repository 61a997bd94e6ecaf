"""Templates -> manifests: sandboxed jinja2, parsed back, dumped as canonical YAML."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from paddlegen.errors import TemplateError
from paddlegen.resources import templates_dir
from paddlegen.spec.model import EFS_MOUNT_OPTIONS, Job
from paddlegen.spec.record import record
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.base import common_context
from paddlegen.yamlio import dump_yaml, load_all

COMMON_FOLDER = "_common"  # objects every workload may need: PV, PVC, data Job
# Apply order: what others refer to comes first; the training object comes last.
KIND_ORDER = (
    "Namespace",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "Role",
    "RoleBinding",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Service",
    "PodGroup",
    "Job",
    "PaddleJob",
)


@record
class Manifest:
    """One rendered object, and the template it came from."""

    obj: dict[str, Any]
    template: str

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def filename(self) -> str:
        """`<group>_<version>_<kind>_<name>.yaml`, lower-case, the group left out for core."""
        parts = [*str(self.obj["apiVersion"]).split("/"), self.kind, self.name]
        return "_".join(parts).lower() + ".yaml"

    def text(self) -> str:
        return dump_yaml(self.obj)


# Characters JSON leaves raw but YAML cannot hold (DEL, C1 controls, U+FFFE/U+FFFF) or reads as
# a line break that a quoted scalar folds into a space (NEL, U+2028, U+2029): escaped instead.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


def _tojson(value: Any) -> str:
    # JSON is valid YAML: every scalar a spec supplies is quoted, so none can inject YAML.
    text = json.dumps(value, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@lru_cache(maxsize=8)
def environment(extra_dir: str | None = None) -> Any:
    """One sandboxed environment per template search path; templates compile once."""
    from jinja2 import FileSystemLoader, StrictUndefined

    from paddlegen.render.sandbox import BoundedSandboxedEnvironment

    search = [extra_dir] if extra_dir else []
    env = BoundedSandboxedEnvironment(
        loader=FileSystemLoader([*search, str(templates_dir())]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # YAML, not HTML; quoting is the tojson filter's job
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["tojson"] = _tojson
    env.globals["efs_mount_options"] = EFS_MOUNT_OPTIONS
    return env


def _bytecode_cache() -> Any:
    """Compiled templates kept between runs (as Python keeps .pyc files), else None.

    In ``$PADDLEGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/paddlegen``, else ``~/.cache/paddlegen``;
    ``PADDLEGEN_NO_CACHE=1`` turns it off. jinja2 checks each entry against its template's
    source; the folder is named after what shapes the compiled code besides it (jinja2, the
    environment, the sandbox: toolchain.compiler_digest).
    A folder this user does not own alone is not used: its entries are loaded as code.
    """
    if os.environ.get("PADDLEGEN_NO_CACHE"):
        return None
    from jinja2 import FileSystemBytecodeCache

    from paddlegen.render.toolchain import compiler_digest

    class QuietCache(FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: Any) -> None:
            with contextlib.suppress(OSError):  # a full or read-only disk only costs speed
                super().dump_bytecode(bucket)

    base = os.environ.get("PADDLEGEN_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "paddlegen"
    )
    folder = Path(base, f"templates-{compiler_digest()[:16]}")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        return None
    return QuietCache(str(folder))


def template_names(workload: str, extra_dir: str | None = None) -> list[str]:
    folder = WORKLOADS[workload].folder
    names: list[str] = []
    for sub in (COMMON_FOLDER, folder):
        found = {p.name for root in _roots(extra_dir) for p in (root / sub).glob("*.yaml.j2")}
        names.extend(f"{sub}/{name}" for name in sorted(found))
    return names


def warm_templates(extra_dir: str | None = None) -> None:
    """Compile every workload's templates now (before worker processes fork, say)."""
    env = environment(extra_dir)
    for workload in WORKLOADS:
        for name in template_names(workload, extra_dir):
            env.get_template(name)


def _roots(extra_dir: str | None) -> list[Path]:
    return [Path(extra_dir), templates_dir()] if extra_dir else [templates_dir()]


def template_context(job: Job) -> dict[str, Any]:
    """What the templates lay out, computed in Python: the workload's, plus the common
    objects'."""
    # No PodGroup among them: whoever makes a job's pods makes its gang's group, and deletes it
    # with the job (paddlegen/workloads/base.py, GROUP_NAME).
    return {**common_context(job), **WORKLOADS[job.workload].context(job)}


def render_job(job: Job, extra_dir: str | None = None) -> list[Manifest]:
    """Every manifest of a job, in apply order."""
    env = environment(extra_dir)
    # What the templates lay out, computed in Python: the workload's, plus the common objects'.
    context = template_context(job)
    manifests: list[Manifest] = []
    for name in template_names(job.workload, extra_dir):
        text = _render_template(env, name, job, context)
        manifests.extend(_parse_back(name, text))
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}
    # A stable sort: within a kind, common templates (the data Job) precede the workload's.
    return sorted(manifests, key=lambda m: rank.get(m.kind, len(rank)))


def _render_template(env: Any, name: str, job: Job, context: dict[str, Any]) -> str:
    from jinja2 import TemplateError as JinjaError
    from jinja2 import TemplateSyntaxError

    try:
        return str(env.get_template(name).render(job=job, **context))
    except TemplateSyntaxError as exc:
        raise TemplateError(
            f"{exc.name or name}:{exc.lineno}: template syntax: {exc.message}"
        ) from None
    except JinjaError as exc:
        raise TemplateError(f"{_template_line(name)}: template error: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a user template's bug must name the template
        raise TemplateError(
            f"{_template_line(name)}: template error: {type(exc).__name__}: {exc}"
        ) from None


def _template_line(name: str) -> str:
    """`template:line` of the innermost template frame of the exception being handled."""
    where = name
    tb = sys.exc_info()[2]
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(".j2"):
            where = f"{Path(filename).parent.name}/{Path(filename).name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _parse_back(name: str, text: str) -> list[Manifest]:
    try:
        docs = load_all(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise TemplateError(
            f"{name}: rendered text is not valid YAML (output line{line}): "
            f"{getattr(exc, 'problem', exc)}"
        ) from None
    out = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict) or not {"apiVersion", "kind", "metadata"} <= doc.keys():
            raise TemplateError(f"{name}: rendered a document that is not a Kubernetes object")
        out.append(Manifest(doc, name))
    return out
