#!/usr/bin/env python3
"""Reference reranking scores for the tiny cross-encoder (scripts/make_tiny_cross_encoder.py), computed independently
of Serval: Hugging Face tokenizers' pair encoding ([CLS] query [SEP] document [SEP], type ids 0 then 1) truncated at
MAX_LENGTH tokens with the longest_first strategy (what transformers' tokenizer(query, document, truncation=True) and
sentence-transformers' CrossEncoder do), no padding (one pair per inference), onnxruntime on the same model.onnx.
The score is the sigmoid of the one logit (CrossEncoder's default activation for a one-label model).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -r scripts/requirements-reference.txt onnx
    /tmp/venv/bin/python scripts/make_rerank_reference.py
        writes platform-core/src/test/resources/reference/tiny-cross-encoder-reference.json
"""
import json
import os
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # read when the runtime starts: no uploads to Microsoft

import numpy as np  # noqa: E402 (after the telemetry switch)
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "platform-core" / "src" / "main" / "resources" / "serval" / "models" / "tiny-reranker"
OUT = ROOT / "platform-core" / "src" / "test" / "resources" / "reference" / "tiny-cross-encoder-reference.json"
MAX_LENGTH = 24  # what the Java test loads the model with

LONG_DOCUMENT = " ".join(["the quick brown fox jumps over the lazy dog again"] * 8)  # ~80 tokens
LONG_QUERY = "is this a good movie and is the service fine and the food great or bad or awful, okay?"  # ~22 tokens

CASES = [
    {"query": "a quick fox", "documents": [
        "the quick brown fox jumps over the lazy dog",
        "i love this movie",
        "fox",
        LONG_DOCUMENT,  # the document alone is truncated
        "Zürich café: naïve fox 東京 🦊, ÉLAN!",  # accents stripped, CJK split, emoji unknown
        "ok",
    ]},
    {"query": LONG_QUERY, "documents": [
        LONG_DOCUMENT,  # both sides truncated
        "good",  # the query alone is truncated
        "the food was great but the service was terrible.",
    ]},
    {"query": "Ünïcödé 日本 query?", "documents": ["日本 and Zürich", "the day was fine", LONG_DOCUMENT]},
]


def main() -> None:
    tokenizer = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
    tokenizer.no_padding()
    session = ort.InferenceSession(str(MODEL / "model.onnx"), providers=["CPUExecutionProvider"])
    cases = []
    for case in CASES:
        rows = {"ids": [], "type_ids": [], "logits": [], "scores": [], "tokens": []}
        for document in case["documents"]:
            encoding = tokenizer.encode(case["query"], document)
            ids = np.array([encoding.ids], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                     "token_type_ids": np.array([encoding.type_ids], dtype=np.int64)}
            logit = float(session.run(["logits"], feeds)[0][0, 0])
            rows["ids"].append(encoding.ids)
            rows["type_ids"].append(encoding.type_ids)
            rows["logits"].append(logit)
            rows["scores"].append(float(1 / (1 + np.exp(-np.float64(logit)))))
            rows["tokens"].append(len(encoding.ids))
        cases.append({"query": case["query"], "documents": case["documents"], **rows})
    OUT.write_text(json.dumps({"max_length": MAX_LENGTH, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
    for case in cases:
        print(case["tokens"], [round(s, 4) for s in case["scores"]], repr(case["query"][:30]))


if __name__ == "__main__":
    main()
