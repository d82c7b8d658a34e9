#!/usr/bin/env python3
"""Accuracy of quantised all-MiniLM-L6-v2 models against the fp32 export, on texts that are not the calibration set.

For each model given with --model NAME=FOLDER (a Serval version folder: model.onnx, tokenizer.json) it embeds the same
texts as Serval does (tokenizer.json with truncation at --max-length, 256 as Serval's default model.yaml, special
tokens, one text per inference, masked mean pooling over last_hidden_state, L2 normalisation) and compares them with
the fp32 model's vectors (--reference, by default the fp32 export from the langchain4j jar in ~/.m2):

- cosine per text: median, 1st percentile, minimum, and the share below 0.99;
- neighbours: for each of --queries texts, its 10 nearest texts by the fp32 vectors against by the model's (recall@10);
- partners: each of --pairs paragraphs split in two halves (its first sentences against the rest), the rank of the
  second half among all texts and second halves (the paragraph itself left out) for the first half as query, and how
  often the model ranks it as fp32 does;
- batch invariance (with --batch-check): a text's vector alone against the same text padded in a length-sorted batch
  of 16 (largest element difference over all texts), the property that lets Serval batch a model;
- raw cost (with --speed): the process CPU time per text of one onnxruntime thread at batch 1 and over length-sorted
  batches of 16, on short texts (the first 14 words of 400 of the texts), tokenisation excluded, the models in turn
  for --rounds rounds (CPU time, not texts/s: the steadier figure on a shared machine; the Serval figures come from
  platform-bench); with --profile also onnxruntime's kernel time per text by operator type, each text alone.

The texts (--texts, default 3000) are deterministic and offline: paragraphs of the docstrings of Python's standard
library (read with ast from this interpreter's own sources, sorted) and of the repository's docs/*.md prose, cleaned,
de-duplicated, drawn with a fixed seed; texts of the calibration set (scripts/data/int8-calibration.txt) are left out.

    ~/.cache/serval/venvs/int8/bin/python scripts/int8_accuracy.py \
        --model dynamic=~/.cache/serval/repository/all-minilm-l6-v2/1 \
        --model static=~/.cache/serval/repository/all-minilm-l6-v2-int8/1 --batch-check --speed --profile
"""
import argparse
import ast
import json
import random
import re
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_static_int8_minilm import CALIBRATION, FP32_JAR, FP32_MODEL, FP32_TOKENIZER, read_texts  # noqa: E402

SEED = 20261127


def stdlib_paragraphs():
    """Docstring paragraphs of the standard library's modules, classes and functions, in sorted file order."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    skip = ("test", "idlelib", "lib2to3", "site-packages", "ensurepip", "turtledemo", "tkinter")
    out = []
    for path in sorted(lib.rglob("*.py")):
        if any(part in skip for part in path.relative_to(lib).parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    out.extend(doc.split("\n\n"))
    return out


def docs_paragraphs():
    """Prose paragraphs of the repository's docs/*.md (code blocks and tables left out)."""
    out = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        code = False
        block = []
        for line in path.read_text(encoding="utf-8").splitlines() + [""]:
            if line.startswith("```"):
                code = not code
                continue
            if code or line.startswith("|") or line.startswith("#") or line.startswith("<!--"):
                continue
            if line.strip():
                block.append(line.strip())
            elif block:
                out.append(" ".join(block))
                block = []
    return out


def clean(paragraph):
    text = re.sub(r"\s+", " ", paragraph).strip()
    words = text.split()
    letters = sum(c.isalpha() for c in text)
    if not 4 <= len(words) <= 400 or letters < 0.6 * len(text.replace(" ", "")):
        return None
    return text


def eval_texts(count):
    calibration = set(read_texts(CALIBRATION))
    seen = set()
    pool = []
    for paragraph in stdlib_paragraphs() + docs_paragraphs():
        text = clean(paragraph)
        if text and text not in seen and text not in calibration:
            seen.add(text)
            pool.append(text)
    random.Random(SEED).shuffle(pool)
    return pool[:count]


