package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * The compute limits measured in one run: texts/s of each raw runtime (the DJL loop, Python onnxruntime at each
 * version) at each thread split and batch size, each runtime's single-text latency at each split measured, and the
 * runtimes that could not be measured with the reason. An immutable value; its queries pick the limits Serval's
 * figures are compared with.
 *
 * @param runtimes every runtime the run tried, measured or not
 * @param rates    texts/s, the best pass of each runtime, text set, split and batch size
 * @param singles  single-text latency (one worker, batch 1), the pass with the lowest p50 of each runtime and split
 */
record RawLimits(List<Runtime> runtimes, List<Rate> rates, List<Single> singles) {

    /** The name of the DJL loop's runtime ({@link RawEmbeddingLoop}). */
    static final String DJL = "djl";

    RawLimits {
        runtimes = List.copyOf(runtimes);
        rates = List.copyOf(rates);
        singles = List.copyOf(singles);
    }

    static RawLimits none() {
        return new RawLimits(List.of(), List.of(), List.of());
    }

    /** {@code workers} processes or threads, each with its own session of {@code intraOp} ONNX Runtime threads. */
    record Split(int workers, int intraOp) {

        Split {
            if (workers < 1 || intraOp < 1) {
                throw new IllegalArgumentException("a split needs at least 1 worker of 1 thread, was " + workers + " x "
                        + intraOp);
            }
        }

        /** {@code 2x1}: workers x intra-op threads. */
        String label() {
            return workers + "x" + intraOp;
        }
    }

    /**
     * One raw runtime.
     *
     * @param name        {@value #DJL} or {@code python-VERSION}
     * @param description what it ran with (versions)
     * @param onnxruntime its ONNX Runtime version, or "" when unknown (not started)
     * @param java        whether it is the Java (DJL) loop
     * @param failure     why it was not measured (the step that failed and its output), or null when it was
     */
    record Runtime(String name, String description, String onnxruntime, boolean java, String failure) {

        Runtime {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(description, "description");
            Objects.requireNonNull(onnxruntime, "onnxruntime");
        }

        boolean measured() {
            return failure == null;
        }
    }

    /**
     * Texts/s of {@code runtime} over text set {@code set} ({@code short}, {@code mixed}), and the runtime's process
     * CPU per text over the measurement in microseconds (NaN where it is not measured: the Python loops, whose workers
     * are processes of their own).
     */
    record Rate(String runtime, String set, Split split, int batch, double textsPerSecond, double cpuMicrosPerText) {

        Rate(String runtime, String set, Split split, int batch, double textsPerSecond) {
            this(runtime, set, split, batch, textsPerSecond, Double.NaN);
        }
    }

    /** One worker's single-text latency in ms. */
    record Single(String runtime, Split split, double p50, double p99, double mean) {
    }

    /** The Java loop's texts/s over Python's at the same onnxruntime version, split and batch size. */
    record Ratio(Split split, int batch, double java, double python, double ratio) {
    }

    /** The runtime named {@code name}. */
    Optional<Runtime> runtime(String name) {
        return runtimes.stream().filter(r -> r.name().equals(name)).findFirst();
    }

    OptionalDouble rate(String runtime, String set, Split split, int batch) {
        return measured(runtime, set, split, batch).stream().mapToDouble(Rate::textsPerSecond).findFirst();
    }

    /** The figure of {@code runtime} on {@code set} at {@code split} and {@code batch}, if measured. */
    Optional<Rate> measured(String runtime, String set, Split split, int batch) {
        return rates.stream().filter(r -> r.runtime().equals(runtime) && r.set().equals(set) && r.split().equals(split)
                && r.batch() == batch).findFirst();
    }

    /** The highest texts/s on {@code set} at batch size {@code batch}, over every runtime and split. */
    Optional<Rate> bestAt(String set, int batch) {
        return rates.stream().filter(r -> r.set().equals(set) && r.batch() == batch)
                .max(Comparator.comparingDouble(Rate::textsPerSecond));
    }

