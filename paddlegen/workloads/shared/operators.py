"""What the PaddleJob operators give the pods, which their workloads and the conversions from
them (paddlegen import --to) read: the env each sets itself, and the Kubeflow PaddleJob's bound
on restarts."""

# paddle-operator v0.3.5 controllers/paddlejob_helper.go. Its ConfigMap reaches the container
# by envFrom, which the spec's env overrides (constructConfigMap, 240-277); the pod env it
# appends after the spec's replaces it (constructPod, 300-340).
_FROM_CONFIGMAP = "the operator's ConfigMap (yours would override the operator's)"
_APPENDED = "the operator, after the spec's env (it would replace yours)"
PADDLEFLOW_ENV = {
    **dict.fromkeys(
        (
            "PADDLE_PORT",
            "TRAINER_PORTS_NUM",
            "PADDLE_PSERVERS_IP_PORT_LIST",
            "PADDLE_TRAINER_ENDPOINTS",
            "PADDLE_TRAINERS",
            "PADDLE_TRAINERS_NUM",
            "PADDLE_HETER_ENDPOINTS",
            "PADDLE_WITH_GLOO",
            "PADDLE_GLOO_RENDEZVOUS",
            "PADDLE_GLOO_HTTP_ENDPOINT",
        ),
        _FROM_CONFIGMAP,
    ),
    **dict.fromkeys(
        (
            "POD_IP",
            "PADDLE_TRAINER_ID",
            "TRAINING_ROLE",
            "PADDLE_TRAINING_ROLE",
            "PADDLE_ELASTIC_JOB_ID",
            "PADDLE_ELASTIC_NP",
            "PADDLE_ELASTIC_TIMEOUT",
        ),
        _APPENDED,
    ),
}
# training-operator v1.9.0 pkg/controller.v1/paddlepaddle/envvar.go (setPodEnv) appends these
# after the spec's env, so a value of the spec's own would be replaced.
KUBEFLOW_ENV = dict.fromkeys(
    (
        "PYTHONUNBUFFERED",
        "PADDLE_JOB_ID",
        "PADDLE_NNODES",
        "POD_IP_DUMMY",
        "PADDLE_MASTER",
        "PADDLE_SERVER_NUM",
        "PADDLE_TRAINER_NUM",
    ),
    "the operator, after the spec's env (it would replace yours)",
)
# paddlegen's runPolicy.backoffLimit for a Kubeflow PaddleJob whose spec gives none: a batch/v1
# Job's default spec.backoffLimit (workloads/kubeflow_paddlejob).
JOB_BACKOFF_LIMIT = 6
