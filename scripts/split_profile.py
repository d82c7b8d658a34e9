#!/usr/bin/env python3
"""Splits an async-profiler CPU profile (collapsed stacks, plain or .gz) of Serval or of the raw DJL loop into cost
centres: the model's work (ONNX Runtime's run, the tokenizer, DJL around them), which the raw loop does too, and
everything a served request adds (the event loop's HTTP, JSON, wake-ups, the answer's hand-off, JIT, GC, ...).

Each sample goes to the first rule that matches its stack, by the thread it ran on (predictor, event loop, JVM
threads) and then by the frames in it. With --micros-per-text, each share is also given in microseconds of CPU per
text (the run's process CPU per text, from the benchmark that took the profile).

    scripts/split_profile.py docs/benchmarks/efficiency-profile/profiles/before-default-closed128.collapsed.gz \
        --micros-per-text 2381
"""
import argparse
import collections
import gzip


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, count = line.rsplit(" ", 1)
                yield stack, int(count)


def thread(stack):
    if "PredictorPool.work" in stack or "RawEmbeddingLoop" in stack:
        return "model thread"
    if "NioEventLoop.run" in stack or "EpollEventLoop.run" in stack:
        return "event loop"
    if stack.startswith(("clone3", "start_thread")):
        if "GCThread" in stack or "WorkerThread::run" in stack or "G1" in stack:
            return "GC"
        if "VMThread" in stack:
            return "JVM, other"
        return "JIT" if "JavaThread::thread_main_inner" in stack or "Compile" in stack else "JVM, other"
    return "other threads"


def centre(stack, where):
    if where != "model thread" and where != "event loop":
        return where
    if where == "model thread":
        if "OrtSession.run" in stack or "OrtSession_run" in stack:
            return "model: ONNX Runtime run"
        if "TokenizersLibrary" in stack or "LeanEncoding" in stack:
            return "model: tokenizer"
        if "TextPredictor" in stack or "OnnxModel$Runner" in stack or "ai/djl/" in stack:
            return "model: DJL around the run (tensors in, pooling out)"
        if "OipResponseEncoder" in stack or "NumberArrays" in stack:
            return "answer: JSON encode (384 floats), predictor thread"
        if "runOnContext" in stack:
            return "answer: hand-off to the event loop (wake-up), predictor thread"
        if "Thread.yield" in stack or "InputQueue.spin" in stack:
            return "hand-offs: idle spin"
        if "LockSupport" in stack:
            return "hand-offs: park / unpark"
        if "micrometer" in stack:
            return "meters"
        if "RawEmbeddingLoop" in stack:
            return "the raw loop's own code"
        return "hand-offs: futures, router drain, queue, predictor loop"
    # the event loop
    if "NioEventLoop.select" in stack or "EpollEventLoop.epollWait" in stack:
        return "event loop: waiting and waking (epoll_wait, selector wake-up lock)"
    if "micrometer" in stack:
        return "meters"
    if "OipRequestDecoder" in stack or "OipExchange.decode" in stack or "Json.readObject" in stack:
        return "event loop: JSON decode"
    if "RequestDeadlines" in stack or "InternalTimerHandler" in stack or "ScheduledFutureTask" in stack:
        return "event loop: timers (deadline wheel)"
    if "SocketDispatcher.write" in stack or "IOUtil.write" in stack:
        return "event loop: answer's socket write (kernel loopback)"
    if "InferenceCall.answered" in stack or "InferenceRoutes.send" in stack:
        return "event loop: answer's headers and response"
    if ("Deployment" in stack or "Intake" in stack or "Router." in stack or "PredictorPool" in stack
            or "InputQueue" in stack):
        return "event loop: engine intake (route, admit, queue)"
    return "event loop: HTTP read, parse, routes, Vert.x"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile")
    parser.add_argument("--micros-per-text", type=float, default=None)
    arguments = parser.parse_args()
    shares = collections.Counter()
    total = 0
    for stack, count in lines(arguments.profile):
        shares[centre(stack, thread(stack))] += count
        total += count
    print(f"{arguments.profile}: {total} samples")
    model = sum(v for k, v in shares.items() if k.startswith("model:"))
    for name, count in sorted(shares.items(), key=lambda item: (not item[0].startswith("model:"), -item[1])):
        micros = "" if arguments.micros_per_text is None else \
            f"  {count / total * arguments.micros_per_text:7.0f} µs/text"
        print(f"  {count / total * 100:6.2f} %{micros}  {name}")
    micros = "" if arguments.micros_per_text is None else \
        f" ({model / total * arguments.micros_per_text:.0f} µs/text; the rest "\
        f"{(total - model) / total * arguments.micros_per_text:.0f})"
    print(f"  model's work: {model / total * 100:.2f} %{micros}")


if __name__ == "__main__":
    main()
