"""Data-pipeline throughput: ``cellkit.dataset`` against the same pipeline in raw grain and in NumPy.

    python -m benchmarks.dataset            # about half a minute
    python -m benchmarks.dataset --smoke    # tiny sizes

One epoch of an MNIST-shaped pipeline (28x28x1 uint8 images, labels): shuffle,
``Rescale`` to float32 in a ``map``, batch 64. The variants are cellkit's
``NumpySlicesDataset(...).map(...).batch(...)`` iterated with
``create_tuple_iterator(output_numpy=True)``, the same steps written directly
as a ``grain.MapDataset`` read with one thread as cellkit reads it by default (the floor
cellkit builds on; grain's own default of 16 read threads was about 2x slower than one
on a 2-core machine), and a hand-written
NumPy loop (permute, slice, rescale). Timed interleaved (``benchmarks.timing``);
the JSON goes to ``benchmarks/results/dataset-<cpus>cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib

import grain
import numpy as np

import cellkit.dataset as ds
from cellkit.dataset import vision

from . import timing

RESULTS = pathlib.Path(__file__).parent / "results"


def _rescale(row):
    return (row[0].astype(np.float32) / 255.0, row[1])


def _collate(rows):
    return tuple(np.stack(c) for c in zip(*rows))


def variants(images, labels, batch):
    def cellkit_epoch():
        d = ds.NumpySlicesDataset((images, labels), column_names=["image", "label"])
        d = d.map(vision.Rescale(1.0 / 255.0, 0.0), input_columns="image").batch(batch)
        return sum(1 for _ in d.create_tuple_iterator(output_numpy=True))

    class Rows:
        def __len__(self):
            return len(images)

        def __getitem__(self, i):
            return images[i], labels[i]

    def grain_epoch():
        d = grain.MapDataset.source(Rows()).shuffle(seed=0).map(_rescale).batch(batch, batch_fn=_collate)
        return sum(1 for _ in d.to_iter_dataset(grain.ReadOptions(num_threads=1)))

    rng = np.random.default_rng(0)

    def numpy_epoch():
        order = rng.permutation(len(images))
        n = 0
        for start in range(0, len(images), batch):
            idx = order[start:start + batch]
            _ = (images[idx].astype(np.float32) / 255.0, labels[idx])
            n += 1
        return n

    return {"cellkit.dataset": cellkit_epoch, "grain": grain_epoch, "numpy": numpy_epoch}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args(argv)
    rows = 256 if args.smoke else args.rows
    repeats = 2 if args.smoke else args.repeats
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (rows, 28, 28, 1), dtype=np.uint8)
    labels = rng.integers(0, 10, rows).astype(np.int32)
    runs = variants(images, labels, 64)
    counts = {name: run() for name, run in runs.items()}
    assert len(set(counts.values())) == 1, counts
    samples = timing.interleaved(runs, repeats, 1)
    base = timing.summarize(samples["grain"])["median_s"]
    table = {}
    print(f"one epoch of {rows} rows, batch 64 ({counts['grain']} batches)")
    for name, values in samples.items():
        s = timing.summarize(values)
        table[name] = {**s, "rows_per_s": rows / s["median_s"], "ratio_to_grain": s["median_s"] / base}
        print(f"  {name:16s} {s['median_s'] * 1e3:9.2f} ms/epoch  {rows / s['median_s']:12,.0f} rows/s  "
              f"{s['median_s'] / base:5.2f}x grain")
    out = args.out or RESULTS / f"dataset-{os.cpu_count()}cpu{'-smoke' if args.smoke else ''}.json"
    if not args.smoke or args.out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"rows": rows, "batch": 64, "results": table}, indent=1) + "\n")
    return table


if __name__ == "__main__":
    main()