    /** The highest texts/s on {@code set} at any batch size, over every runtime and split. */
    Optional<Rate> best(String set) {
        return rates.stream().filter(r -> r.set().equals(set)).max(Comparator.comparingDouble(Rate::textsPerSecond));
    }

    /** The batch size at which {@code runtime} reached its highest texts/s on {@code set} at {@code split}. */
    OptionalInt bestBatch(String runtime, String set, Split split) {
        return rates.stream().filter(r -> r.runtime().equals(runtime) && r.set().equals(set) && r.split().equals(split))
                .max(Comparator.comparingDouble(Rate::textsPerSecond)).map(r -> OptionalInt.of(r.batch()))
                .orElse(OptionalInt.empty());
    }

    /** The lowest single-text p50 of one worker of {@code intraOp} threads, over every runtime. */
    Optional<Single> fastestSingle(int intraOp) {
        Split split = new Split(1, intraOp);
        return singles.stream().filter(s -> s.split().equals(split)).min(Comparator.comparingDouble(Single::p50));
    }

    /**
     * These limits and {@code other}'s (the same loops measured again later) together: each configuration's higher
     * texts/s and each single-text latency's lower p50, as the sweep keeps the best of its passes (a disturbance from
     * elsewhere can only lower a figure).
     */
    RawLimits bestOf(RawLimits other) {
        Map<String, Rate> bestRates = new LinkedHashMap<>();
        for (Rate rate : concat(rates, other.rates)) {
            bestRates.merge(rate.runtime() + " " + rate.set() + " " + rate.split().label() + " " + rate.batch(), rate,
                    (a, b) -> a.textsPerSecond() >= b.textsPerSecond() ? a : b);
        }
        Map<String, Single> bestSingles = new LinkedHashMap<>();
        for (Single single : concat(singles, other.singles)) {
            bestSingles.merge(single.runtime() + " " + single.split().label(), single,
                    (a, b) -> a.p50() <= b.p50() ? a : b);
        }
        return new RawLimits(runtimes, List.copyOf(bestRates.values()), List.copyOf(bestSingles.values()));
    }

    private static <T> List<T> concat(List<T> first, List<T> second) {
        List<T> both = new ArrayList<>(first);
        both.addAll(second);
        return both;
    }

    /** The measured Python runtime with the Java loop's onnxruntime version, if both were measured. */
    Optional<Runtime> pythonAtJavaVersion() {
        Optional<Runtime> java = runtimes.stream().filter(r -> r.java() && r.measured()).findFirst();
        return java.flatMap(j -> runtimes.stream().filter(r -> !r.java() && r.measured()
                && !r.onnxruntime().isEmpty() && r.onnxruntime().equals(j.onnxruntime())).findFirst());
    }

    /**
     * The Java loop over Python at the same onnxruntime version, at every split and batch size on {@code set} where
     * both were measured, in the order of the Java loop's figures.
     */
    List<Ratio> javaOverPython(String set) {
        Optional<Runtime> python = pythonAtJavaVersion();
        List<Ratio> ratios = new ArrayList<>();
        if (python.isEmpty()) {
            return ratios;
        }
        for (Rate java : rates) {
            if (java.runtime().equals(DJL) && java.set().equals(set)) {
                OptionalDouble other = rate(python.get().name(), set, java.split(), java.batch());
                if (other.isPresent()) {
                    ratios.add(new Ratio(java.split(), java.batch(), java.textsPerSecond(), other.getAsDouble(),
                            java.textsPerSecond() / other.getAsDouble()));
                }
            }
        }
        return ratios;
    }

    /** The splits measured (throughput or latency), in the order first seen. */
    List<Split> splits() {
        List<Split> splits = new ArrayList<>();
        rates.forEach(r -> add(splits, r.split()));
        singles.forEach(s -> add(splits, s.split()));
        return splits;
    }

    /** The batch sizes measured on {@code set}, ascending. */
    List<Integer> batches(String set) {
        return rates.stream().filter(r -> r.set().equals(set)).map(Rate::batch).distinct().sorted().toList();
    }

    private static <T> void add(List<T> list, T value) {
        if (!list.contains(value)) {
            list.add(value);
        }
    }
}
