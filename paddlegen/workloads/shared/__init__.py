"""What more than one workload shares."""
