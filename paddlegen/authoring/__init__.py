"""Writing specs: init, explain, dockerfile, and import from existing manifests."""
