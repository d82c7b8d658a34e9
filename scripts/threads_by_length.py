"""Whether a second intra-op thread pays, by input length: one text's inference time on 1 and on 2 threads.

Raw onnxruntime, no HTTP, no JVM: one session of each thread count over the same file, a text of each length run
back to back (30 warm-up runs, then the median of 200), both thread counts twice, interleaved, the better pass kept.
This is the evidence behind lend_idle_cores deciding per input size (docs/design-decisions.md). Run it with the venv
and the files that `bin/loadbench` leaves behind:

    platform-bench/target/python/onnxruntime-1.32.0/bin/python scripts/threads_by_length.py \
        --model /tmp/serval-bench-models/all-minilm-l6-v2-q.onnx \
        --tokenizer /tmp/serval-bench-models/all-minilm-l6-v2-q-tokenizer.json
"""
import argparse
import os
import time

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # read when the runtime starts: no uploads to Microsoft

import numpy as np  # noqa: E402 (after the telemetry switch)
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

WORDS = "the quick brown fox jumps over the lazy dog and people chat about the weather".split()


def session(model, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def median_ms(run, feed):
    for _ in range(30):
        run(None, feed)
    times = []
    for _ in range(200):
        start = time.perf_counter()
        run(None, feed)
        times.append(time.perf_counter() - start)
    times.sort()
    return 1000 * times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True)
    args = parser.parse_args()
    tokenizer = Tokenizer.from_file(args.tokenizer)
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()
    sessions = {threads: session(args.model, threads) for threads in (1, 2)}
    inputs = {i.name for i in sessions[1].get_inputs()}
    for words in (4, 8, 16, 32, 64, 128, 200):
        text = " ".join(WORDS[i % len(WORDS)] for i in range(words))
        encoding = tokenizer.encode(text)
        feed = {"input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        best = {}
        for _ in range(2):
            for threads, s in sessions.items():
                best[threads] = min(best.get(threads, float("inf")), median_ms(s.run, feed))
        print(f"{len(text):5d} characters, {len(encoding.ids):4d} tokens: 1 thread {best[1]:.3f} ms, "
              f"2 threads {best[2]:.3f} ms, 2 / 1 = {best[2] / best[1]:.2f}")


if __name__ == "__main__":
    main()
