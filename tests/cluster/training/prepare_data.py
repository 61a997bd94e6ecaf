"""The data Job of the `node` tests: one synthetic data set (x, y = x.w + b), split into
SPLIT_COUNT shards `part-<i>.npy` under OUT_DIR, as paddlegen's data Job contract says."""

import os

import numpy as np

out, parts = os.environ["OUT_DIR"], int(os.environ["SPLIT_COUNT"])
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
x = rng.random((512, 4), dtype="float32")
y = x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25
rows = np.hstack([x, y])
for part in range(parts):
    np.save(f"{out}/part-{part}.npy", rows[part::parts])
print(f"wrote {parts} shards to {out}")
