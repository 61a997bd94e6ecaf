"""The Kubeflow PaddleJob's replica types, by the spec role each one renders."""

ROLES = {"ps": "Master", "worker": "Worker"}