def halves(text):
    """A paragraph's first sentences and the rest, each of at least 5 words, or None."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
    if len(sentences) < 2:
        return None
    cut = max(1, len(sentences) // 2)
    first, second = " ".join(sentences[:cut]), " ".join(sentences[cut:])
    return (first, second) if len(first.split()) >= 5 and len(second.split()) >= 5 else None


class Encoder:
    """One model: an onnxruntime session of one intra-op thread and Serval's tokenisation and pooling."""

    def __init__(self, model, tokenizer, max_length):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length)

    def feeds(self, encodings):
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {k: v for k, v in feeds.items() if k in self.inputs}, mask

    def run(self, encodings):
        feeds, mask = self.feeds(encodings)
        hidden = self.session.run(["last_hidden_state"], feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts):
        return np.vstack([self.run([self.tokenizer.encode(t)]) for t in texts])

    def batch_difference(self, texts, alone, size=16):
        """Largest element difference between each text alone and in a length-sorted padded batch of `size`."""
        encodings = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        worst = 0.0
        for start in range(0, len(order), size):
            rows = order[start:start + size]
            # the shortest text first, so that most rows are padded
            batch = self.run([encodings[i] for i in rows])
            worst = max(worst, float(np.abs(batch - alone[rows]).max()))
        return worst

    def cpu_per_text(self, texts, batch):
        """Process CPU microseconds per text over `texts` in length-sorted batches of `batch` (feeds made first)."""
        encodings = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        prepared = [self.feeds([encodings[i] for i in order[s:s + batch]])[0] for s in range(0, len(order), batch)]
        for f in prepared[:3]:
            self.session.run(["last_hidden_state"], f)
        start = time.process_time()
        for f in prepared:
            self.session.run(["last_hidden_state"], f)
        return (time.process_time() - start) / len(texts) * 1e6


