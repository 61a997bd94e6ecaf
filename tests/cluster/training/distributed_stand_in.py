"""A stand-in for the entry point of the legacy distributed image (start_paddle.py of
paddlepaddle/paddle-tutorial:k8s_train, seed 001: Paddle v0.10, which cannot be rebuilt). It
does with the pod what that script does, by the same means, and prints what it found:

- the env contract paddlegen renders for `distributed-job`;
- peer discovery: it lists the Job's pods through the API server with the pod's
  ServiceAccount token (getPodList: /api/v1/namespaces/<ns>/pods?labelSelector=job-name=<job>)
  until CONF_PADDLE_GRADIENT_NUM of them run, and takes its trainer id from its IP's place
  among theirs, sorted (getIdMap);
- the ports: it listens where its pserver would (CONF_PADDLE_PORT and the ports after it,
  CONF_PADDLE_PORTS_NUM + CONF_PADDLE_PORTS_NUM_SPARSE in all) and answers each connection
  with `trainer <id>`, until each port was reached once (the test comes through the node's
  hostPorts)."""

import json
import os
import socket
import ssl
import time
import urllib.request

ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
CONTRACT = ("JOB_NAME", "JOB_PATH", "JOB_NAMESPACE", "TRAIN_CONFIG_DIR", "CONF_PADDLE_NIC",
            "CONF_PADDLE_PORT", "CONF_PADDLE_PORTS_NUM", "CONF_PADDLE_PORTS_NUM_SPARSE",
            "CONF_PADDLE_GRADIENT_NUM", "TRAINER_COUNT")  # fmt: skip
env = {name: os.environ[name] for name in CONTRACT}
print("contract " + json.dumps(env, sort_keys=True), flush=True)
assert os.path.isdir(env["JOB_PATH"]), env["JOB_PATH"]
assert os.path.isdir(f"/sys/class/net/{env['CONF_PADDLE_NIC']}"), env["CONF_PADDLE_NIC"]

api = f"https://{os.environ['KUBERNETES_SERVICE_HOST']}:{os.environ['KUBERNETES_SERVICE_PORT']}"
url = (
    f"{api}/api/v1/namespaces/{env['JOB_NAMESPACE']}/pods?labelSelector=job-name={env['JOB_NAME']}"
)
with open(f"{ACCOUNT}/token") as token:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token.read()}"})
tls = ssl.create_default_context(cafile=f"{ACCOUNT}/ca.crt")
wanted = int(env["CONF_PADDLE_GRADIENT_NUM"])
while True:
    with urllib.request.urlopen(request, context=tls, timeout=10) as answer:
        pods = json.load(answer)["items"]
    ips = sorted(p["status"].get("podIP", "") for p in pods if p["status"]["phase"] == "Running")
    if len(ips) == wanted and all(ips):
        break
    time.sleep(1)
trainer = ips.index(socket.gethostbyname(socket.gethostname()))
print(f"peers {','.join(ips)} trainer {trainer}", flush=True)

first = int(env["CONF_PADDLE_PORT"])
count = int(env["CONF_PADDLE_PORTS_NUM"]) + int(env["CONF_PADDLE_PORTS_NUM_SPARSE"])
listeners = []
for port in range(first, first + count):
    listener = socket.create_server(("", port))
    listener.settimeout(50)
    listeners.append(listener)
print(f"listening on {first}-{first + count - 1}", flush=True)
for listener in listeners:
    connection, peer = listener.accept()
    with connection:
        connection.sendall(f"trainer {trainer}\n".encode())
    print(f"port {listener.getsockname()[1]} reached from {peer[0]}", flush=True)
