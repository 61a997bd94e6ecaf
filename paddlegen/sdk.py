"""The old Python SDK (``paddle.job.PaddleJob``) as a front end that writes paddlegen specs.

That SDK's README example runs unchanged after ``import paddlegen.sdk as job``. Unlike the
original, ``pservers`` and ``trainers`` are honoured, ``cpu_nums`` and ``memory`` become
resource requests (memory also the limit), and nothing is submitted: ``render`` writes a
kustomize directory for ``kubectl apply -k`` or a GitOps tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.errors import Diagnostic, InvalidArgumentError, Rule, SpecError

SDK_WORKLOAD = Rule(
    "sdk-workload",
    (
        "the SDK runs an `entry_point` only on a workload that gives its pods TRAINER_ID and "
        "TRAINERS"
    ),
    explanation=(
        "The Python SDK starts an `entry_point` with the TRAINER_ID and TRAINERS only some "
        "workloads give their pods; the workload asked for gives none."
    ),
    severity="error",
)

if TYPE_CHECKING:
    from paddlegen.spec.loader import Document


@dataclass(frozen=True)
class CephFSVolume:
    """A CephFS share mounted into every pod (the old SDK's parameters, and a capacity).

    With ``cluster_id`` and ``fs_name`` the PersistentVolume uses the CephFS CSI driver (a
    static volume): the driver finds the monitors by ``cluster_id`` in its own configuration,
    and the Secret holds ``userID`` and ``userKey``. With the old SDK's ``monitors_addr``
    instead, it is the old SDK's in-tree CephFS volume (``inTree: true``), which Kubernetes
    deprecated in 1.28 and which does nothing from 1.31: ``PaddleJob.validate()`` warns
    (cephfs-in-tree).
    """

    monitors_addr: str | Sequence[str] | None = None  # in-tree: "host:port", comma-separated
    user: str | None = None  # in-tree only (default admin); CSI: the Secret's userID
    secret_name: str = "cephfs-secret"  # only the Secret's name lands in the manifests
    mount_path: str = "/mnt/cephfs"
    path: str = "/"  # inside the file system; the CSI driver's rootPath
    capacity: str = "10Gi"  # a PersistentVolume needs one; CephFS does not enforce it
    cluster_id: str | None = None  # CSI: the cluster's clusterID in the driver's configuration
    fs_name: str | None = None  # CSI: the CephFS file system's name
    secret_namespace: str | None = None  # default: the job's namespace

    def __post_init__(self) -> None:
        csi = self.cluster_id is not None or self.fs_name is not None
        if csi and (self.cluster_id is None or self.fs_name is None):
            raise InvalidArgumentError(
                "CephFSVolume needs both cluster_id and fs_name for the CephFS CSI driver"
            )
        if csi and self.monitors_addr is not None:
            raise InvalidArgumentError(
                "CephFSVolume got monitors_addr and cluster_id: monitors_addr is for the "
                "in-tree plugin, the CSI driver finds the monitors by cluster_id"
            )
        if csi and self.user is not None:
            raise InvalidArgumentError(
                "CephFSVolume got user and cluster_id: user is for the in-tree plugin, the CSI "
                "driver takes the user from the Secret's userID"
            )
        if not csi and self.monitors_addr is None:
            raise InvalidArgumentError(
                "CephFSVolume needs cluster_id and fs_name (the CephFS CSI driver), or "
                "monitors_addr (the in-tree plugin, which does nothing from Kubernetes 1.31)"
            )

    def to_volume(self) -> dict[str, Any]:
        """The spec.volumes entry."""
        if self.monitors_addr is None:
            cephfs: dict[str, Any] = {
                "clusterID": self.cluster_id,
                "fsName": self.fs_name,
                "secretName": self.secret_name,
                "path": self.path,
            }
        else:
            monitors = (
                self.monitors_addr.split(",")
                if isinstance(self.monitors_addr, str)
                else list(self.monitors_addr)
            )
            cephfs = {
                "inTree": True,
                "monitors": [m.strip() for m in monitors if m.strip()],
                "user": self.user or "admin",
                "secretName": self.secret_name,
                "path": self.path,
            }
        if self.secret_namespace is not None:
            cephfs["secretNamespace"] = self.secret_namespace
        return {
            "name": "cephfs",
            "mountPath": self.mount_path,
            "cephfs": cephfs,
            "capacity": self.capacity,
            "accessModes": ["ReadWriteMany"],
        }


def _either(name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """The old SDK's README and its parameter table spell some parameters differently."""
    if alias_value is not None and value is not None and alias_value != value:
        raise InvalidArgumentError(f"PaddleJob got {name}={value!r} and {alias}={alias_value!r}")
    return value if value is not None else alias_value


class PaddleJob:
    """One training job, with the old SDK's parameters (and its README's spellings).

    ``workload`` defaults to ``collective-job`` without parameter servers (``pservers=0``) and
    to ``paddlejob`` (the PaddleFlow operator) with them: the default workload has none.
    """

    def __init__(
        self,
        *,
        job_name: str,
        entry_point: str,
        runtime_image: str,
        memory: str | None = None,
        cpu_nums: int | str | None = None,
        pservers: int = 2,
        trainers: int = 3,
        gpu_nums: int | None = None,
        trainer_package: str | None = None,
        namespace: str | None = None,
        cephfs_volume: CephFSVolume | None = None,
        workload: str | None = None,
        cpu_num: int | str | None = None,
        gpu_num: int | None = None,
        use_gpu: bool | None = None,
        trainer_package_path: str | None = None,
    ) -> None:
        self.job_name = job_name
        self.entry_point = entry_point
        self.runtime_image = runtime_image
        self.memory = memory
        self.cpu_nums = _either("cpu_nums", cpu_nums, "cpu_num", cpu_num)
        self.pservers = pservers
        self.trainers = trainers
        gpus = _either("gpu_nums", gpu_nums, "gpu_num", gpu_num)
        if use_gpu is False and gpus:
            raise InvalidArgumentError(f"PaddleJob got use_gpu=False and gpu_nums={gpus}")
        # The original SDK's gpu_num defaulted to 1 when use_gpu was set.
        self.gpu_nums = int(gpus if gpus is not None else bool(use_gpu))
        self.trainer_package = _either(
            "trainer_package", trainer_package, "trainer_package_path", trainer_package_path
        )
        self.namespace = namespace or None  # the original SDK's default was ""
        self.cephfs_volume = cephfs_volume
        # paddlegen's default workload runs no parameter servers: a job with them goes to the
        # PaddleFlow operator's PaddleJob, as the original SDK's did.
        from paddlegen.workloads import DEFAULT_WORKLOAD, PS_WORKLOAD

        self.workload = workload or (PS_WORKLOAD if self.pservers else DEFAULT_WORKLOAD)

    def _spec_data(self) -> dict[str, Any]:
        from paddlegen.workloads import WORKLOADS

        sdk_workloads = [name for name, w in WORKLOADS.items() if w.trainer_identity]
        workload = WORKLOADS.get(self.workload)
        identity = workload.trainer_identity if workload else None
        if identity is None:
            what = f"workload '{self.workload}'" if workload else f"'{self.workload}' (no workload)"
            message = (
                f"{what} cannot run an entry_point: paddlegen gives its pods no TRAINER_ID and "
                f"TRAINERS to run one with; use one of: {', '.join(sdk_workloads)}"
            )
            raise SpecError(
                message,
                [
                    Diagnostic(
                        self._source, 1, 1, "error", "$.spec.workload", message, SDK_WORKLOAD.id
                    )
                ],
            )
        env, prefix = identity(self.trainers)
        spec: dict[str, Any] = {"workload": self.workload, "image": self.runtime_image}
        if self.trainer_package:
            spec["workingDir"] = self.trainer_package  # where build_docker.sh copied it
        spec.update(command=["sh", "-c"], args=[prefix + self.entry_point], env=env)
        requests = {
            k: str(v) for k, v in (("cpu", self.cpu_nums), ("memory", self.memory)) if v is not None
        }
        if requests:
            spec["resources"] = {"requests": requests}
            if self.memory is not None:
                spec["resources"]["limits"] = {"memory": str(self.memory)}
        if self.gpu_nums:
            spec["gpus"] = self.gpu_nums
        if self.pservers:
            spec["ps"] = {"replicas": self.pservers}
        spec["worker"] = {"replicas": self.trainers}
        if self.cephfs_volume is not None:
            spec["volumes"] = [self.cephfs_volume.to_volume()]
        metadata: dict[str, Any] = {"name": self.job_name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        return {
            "apiVersion": "paddlegen/v1",
            "kind": "TrainingJob",
            "metadata": metadata,
            "spec": spec,
        }

    @property
    def _source(self) -> str:
        return f"PaddleJob(job_name={self.job_name!r})"

    def to_yaml(self) -> str:
        """The spec as YAML text (without a schema modeline: no reference would hold wherever
        the text is saved; ``paddlegen init --schema`` shows the line to add)."""
        from paddlegen.authoring.init import spec_text

        return spec_text(self._spec_data(), "generated by paddlegen.sdk.PaddleJob")

    def validate(self) -> list[Diagnostic]:
        """Every finding (errors and warnings) for the spec this job makes."""
        return self._checked()[1]

    def to_spec(self) -> dict[str, Any]:
        """The TrainingJob spec as a dict; raises SpecError if it is invalid."""
        from paddlegen.pipeline.load import require_valid

        require_valid(self._document())
        return self._spec_data()

    def render(self, out_dir: str | Path) -> Path:
        """Write the kustomize directory ``out_dir/<job_name>``; returns its path.

        A job folder there that `paddlegen render` made from a spec file still naming the job
        is refused (SpecError), as the CLI refuses it, unless that file is this job's
        ``to_yaml()`` text: then the folder stays that file's."""
        from dataclasses import replace

        from paddlegen.output.stamp import Inputs
        from paddlegen.pipeline.build import refuse_takeover, render_document
        from paddlegen.pipeline.write import write_planned, writing

        out = Path(out_dir)
        text = self.to_yaml()
        # The stamp of the spec text to_yaml() gives, as `paddlegen render` computes it for
        # that text saved to a file: a later CLI render of the saved spec skips the job.
        digest = Inputs.of(None, None, argocd=True).digest(text.encode("utf-8"))
        rendered = render_document(self._document(), digest=digest, output=out)  # validated
        with writing(out):  # held while the stamp is read, as a CLI render holds it
            saved = self._saved_as(out / rendered.name, text)
            rendered = replace(rendered, file=saved) if saved else rendered
            refuse_takeover([rendered], out, None)
            write_planned([rendered], out, prune=False)
        return out / self.job_name

    @staticmethod
    def _saved_as(job_dir: Path, text: str) -> str | None:
        """The spec file ``job_dir``'s stamp names when it holds ``text``: the job's spec
        saved (``to_yaml``) and rendered by the CLI, whose folder this render keeps naming it."""
        from paddlegen.output.stamp import stamped_spec
        from paddlegen.reading import read_bytes

        spec = stamped_spec(job_dir)
        try:
            return spec if spec is not None and read_bytes(spec) == text.encode("utf-8") else None
        except OSError:
            return None

    def _document(self) -> Document:
        from paddlegen.spec.loader import parse_spec

        return parse_spec(self.to_yaml(), self._source)

    def _checked(self) -> tuple[Document, list[Diagnostic]]:
        from paddlegen.pipeline.load import validate_document

        doc = self._document()
        return doc, validate_document(doc)
