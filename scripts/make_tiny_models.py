#!/usr/bin/env python3
"""Tiny deterministic ONNX models (a few KB each) for the text-classification and tensor model kinds, and the
outputs numpy computes for fixed inputs, which the Java tests compare Serval's answers with.

  models/tiny-classifier/  model.onnx + tokenizer.json: a toy sequence classifier with a BERT-style WordPiece
                           tokenizer of its own (125 entries). Inputs input_ids, attention_mask (int64 [batch, seq]),
                           no token_type_ids (like DistilBERT); output logits (float32 [batch, 3]), labels
                           negative, neutral, positive. Per token u = tanh(E[id] @ W1 + b1) @ W2 + S[id], then the mean
                           of u over the unmasked positions, plus b2. S gives sentiment words a push towards their
                           label, so that "i love it" reads positive. Every batch row is computed on its own (no
                           row-coupling operator), so Serval may batch it, and padding does not change a row's logits.
  models/tiny-classifier-renamed/  model.onnx (platform-core only): the same classifier with its logits called
                           class_logits, after a first output mean (float32 [batch, 3], the mean of u, without b2);
                           read with the descriptor field `output: class_logits`. Uses tiny-classifier's tokenizer.
  models/tiny-mlp/         model.onnx: input (float32 [batch, 4]) -> relu(input @ W1 + b1) @ W2 + b2 -> output
                           (float32 [batch, 2]).
  models/tiny-dtypes/      model.onnx: one input of each datatype, all of length n: a (float64 [n]), b (int32 [n]),
                           c (int64 [n]), d (bool [n]); outputs a_out = 2a (float64), b_out = b + 1 (int32),
                           c_out = 3c (int64), d_out = not d (bool), total = a + b + c + d (float64).
  models/tiny-uint8/       model.onnx (platform-core only): y = x + k on uint8 [2], a datatype Serval does not carry,
                           with the initializer k also listed as a graph input, as older exporters do.
  models/tiny-reshape/     model.onnx (platform-core only): y = Reshape(x, shape) for x (float32 [batch, n]) and shape
                           (int64 [rank]): runs when the element counts agree (the probe's zeros do: a 0 copies the
                           dimension), and ONNX Runtime refuses other shapes while running the Reshape node, though
                           the graph's signature takes them (an input error found only inside the model).

The models go to platform-core/src/test/resources/models/ and, the same files, to
platform-api/src/test/resources/models/; the expected outputs to
platform-core/src/test/resources/reference/tiny-models-expected.json. Weights come from a fixed seed: every run writes
the same files. ONNX IR version 8, opset 17 (what ONNX Runtime 1.29 loads).

    pip install onnx numpy
    python3 scripts/make_tiny_models.py
"""
import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "platform-core" / "src" / "test" / "resources"
API = ROOT / "platform-api" / "src" / "test" / "resources"

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ("the a an i it is was this that and but not very so movie film service food product day quick brown fox "
         "jumps over lazy dog again hello world good great love excellent bad terrible hate awful ok okay fine").split()
POSITIVE = {"good", "great", "love", "excellent"}
NEGATIVE = {"bad", "terrible", "hate", "awful"}
NEUTRAL = {"ok", "okay", "fine"}
PUNCTUATION = list(".,!?'#-:;")
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
VOCAB = SPECIAL + PUNCTUATION + LETTERS + ["##" + c for c in LETTERS] + WORDS
IDS = {token: i for i, token in enumerate(VOCAB)}
LABELS = ["negative", "neutral", "positive"]
MAX_LENGTH = 16  # what the tests load the classifier with

CLASSIFIER_TEXTS = [
    "i love it",
    "this movie was terrible!",
    "ok",
    "the service was fine, the food was great.",
    "Hello World",
    "zebra crossing",  # pieces from letters: ## continuations
    "the quick brown fox jumps over the lazy dog again and again and again",  # over 16 tokens: truncated
]


