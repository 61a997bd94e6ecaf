"""The floor for this stack: paddlegen's templates through a plain jinja2 Environment, each
rendered document parsed back with yaml.safe_load and dumped, one file per object. No schema,
no checks, no sandbox, no positions, no kustomization, no atomic writes.

    python benchmarks/peers/floor.py SPEC_DIR OUT_DIR

The only paddlegen code it uses is the frozen model (paddlegen.spec.model.build_job, given the
spec's workload by the registry), because the templates read a Job object; overlays are merged
with a plain deep merge and rendered whole.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jinja2
import yaml

from paddlegen.render.engine import (  # the same mount options and context as paddlegen
    EFS_MOUNT_OPTIONS,
    template_context,
)
from paddlegen.spec.model import build_job
from paddlegen.workloads import workload_of

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def merge(base, overlay):
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        return overlay
    out = dict(base)
    for key, value in overlay.items():
        out[key] = merge(base.get(key), value)
    return out


def main(spec_dir: str, out_dir: str) -> None:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["tojson"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.globals["efs_mount_options"] = EFS_MOUNT_OPTIONS
    names: dict[str, list[str]] = {}
    out = Path(out_dir)
    for path in sorted(Path(spec_dir).rglob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
        overlays = data.pop("overlays", {})
        variants = {"": data, **{f"overlays/{e}": merge(data, o) for e, o in overlays.items()}}
        for where, doc in variants.items():
            job = build_job(doc, workload_of(doc))
            if job.workload not in names:
                names[job.workload] = [
                    f"{sub}/{p.name}"
                    for sub in ("_common", job.workload)
                    for p in sorted((TEMPLATES / sub).glob("*.yaml.j2"))
                ]
            folder = out / job.name / where
            folder.mkdir(parents=True, exist_ok=True)
            # The values templates lay out are computed in Python (the workload registry).
            context = template_context(job)
            for name in names[job.workload]:
                text = env.get_template(name).render(job=job, **context)
                for obj in yaml.load_all(text, Loader=Loader):
                    if obj is None:
                        continue
                    file = f"{obj['kind']}_{obj['metadata']['name']}.yaml".lower()
                    (folder / file).write_text(
                        yaml.dump(obj, Dumper=Dumper, sort_keys=False, default_flow_style=False),
                        encoding="utf-8",
                    )


if __name__ == "__main__":
    main(*sys.argv[1:3])
