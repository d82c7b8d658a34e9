package dev.serval.bench.load;

/**
 * One raw-loop worker's count over a measurement window {@code [from, end)} (nanoTime): the texts of the inferences
 * that ended inside it, and its rate measured between the first and the last of those endings (the texts of the
 * later inferences over the time between them). That rate does not depend on where the window's edges cut an
 * inference, which with batches of 32 texts and a few hundred texts/s would otherwise move a figure by several per
 * cent; a worker with fewer than two endings in the window falls back to texts / window length. The Python loop
 * ({@code raw_onnxruntime.py}) counts the same way. Not thread-safe: each worker has its own.
 */
final class WindowCount {

    private final long from;
    private final long end;
    private long texts;
    private long first = -1;
    private long last;
    private long afterFirst;

    WindowCount(long from, long end) {
        if (end <= from) {
            throw new IllegalArgumentException("the window must end after it starts: " + from + " to " + end);
        }
        this.from = from;
        this.end = end;
    }

    /** An inference of {@code embedded} texts ended at {@code now}. */
    void ended(long now, int embedded) {
        if (now < from || now >= end) {
            return;
        }
        texts += embedded;
        if (first < 0) {
            first = now;
        } else {
            afterFirst += embedded;
            last = now;
        }
    }

    /** Texts of the inferences that ended inside the window. */
    long texts() {
        return texts;
    }

    double textsPerSecond() {
        return afterFirst > 0 && last > first ? afterFirst / ((last - first) / 1e9) : texts / ((end - from) / 1e9);
    }
}
