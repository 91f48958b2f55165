#!/usr/bin/env python3
"""Writes the seed corpus of tessera_c_api_fuzzer into tests/fuzz/corpus (run by hand, output
committed; CI only reads it).

The fuzzer reads its choices with FuzzedDataProvider, which takes integers from the END of the
input: the last byte picks how many operations run (1 + b % 3), the one before it the first
operation (b % OPERATIONS, in c_api_fuzzer.cpp's k_operations order). A seed is therefore a
deterministic pseudo-random body (plausible values most of the time, as random bytes are) followed
by those two bytes: SEEDS_PER_OPERATION seeds per operation family, one operation each, plus a few
that chain three operations. Regression seeds for bugs the fuzzer found are added by hand as
corpus/regression-*.
"""
import pathlib
import random

OPERATIONS = [
    "activation_forward", "activation_backward", "convolution_forward", "convolution_backward",
    "convolution_fused", "pooling", "softmax", "lrn", "batch_norm", "layer_and_rms_norm",
    "tensor_ops", "matmul", "listing",
]
SEEDS_PER_OPERATION = 3
BODY_BYTES = (96, 160, 320)


def main():
    corpus = pathlib.Path(__file__).resolve().parent / "corpus"
    corpus.mkdir(exist_ok=True)
    for old in corpus.glob("seed-*"):
        old.unlink()
    rng = random.Random(20261203)
    for index, name in enumerate(OPERATIONS):
        for i in range(SEEDS_PER_OPERATION):
            body = bytes(rng.randrange(256) for _ in range(BODY_BYTES[i]))
            seed = body + bytes([index, 0])  # operation `index`, then 1 + 0 % 3 = 1 operation
            (corpus / f"seed-{index:02d}-{name}-{i}").write_bytes(seed)
    for i in range(4):
        body = bytes(rng.randrange(256) for _ in range(512))
        (corpus / f"seed-chain-{i}").write_bytes(body + bytes([rng.randrange(len(OPERATIONS)), 2]))


if __name__ == "__main__":
    main()