def tokenizer_json() -> dict:
    """A Hugging Face tokenizer.json for VOCAB in the shape of bert-base-uncased's (no truncation, no padding)."""
    def added(token):
        return {"id": IDS[token], "content": token, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}

    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(t) for t in SPECIAL],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [IDS[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": IDS},
    }


def tokenize(text: str, max_length: int) -> list:
    """What the tokenizer above gives for ASCII text: lowercase, split at spaces and punctuation, greedy WordPiece,
    truncated to max_length with [CLS] and [SEP]. The Java test checks that Serval's tokenizer agrees."""
    pieces = []
    for word in re.findall(r"[a-z0-9]+|[^a-z0-9\s]", text.lower()):
        start, word_pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start and ("##" if start else "") + word[start:end] not in IDS:
                end -= 1
            if end == start:
                word_pieces = ["[UNK]"]
                break
            word_pieces.append(("##" if start else "") + word[start:end])
            start = end
        pieces += word_pieces
    return [IDS["[CLS]"]] + [IDS[p] for p in pieces[:max_length - 2]] + [IDS["[SEP]"]]


def save(model: onnx.ModelProto, name: str, extra: dict = None, roots=(CORE, API)) -> None:
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    for root in roots:
        directory = root / "models" / name
        directory.mkdir(parents=True, exist_ok=True)
        onnx.save(model, directory / "model.onnx")
        for file_name, text in (extra or {}).items():
            (directory / file_name).write_text(text)


def opset17(graph) -> onnx.ModelProto:
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="serval-tests")


def classifier(rng) -> dict:
    vocab, dim, hidden = len(VOCAB), 8, 8
    e = rng.normal(0, 1, (vocab, dim)).astype(np.float32)
    w1 = rng.normal(0, 0.5, (dim, hidden)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (hidden,)).astype(np.float32)
    w2 = rng.normal(0, 0.5, (hidden, len(LABELS))).astype(np.float32)
    b2 = rng.normal(0, 0.1, (len(LABELS),)).astype(np.float32)
    s = rng.normal(0, 0.3, (vocab, len(LABELS))).astype(np.float32)
    for words, push in ((NEGATIVE, [8, 0, -8]), (NEUTRAL, [0, 5, 0]), (POSITIVE, [-8, 0, 8])):
        for word in words:
            s[IDS[word]] += np.array(push, dtype=np.float32)
    consts = [numpy_helper.from_array(a, n) for a, n in (
        (e, "E"), (w1, "W1"), (b1, "b1"), (w2, "W2"), (b2, "b2"), (s, "S"),
        (np.array(vocab, dtype=np.int64), "vocab"), (np.array([2], dtype=np.int64), "axis2"),
        (np.array([1], dtype=np.int64), "axis1"))]
    nodes = [
        helper.make_node("Mod", ["input_ids", "vocab"], ["ids"]),
        helper.make_node("Gather", ["E", "ids"], ["x"]),
        helper.make_node("MatMul", ["x", "W1"], ["xw"]),
        helper.make_node("Add", ["xw", "b1"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h"]),
        helper.make_node("MatMul", ["h", "W2"], ["t"]),
        helper.make_node("Gather", ["S", "ids"], ["sv"]),
        helper.make_node("Add", ["t", "sv"], ["u"]),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "axis2"], ["m3"]),
        helper.make_node("Mul", ["u", "m3"], ["um"]),
        helper.make_node("ReduceSum", ["um", "axis1"], ["num"], keepdims=0),
        helper.make_node("ReduceSum", ["m", "axis1"], ["den"], keepdims=1),
        helper.make_node("Div", ["num", "den"], ["mean"]),
        helper.make_node("Add", ["mean", "b2"], ["logits"]),
    ]
    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes, "tiny-classifier",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", len(LABELS)])],
        initializer=consts)
    save(opset17(graph), "tiny-classifier", {"tokenizer.json": json.dumps(tokenizer_json(), indent=1) + "\n"})
    renamed = helper.make_graph(
        nodes[:-1] + [helper.make_node("Add", ["mean", "b2"], ["class_logits"])], "tiny-classifier-renamed",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["batch_size", len(LABELS)]),
         helper.make_tensor_value_info("class_logits", TensorProto.FLOAT, ["batch_size", len(LABELS)])],
        initializer=consts)
    save(opset17(renamed), "tiny-classifier-renamed", roots=(CORE,))

    cases = []
    for text in CLASSIFIER_TEXTS:
        ids = np.array(tokenize(text, MAX_LENGTH))
        u = np.tanh(e[ids] @ w1 + b1) @ w2 + s[ids]
        logits = u.mean(axis=0) + b2
        scores = np.exp(logits - logits.max())
        scores /= scores.sum()
        cases.append({"text": text, "ids": ids.tolist(), "logits": logits.tolist(), "scores": scores.tolist(),
                      "label": LABELS[int(np.argmax(scores))]})
    return {"labels": LABELS, "max_length": MAX_LENGTH, "cases": cases}


