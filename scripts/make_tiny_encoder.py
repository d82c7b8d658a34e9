#!/usr/bin/env python3
"""A tiny deterministic FP32 "encoder" for tests, with the same interface as the MiniLM ONNX file.

Inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq]); output last_hidden_state
(float32 [batch, seq, 16]) = tanh((E[input_ids mod 97] + T[token_type_ids]) @ W + b). Every batch row is computed
independently of the others (no row-coupling operator such as DynamicQuantizeLinear), so Serval may batch it.
Weights come from a fixed seed: the file is the same on every run (about 8 KB).

    pip install onnx numpy
    python3 scripts/make_tiny_encoder.py platform-core/src/test/resources/models/tiny-fp32-encoder/model.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, TYPES, DIM = 97, 2, 16


def main(out_path: str) -> None:
    rng = np.random.default_rng(20261122)
    emb = numpy_helper.from_array(rng.normal(0, 1, (VOCAB, DIM)).astype(np.float32), "E")
    typ = numpy_helper.from_array(rng.normal(0, 0.1, (TYPES, DIM)).astype(np.float32), "T")
    w = numpy_helper.from_array(rng.normal(0, 0.5, (DIM, DIM)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.normal(0, 0.1, (DIM,)).astype(np.float32), "b")
    vocab = numpy_helper.from_array(np.array(VOCAB, dtype=np.int64), "vocab")
    nodes = [
        helper.make_node("Mod", ["input_ids", "vocab"], ["ids"]),
        helper.make_node("Gather", ["E", "ids"], ["tok"]),
        helper.make_node("Gather", ["T", "token_type_ids"], ["seg"]),
        helper.make_node("Add", ["tok", "seg"], ["x"]),
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["last_hidden_state"]),
    ]
    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes,
        "tiny-fp32-encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
         for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [DIM])],
        initializer=[emb, typ, w, b, vocab],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="serval-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