def kernel_profile(folder, texts):
    """onnxruntime's kernel time per text by operator type (its profiler), each text alone, one thread."""
    import collections

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.gettempdir()) / "int8-profile")
    encoder = Encoder(folder / "model.onnx", folder / "tokenizer.json", 256)
    session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
    for t in texts:
        session.run(["last_hidden_state"], encoder.feeds([encoder.tokenizer.encode(t)])[0])
    path = session.end_profiling()
    times = collections.Counter()
    for event in json.loads(Path(path).read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[event["args"]["op_name"]] += event["dur"]
    Path(path).unlink()
    return {op: round(us / len(texts)) for op, us in times.most_common()}


def top(similarity, k):
    return np.argsort(-similarity, axis=1)[:, :k]


def fp32_folder(jar, work):
    with zipfile.ZipFile(jar) as z:
        z.extract(FP32_MODEL, work)
        z.extract(FP32_TOKENIZER, work)
    return Path(work) / FP32_MODEL, Path(work) / FP32_TOKENIZER


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", required=True, help="NAME=FOLDER (model.onnx, tokenizer.json)")
    p.add_argument("--fp32-jar", default=str(FP32_JAR))
    p.add_argument("--texts", type=int, default=3000)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--pairs", type=int, default=500)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--batch-check", action="store_true")
    p.add_argument("--speed", action="store_true")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args()

    texts = eval_texts(args.texts)
    split = [(i, halves(t)) for i, t in enumerate(texts)]
    split = [(i, h) for i, h in split if h][:args.pairs]
    sources = np.array([i for i, _ in split])  # a pair's own paragraph is no candidate for it
    pairs = [h for _, h in split]
    corpus = texts + [q for q, _ in pairs] + [d for _, d in pairs]
    query_at = len(texts)
    partner_at = len(texts) + len(pairs)
    lengths = None
    results = {"python": sys.version.split()[0], "onnxruntime": ort.__version__, "texts": len(texts),
               "pairs": len(pairs), "max_length": args.max_length, "models": {}}
    print(f"{len(texts)} texts, {len(pairs)} partner pairs, {len(corpus)} embedded per model; "
          f"python {results['python']}, onnxruntime {ort.__version__}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        reference = Encoder(*fp32_folder(args.fp32_jar, work), args.max_length)
        lengths = [len(reference.tokenizer.encode(t).ids) for t in texts]
        results["tokens"] = {"median": float(np.median(lengths)), "max": int(max(lengths)),
                             "truncated": int(sum(n >= args.max_length for n in lengths))}
        t0 = time.perf_counter()
        ref = reference.embed(corpus)
        print(f"fp32 embedded in {time.perf_counter() - t0:.0f} s", flush=True)
        models = {"fp32": reference}
        for spec in args.model:
            name, folder = spec.split("=", 1)
            folder = Path(folder).expanduser()
            models[name] = Encoder(folder / "model.onnx", folder / "tokenizer.json", args.max_length)

        queries = random.Random(SEED + 1).sample(range(len(texts)), min(args.queries, len(texts)))
        ref_texts = ref[:len(texts)]
        ref_sim = ref_texts[queries] @ ref_texts.T
        ref_sim[np.arange(len(queries)), queries] = -2  # a query is not its own neighbour
        ref_top = top(ref_sim, 10)
        ref_partner_sim = ref[query_at:partner_at] @ np.vstack([ref_texts, ref[partner_at:]]).T
        ref_partner_sim[np.arange(len(pairs)), sources] = -2
        ref_ranks = rank_of_partners(ref_partner_sim, len(texts))

        for name, encoder in models.items():
            t0 = time.perf_counter()
            vectors = ref if name == "fp32" else encoder.embed(corpus)
            cosine = np.sum(vectors * ref, axis=1)[:len(texts)]
            sim = vectors[:len(texts)][queries] @ vectors[:len(texts)].T
            sim[np.arange(len(queries)), queries] = -2
            model_top = top(sim, 10)
            recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ref_top, model_top)])
            partner_sim = vectors[query_at:partner_at] @ np.vstack([vectors[:len(texts)], vectors[partner_at:]]).T
            partner_sim[np.arange(len(pairs)), sources] = -2
            ranks = rank_of_partners(partner_sim, len(texts))
            figures = {
                "cosine_median": float(np.median(cosine)), "cosine_p1": float(np.percentile(cosine, 1)),
                "cosine_min": float(cosine.min()), "below_0_99": float(np.mean(cosine < 0.99)),
                "worst_text_tokens": int(lengths[int(np.argmin(cosine))]),
                "recall_at_10": float(recall),
                "partner_top1": float(np.mean(ranks == 1)), "partner_mrr": float(np.mean(1.0 / ranks)),
                "partner_same_rank": float(np.mean(ranks == ref_ranks)),
            }
            if args.batch_check:
                sample = texts[:512]
                figures["batch16_max_difference"] = encoder.batch_difference(sample, vectors[:512])
            results["models"][name] = figures
            print(name, json.dumps({k: round(v, 6) if isinstance(v, float) else v for k, v in figures.items()}),
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        if args.speed or args.profile:
            short = [" ".join(t.split()[:14]) for t in texts[:400]]
        if args.speed:
            for round_ in range(1, args.rounds + 1):
                for name, encoder in models.items():
                    one, sixteen = encoder.cpu_per_text(short, 1), encoder.cpu_per_text(short, 16)
                    results["models"][name].setdefault("cpu_us_per_text_batch1", []).append(round(one))
                    results["models"][name].setdefault("cpu_us_per_text_batch16", []).append(round(sixteen))
                    print(f"round {round_} {name}: CPU per short text {one:.0f} us alone, {sixteen:.0f} us in "
                          f"batches of 16", flush=True)
        if args.profile:
            folders = {"fp32": None}
            folders.update({spec.split("=", 1)[0]: Path(spec.split("=", 1)[1]).expanduser() for spec in args.model})
            for name, folder in folders.items():
                if folder is not None:
                    split = kernel_profile(folder, short[:300])
                    results["models"][name]["kernel_us_per_text"] = split
                    print(f"{name}: kernel time per short text {sum(split.values())} us: {split}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def rank_of_partners(similarity, texts):
    """For row i, the 1-based rank of column texts + i (its partner) among all columns."""
    rows = np.arange(similarity.shape[0])
    partner = similarity[rows, texts + rows]
    return 1 + np.sum(similarity > partner[:, None], axis=1)


if __name__ == "__main__":
    main()
