"""GitOps: the Argo CD Applications, ApplicationSet, CMP plugin and health checks."""
