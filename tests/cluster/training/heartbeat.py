"""A native sidecar of the node tests (training/__init__.py with_init_container_and_sidecar):
it marks itself up in the pod's scratch volume, which its startupProbe waits for and the init
container after it checks, then runs until the kubelet stops it once training has ended. It
leaves on SIGTERM: as its container's PID 1 it would ignore the signal without a handler, and
the pod would wait out its grace period before it could succeed."""

import pathlib
import signal
import sys
import time

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
pathlib.Path("/scratch/sidecar-up").touch()
time.sleep(1e9)  # for ever, as far as a training job goes
