"""The tiny causal LM that PaddleFormers' trainer pretrains on the real node
(tests/cluster/training/tiny_lm): a model config and a byte-level tokenizer that agree, small
enough for a ConfigMap, and a training config that reads them where the pods mount them."""

from __future__ import annotations

import json

import yaml

from tests.conftest import ROOT

TINY_LM = ROOT / "tests" / "cluster" / "training" / "tiny_lm"


def test_the_model_and_the_tokenizer_agree_on_every_token():
    config = json.loads((TINY_LM / "config.json").read_text(encoding="utf-8"))
    tokenizer = json.loads((TINY_LM / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tokenizer["model"]["vocab"]
    (eos,) = tokenizer["added_tokens"]
    # every byte one token (no merges: nothing to learn offline), and the end of text
    assert sorted(vocab.values()) == list(range(256)) + [eos["id"]]
    assert tokenizer["model"]["merges"] == []
    assert config["vocab_size"] == len(vocab)
    assert config["eos_token_id"] == config["pad_token_id"] == eos["id"]
    settings = json.loads((TINY_LM / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert settings["eos_token"] == eos["content"]
    assert config["fuse_rms_norm"] is False  # the fused kernel has no CPU version


def test_the_training_config_reads_the_mounted_files_and_downloads_nothing():
    train = yaml.safe_load((TINY_LM / "train.yaml").read_text(encoding="utf-8"))
    assert train["model_name_or_path"] == "/llm"
    assert train["train_dataset_path"] == "/llm/train.jsonl"
    assert train["continue_training"] is False  # random weights from config.json
    lines = (TINY_LM / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(len(json.loads(line)["text"].encode()) < train["max_seq_len"] for line in lines)
    assert sum(path.stat().st_size for path in TINY_LM.iterdir()) < 16_000
