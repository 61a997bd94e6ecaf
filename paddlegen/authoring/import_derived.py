"""`paddlegen import`: the spec fields paddlegen derives from the rest of a spec, which an
imported spec leaves out when they equal what it would derive."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import ROLE_NAMES

if TYPE_CHECKING:
    from paddlegen.spec.model import Job

# Spec fields whose default paddlegen derives from other fields (spec/model.py), with how to
# read the derived value off the job model (a list index in the path is given as "[]"). Read
# back from rendered objects such a field holds what the spec derives anyway; written out, it
# would stop following the fields it comes from: a gang's minAvailable would no longer follow
# the replicas, a data Job's SPLIT_COUNT the trainers, a dynamic claim's access modes the pods
# that mount it, a PV's class of its own the job's name. So the import leaves out each one
# that equals what the spec derives without it.
Derive = Callable[["Job", tuple[Any, ...]], Any]
DERIVED: tuple[tuple[tuple[str, ...], Derive], ...] = (
    (("scheduling", "minAvailable"), lambda job, _: job.min_member),
    (("dataPrep", "splitCount"), lambda job, _: job.dataPrep and job.dataPrep.splitCount),
    (("dataPrep", "outDir"), lambda job, _: job.dataPrep and job.dataPrep.outDir),
    (("volumes", "[]", "accessModes"), lambda job, at: job.volumes[at[1]].accessModes),
    # without a namespace, a PV's class of its own (its name, which follows the job's)
    (("volumes", "[]", "storageClassName"), lambda job, at: job.volumes[at[1]].storageClassName),
    (("checkpoint", "path"), lambda job, _: job.checkpoint and job.checkpoint.path),
    # a token the workload's own pods get anyway (distributed-job's trainers), spec-wide only
    # where every pod, the data Job's too, gets that one
    (("automountServiceAccountToken",), lambda job, _: _shared_token(job)),
    *(
        ((role, "automountServiceAccountToken"), lambda job, at: _token(job, at[0]))
        for role in ROLE_NAMES
    ),
)


def _token(job: Job, role: str) -> bool | None:
    """Whether the pods of ``role`` get a token: the spec's choice, else their workload's
    (workloads/base.py pod: only pods that talk to the API server)."""
    from paddlegen.workloads import WORKLOADS

    if role not in job.roles:
        return None
    given = job.roles[role].automountServiceAccountToken
    return bool(WORKLOADS[job.workload].api_token) if given is None else given


def _shared_token(job: Job) -> bool | None:
    """The token every pod of ``job`` gets alike (None: they differ)."""
    tokens = {_token(job, role) for role in job.roles}
    if job.dataPrep is not None:
        tokens.add(bool(job.dataPrep.role.automountServiceAccountToken))
    return tokens.pop() if len(tokens) == 1 else None


def without_derived(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` (a valid spec) without the fields of ``DERIVED`` that equal what
    paddlegen derives when they are left out (the model decides, so the two cannot differ)."""
    from paddlegen.spec.model import build_job
    from paddlegen.workloads import workload_of

    lean = copy.deepcopy(document)
    for path, derive in DERIVED:
        for at in _expand(lean["spec"], path):
            given = _get(lean["spec"], at)
            if given is None:
                continue
            trial = copy.deepcopy(lean)
            _remove(trial["spec"], at)
            if derive(build_job(trial, workload_of(trial)), at) == given:
                _remove(lean["spec"], at)
    return lean


def _expand(spec: dict[str, Any], path: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """``path`` with its "[]" replaced by each index of the list there."""
    if "[]" not in path:
        return [path]
    head = path[: path.index("[]")]
    items = _get(spec, head)
    rest = path[len(head) + 1 :]
    return [(*head, i, *rest) for i in range(len(items))] if isinstance(items, list) else []


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def _remove(obj: Any, path: tuple[Any, ...]) -> None:
    """Remove the field at ``path``, and the mappings it leaves empty."""
    parent = _get(obj, path[:-1])
    del parent[path[-1]]
    if not parent and len(path) > 1 and isinstance(parent, dict):
        _remove(obj, path[:-1])
