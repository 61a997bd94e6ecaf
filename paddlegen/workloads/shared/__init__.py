"""What several workloads share, so that no workload's folder imports another's: Paddle's
launcher and its contract (``launcher``, ``import_launcher``), a JobSet's group restarts
(``jobset``), and the rules of more than one workload (``rules``)."""
