"""The registry of what `--with` adds to the control plane, in the order `up` starts them.
A new component is one module with a `Component` and one entry here."""

from __future__ import annotations

from .argocd import ArgoCD
from .base import Component
from .jobset import JobSet
from .kueue import Kueue
from .kwok import Kwok
from .node import Node
from .paddle_llm import PaddleLLM
from .paddle_operator import PaddleOperator
from .trainer import Trainer
from .training_operator import TrainingOperator
from .volcano import Volcano

COMPONENTS: dict[str, Component] = {
    component.name: component
    for component in (
        Node(),
        PaddleLLM(),
        Kwok(),
        PaddleOperator(),
        TrainingOperator(),
        Volcano(),
        JobSet(),
        Trainer(),
        Kueue(),
        ArgoCD(),
    )
}
