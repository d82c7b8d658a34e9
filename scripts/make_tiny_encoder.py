#!/usr/bin/env python3
"""A tiny deterministic FP32 "encoder" for tests, with the same interface as the MiniLM ONNX file.

Inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq]); output last_hidden_state
(float32 [batch, seq, 16]) = tanh((E[input_ids mod 97] + T[token_type_ids]) @ W + b). Every batch row is computed
independently of the others (no row-coupling operator such as DynamicQuantizeLinear), so Serval may batch it.
Weights come from a fixed seed: the file is the same on every run (about 8 KB).

With --token-embeddings, the same encoder exported the way some sentence-transformers exports are: the token
embeddings (the same values as last_hidden_state above) are called token_embeddings, and a first output
sentence_embedding (float32 [batch, 16], the unmasked mean over the sequence) comes before them. Serval reads it with
the descriptor field `output: token_embeddings`; the tests check that the default output name is refused with the
graph's outputs listed.

    pip install onnx numpy
    python3 scripts/make_tiny_encoder.py platform-core/src/test/resources/models/tiny-fp32-encoder/model.onnx
    python3 scripts/make_tiny_encoder.py --token-embeddings \
        platform-core/src/test/resources/models/tiny-encoder-token-embeddings/model.onnx
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, TYPES, DIM = 97, 2, 16


def main(out_path: str, token_embeddings: bool) -> None:
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
    ]
    dims = ["batch_size", "sequence_length"]
    initializers = [emb, typ, w, b, vocab]
    if token_embeddings:
        nodes += [
            helper.make_node("Tanh", ["pre"], ["token_embeddings"]),
            helper.make_node("ReduceMean", ["token_embeddings"], ["sentence_embedding"], axes=[1], keepdims=0),
        ]
        outputs = [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch_size", DIM]),
                   helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, dims + [DIM])]
    else:
        nodes.append(helper.make_node("Tanh", ["pre"], ["last_hidden_state"]))
        outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [DIM])]
    graph = helper.make_graph(
        nodes,
        "tiny-fp32-encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
         for n in ("input_ids", "attention_mask", "token_type_ids")],
        outputs,
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="serval-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out_path)


if __name__ == "__main__":
    args = sys.argv[1:]
    renamed = args[:1] == ["--token-embeddings"]
    if renamed:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], renamed)
