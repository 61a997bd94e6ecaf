"""What several workloads share, so that no workload's folder imports another's: Paddle's
launcher and its contract (``launcher``, ``import_launcher``) and a JobSet's group restarts
(``jobset``)."""
