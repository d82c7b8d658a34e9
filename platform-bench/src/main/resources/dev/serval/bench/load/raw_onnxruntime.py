"""The compute limit from Python: onnxruntime and Hugging Face tokenizers, no HTTP, no JVM.

Serval's load benchmark (platform-bench, dev.serval.bench.load.PythonRawLoop) runs this script from a venv that it
creates, one per onnxruntime version, and compares Serval with it. For each measurement, `workers` processes, each
with its own onnxruntime session of `intra_op` threads, embed the benchmark's texts back to back, `batch`
consecutive texts per inference, the way Serval's predictors and RawEmbeddingLoop (the same loop in Java with DJL)
do: batch 1 tokenises one text (truncated at 256 tokens) and runs it alone; larger batches are tokenised together,
sorted by token count and cut into groups whose lengths differ by at most a quarter (plus two tokens), each group
right-padded and run as one inference. Every inference ends with masked mean pooling and L2 normalisation in numpy.

Protocol (RawEmbeddingLoop's): prints `READY {json}` (the onnxruntime, tokenizers, numpy and Python versions) once
every worker process has started, then reads commands on standard input, one per line, and answers each with one line
`RESULT {json}`:
  measure SET BATCH WARM_UP_MS MEASURE_MS WORKERS INTRA_OP   texts/s of WORKERS processes together over text set SET
  single SET WARM_UP_CALLS CALLS INTRA_OP                    one process's single-text latency: p50, p99, mean in ms
  quit                                                       (or the end of the input: the parent is gone)
SET names a JSON list of texts given on the command line (--texts NAME=FILE, repeatable). A worker process loads a
session on first use for each intra-op thread count and keeps it; it ends when its parent does.
"""
import argparse
import json
import multiprocessing as mp
import os
import platform
import queue
import sys
import time

MAX_LENGTH = 256


def load(model, tokenizer_file, intra_op):
    """An embed(texts) function over one onnxruntime session of `intra_op` threads; returns how many texts it ran."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    tokenizer = Tokenizer.from_file(tokenizer_file)
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_LENGTH)

    def run(rows):
        """rows: the token-id lists of one group; one inference, then one normalised vector per row."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for k, r in enumerate(rows):
            ids[k, :len(r)] = r
            mask[k, :len(r)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(["last_hidden_state"], feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(texts):
        if len(texts) == 1:
            return len(run([tokenizer.encode(texts[0]).ids]))
        encoded = [e.ids for e in tokenizer.encode_batch(texts)]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        start = 0
        done = 0
        while start < len(order):
            shortest = len(encoded[order[start]])
            end = start + 1
            while end < len(order) and len(encoded[order[end]]) <= shortest + shortest // 4 + 2:
                end += 1
            done += len(run([encoded[order[k]] for k in range(start, end)]))
            start = end
        return done

    embed(["Serval warm-up probe."])
    return embed


class WindowCount:
    """One worker's count over [start, end): RawEmbeddingLoop's WindowCount. The rate is taken between the first and
    the last inference that ended inside the window, so that where its edges cut a batch does not move it; with fewer
    than two endings inside, texts / window length."""

    def __init__(self, start, end):
        self.start, self.end = start, end
        self.texts = 0
        self.first = None
        self.last = None
        self.after_first = 0

    def ended(self, now, embedded):
        if not self.start <= now < self.end:
            return
        self.texts += embedded
        if self.first is None:
            self.first = now
        else:
            self.after_first += embedded
            self.last = now

    def texts_per_second(self):
        if self.after_first > 0 and self.last > self.first:
            return self.after_first / (self.last - self.first)
        return self.texts / (self.end - self.start)


def worker(index, args, sets, commands, results, parent):
    """One worker process: runs the commands of its queue until None, or until its parent is gone."""
    sessions = {}

    def session(intra_op):
        if intra_op not in sessions:
            sessions[intra_op] = load(args.model, args.tokenizer, intra_op)
        return sessions[intra_op]

    while True:
        try:
            command = commands.get(timeout=1)
        except queue.Empty:
            if os.getppid() != parent:
                return  # the parent was killed: nobody will ever send None
            continue
        if command is None:
            return
        kind = command[0]
        if kind == "prepare":
            session(command[1])
            results.put(("prepared", index, None))
        elif kind == "measure":
            _, name, intra_op, batch, measure_from, end = command
            texts = sets[name]
            embed = session(intra_op)
            count = WindowCount(measure_from, end)
            nxt = index * 997
            while time.monotonic() < end:
                group = [texts[(nxt + k) % len(texts)] for k in range(batch)]
                nxt += batch
                count.ended(time.monotonic(), embed(group))
            results.put(("measured", index, count.texts_per_second()))
        else:
            _, name, intra_op, warm_up, calls = command
            texts = sets[name]
            embed = session(intra_op)
            times = []
            for i in range(warm_up + calls):
                text = texts[(i * 7 + 1) % len(texts)]
                start = time.perf_counter_ns()
                embed([text])
                if i >= warm_up:
                    times.append(time.perf_counter_ns() - start)
            results.put(("single", index, times))


def percentile(sorted_values, p):
    """The nearest-rank percentile p (0-100] of a sorted, non-empty list."""
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[min(len(sorted_values), int(rank)) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--texts", action="append", required=True, help="NAME=FILE, a JSON list of strings")
    parser.add_argument("--max-workers", type=int, default=os.cpu_count(), help="worker processes to start")
    args = parser.parse_args()
    sets = {}
    for spec in args.texts:
        name, _, file = spec.partition("=")
        with open(file, encoding="utf-8") as f:
            sets[name] = json.load(f)
    context = mp.get_context("fork")
    results = context.Queue()
    queues = [context.Queue() for _ in range(args.max_workers)]
    processes = [context.Process(target=worker, args=(i, args, sets, queues[i], results, os.getpid()), daemon=True)
                 for i in range(args.max_workers)]
    for p in processes:
        p.start()
    import numpy
    import onnxruntime
    import tokenizers
    print("READY " + json.dumps({"onnxruntime": onnxruntime.__version__, "tokenizers": tokenizers.__version__,
                                 "numpy": numpy.__version__, "python": platform.python_version()}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        result = {"set": words[1]}
        if words[0] == "measure":
            batch, warm_up_ms, measure_ms = int(words[2]), int(words[3]), int(words[4])
            workers, intra_op = int(words[5]), int(words[6])
            if not 1 <= workers <= len(queues):
                raise SystemExit(f"workers must be 1 to {len(queues)}, was {workers}")
            for q in queues[:workers]:
                q.put(("prepare", intra_op))
            for _ in range(workers):
                results.get()
            measure_from = time.monotonic() + warm_up_ms / 1000
            end = measure_from + measure_ms / 1000
            for q in queues[:workers]:
                q.put(("measure", words[1], intra_op, batch, measure_from, end))
            rate = sum(results.get()[2] for _ in range(workers))
            result.update(batch=batch, workers=workers, intraOp=intra_op, textsPerSecond=rate)
        elif words[0] == "single":
            intra_op = int(words[4])
            queues[0].put(("single", words[1], intra_op, int(words[2]), int(words[3])))
            times = sorted(results.get()[2])
            result.update(workers=1, intraOp=intra_op, p50=percentile(times, 50) / 1e6,
                          p99=percentile(times, 99) / 1e6, mean=sum(times) / len(times) / 1e6)
        else:
            raise SystemExit("unknown command: " + line)
        print("RESULT " + json.dumps(result), flush=True)
    for q in queues:
        q.put(None)


if __name__ == "__main__":
    main()