def mlp(rng) -> dict:
    w1 = rng.normal(0, 0.7, (4, 8)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (8,)).astype(np.float32)
    w2 = rng.normal(0, 0.7, (8, 2)).astype(np.float32)
    b2 = rng.normal(0, 0.1, (2,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["input", "W1"], ["xw"]),
        helper.make_node("Add", ["xw", "b1"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["h"]),
        helper.make_node("MatMul", ["h", "W2"], ["hw"]),
        helper.make_node("Add", ["hw", "b2"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny-mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 2])],
        initializer=[numpy_helper.from_array(a, n) for a, n in ((w1, "W1"), (b1, "b1"), (w2, "W2"), (b2, "b2"))])
    save(opset17(graph), "tiny-mlp")

    x = rng.normal(0, 1, (3, 4)).astype(np.float32)
    y = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    return {"input": x.tolist(), "output": y.tolist()}


def dtypes() -> dict:
    n = ["n"]
    nodes = [
        helper.make_node("Mul", ["a", "two"], ["a_out"]),
        helper.make_node("Add", ["b", "one"], ["b_out"]),
        helper.make_node("Mul", ["c", "three"], ["c_out"]),
        helper.make_node("Not", ["d"], ["d_out"]),
        helper.make_node("Cast", ["b"], ["b64"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["c"], ["c64"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["d"], ["d64"], to=TensorProto.DOUBLE),
        helper.make_node("Sum", ["a", "b64", "c64", "d64"], ["total"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny-dtypes",
        [helper.make_tensor_value_info("a", TensorProto.DOUBLE, n),
         helper.make_tensor_value_info("b", TensorProto.INT32, n),
         helper.make_tensor_value_info("c", TensorProto.INT64, n),
         helper.make_tensor_value_info("d", TensorProto.BOOL, n)],
        [helper.make_tensor_value_info("a_out", TensorProto.DOUBLE, n),
         helper.make_tensor_value_info("b_out", TensorProto.INT32, n),
         helper.make_tensor_value_info("c_out", TensorProto.INT64, n),
         helper.make_tensor_value_info("d_out", TensorProto.BOOL, n),
         helper.make_tensor_value_info("total", TensorProto.DOUBLE, n)],
        initializer=[numpy_helper.from_array(np.array(2.0, dtype=np.float64), "two"),
                     numpy_helper.from_array(np.array(1, dtype=np.int32), "one"),
                     numpy_helper.from_array(np.array(3, dtype=np.int64), "three")])
    save(opset17(graph), "tiny-dtypes")

    a = np.array([0.5, -1.25, 1e-300], dtype=np.float64)
    b = np.array([7, -8, 2147483646], dtype=np.int32)
    c = np.array([5_000_000_000, -3, 0], dtype=np.int64)
    d = np.array([True, False, True])
    return {
        "inputs": {"a": a.tolist(), "b": b.tolist(), "c": c.tolist(), "d": d.tolist()},
        "outputs": {"a_out": (a * 2).tolist(), "b_out": (b + 1).tolist(), "c_out": (c * 3).tolist(),
                    "d_out": (~d).tolist(), "total": (a + b + c + d).tolist()},
    }


def uint8() -> None:
    k = numpy_helper.from_array(np.array([1, 2], dtype=np.uint8), "k")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "k"], ["y"])], "tiny-uint8",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [2]),
         helper.make_tensor_value_info("k", TensorProto.UINT8, [2])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2])],
        initializer=[k])
    save(opset17(graph), "tiny-uint8", roots=(CORE,))


def reshape() -> None:
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "tiny-reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n"]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, ["rank"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m"])])
    save(opset17(graph), "tiny-reshape", roots=(CORE,))


def main() -> None:
    rng = np.random.default_rng(20261123)
    expected = {"tiny-classifier": classifier(rng), "tiny-mlp": mlp(rng), "tiny-dtypes": dtypes()}
    uint8()
    reshape()
    reference = CORE / "reference" / "tiny-models-expected.json"
    reference.write_text(json.dumps(expected, indent=1) + "\n")
    for case in expected["tiny-classifier"]["cases"]:
        print(case["label"], [round(p, 3) for p in case["scores"]], repr(case["text"]))


if __name__ == "__main__":
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    main()
