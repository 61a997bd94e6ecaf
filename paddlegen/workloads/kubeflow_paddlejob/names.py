"""The Kubeflow PaddleJob's replica types, by the spec role each one renders, and the
restartPolicy they render when the spec gives none."""

ROLES = {"ps": "Master", "worker": "Worker"}


def default_restart_policy(ps: bool) -> str:
    """The replicas' restartPolicy when the spec gives none (``context`` says why)."""
    return "OnFailure" if ps else "Never"
