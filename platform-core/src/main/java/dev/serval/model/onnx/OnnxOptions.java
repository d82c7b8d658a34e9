package dev.serval.model.onnx;

import ai.onnxruntime.OrtSession.SessionOptions.ExecutionMode;
import ai.onnxruntime.OrtSession.SessionOptions.OptLevel;
import dev.serval.model.LoadOptions;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * ONNX Runtime session options for one model (a model descriptor's {@code engine}), handed to DJL's OnnxRuntime engine
 * as {@link ai.djl.repository.zoo.Criteria} options ({@code optOption(key, value)}), which {@code OrtModel} turns into
 * {@code OrtSession.SessionOptions}. Checked here, so that every accepted option takes effect and a bad one is refused
 * before anything loads, rather than by a {@code NumberFormatException} deep in DJL or, worse, silently ignored.
 *
 * <p>The options, as DJL 0.38 reads them:
 * <ul>
 *   <li>{@code optLevel}: graph optimisation, one of {@link OptLevel} ({@code ALL_OPT} when not set);</li>
 *   <li>{@code executionMode}: {@code SEQUENTIAL} (Serval's default) or {@code PARALLEL} (independent graph nodes
 *       run at once on inter-op threads; needs {@code interOpNumThreads});</li>
 *   <li>{@code interOpNumThreads}: those inter-op threads, 1 to 1024 (Serval's default 1); ONNX Runtime ignores it when
 *       sequential, so more than 1 is refused unless {@code executionMode} is {@code PARALLEL};</li>
 *   <li>{@code memoryPatternOptimization}, {@code cpuArenaAllocator}: only {@code true}, ONNX Runtime's default. DJL
 *       applies these two only when true, so {@code false} would be ignored and is refused instead.</li>
 * </ul>
 * Refused with a reason: {@code intraOpNumThreads} (a deployment setting, {@code intra_op_threads}: the same model may
 * run with different thread counts in different deployments), {@code disablePerSessionThreads} (it moves the session
 * onto process-wide thread pools that ignore {@code intra_op_threads}), {@code customOpLibrary} (native code from an
 * arbitrary path), {@code profilerOutput} (files written outside the model repository) and {@code ortDevice} (Serval
 * runs ONNX Runtime on the CPU). Any other key is unknown.
 *
 * <p>An immutable value; {@code values} is sorted by key.
 *
 * @param values option name to value, as DJL takes them (strings); possibly empty
 */
public record OnnxOptions(Map<String, String> values) {

    public static final String OPT_LEVEL = "optLevel";
    public static final String EXECUTION_MODE = "executionMode";
    public static final String INTER_OP_THREADS = "interOpNumThreads";
    public static final String MEMORY_PATTERN = "memoryPatternOptimization";
    public static final String CPU_ARENA = "cpuArenaAllocator";

    /** The options Serval accepts, sorted. */
    public static final List<String> KEYS =
            List.of(CPU_ARENA, EXECUTION_MODE, INTER_OP_THREADS, MEMORY_PATTERN, OPT_LEVEL);

    /** The most inter-op threads accepted (the deployment's {@code intra_op_threads} has the same cap). */
    static final int MAX_THREADS = LoadOptions.MAX_THREADS;

    private static final OnnxOptions NONE = new OnnxOptions(Map.of());

    /** Options DJL reads that Serval refuses, and why. */
    private static final Map<String, String> REFUSED = Map.of(
            "intraOpNumThreads", "intra-op threads are not a model option but the deployment's intra_op_threads"
                    + " setting (the same model may run with different thread counts in different deployments)",
            "disablePerSessionThreads", "it moves the model onto ONNX Runtime's process-wide thread pools, which"
                    + " ignore the deployment's intra_op_threads",
            "customOpLibrary", "it loads native code from an arbitrary path; Serval reads only the model's own files",
            "profilerOutput", "it writes ONNX Runtime profiles to a path outside the model repository",
            "ortDevice", "Serval runs ONNX Runtime on the CPU");

    /**
     * @throws IllegalArgumentException naming the option and what is wrong: an unknown option (the message lists the
     *                                  known ones), a refused one (with the reason), a value out of range (the message
     *                                  names the allowed values), or options that contradict each other
     */
    public OnnxOptions {
        Map<String, String> sorted = new TreeMap<>();
        values.forEach((key, value) -> {
            check(key, value);
            sorted.put(key, value);
        });
        String mode = sorted.getOrDefault(EXECUTION_MODE, ExecutionMode.SEQUENTIAL.name());
        if (mode.equals(ExecutionMode.PARALLEL.name()) && !sorted.containsKey(INTER_OP_THREADS)) {
            throw new IllegalArgumentException("ONNX Runtime option '" + EXECUTION_MODE + "' PARALLEL needs '"
                    + INTER_OP_THREADS + "' too: the threads that run independent nodes at once (they come on top of"
                    + " the deployment's intra_op_threads)");
        }
        if (mode.equals(ExecutionMode.SEQUENTIAL.name()) && Integer.parseInt(sorted.getOrDefault(INTER_OP_THREADS,
                "1")) > 1) {
            throw new IllegalArgumentException("ONNX Runtime option '" + INTER_OP_THREADS + "' ("
                    + sorted.get(INTER_OP_THREADS) + ") works only with '" + EXECUTION_MODE + "' PARALLEL; ONNX"
                    + " Runtime ignores it when sequential, the default");
        }
        values = Collections.unmodifiableMap(sorted);
    }

    /** No options: Serval's defaults (sequential, one inter-op thread) and ONNX Runtime's. */
    public static OnnxOptions none() {
        return NONE;
    }

    /** {@code values} checked; see {@link OnnxOptions the class comment} for what is accepted. */
    public static OnnxOptions of(Map<String, String> values) {
        return values.isEmpty() ? NONE : new OnnxOptions(values);
    }

    private static void check(String key, String value) {
        if (value == null) {
            throw new IllegalArgumentException("ONNX Runtime option '" + key + "' has no value");
        }
        switch (key) {
            case OPT_LEVEL -> oneOf(key, value, Arrays.stream(OptLevel.values()).map(Enum::name).toList());
            case EXECUTION_MODE -> oneOf(key, value, Arrays.stream(ExecutionMode.values()).map(Enum::name).toList());
            case MEMORY_PATTERN, CPU_ARENA -> {
                if (!value.equals("true")) {
                    throw new IllegalArgumentException("ONNX Runtime option '" + key + "' can only be true (ONNX"
                            + " Runtime's default), not '" + value + "': DJL applies it only when true, so it cannot"
                            + " be switched off");
                }
            }
            case INTER_OP_THREADS -> {
                int threads;
                try {
                    threads = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    threads = 0;
                }
                if (threads < 1 || threads > MAX_THREADS) {
                    throw new IllegalArgumentException("ONNX Runtime option '" + key + "' must be a whole number from 1"
                            + " to " + MAX_THREADS + ", not '" + value + "'");
                }
            }
            default -> {
                String reason = REFUSED.get(key);
                if (reason != null) {
                    throw new IllegalArgumentException("ONNX Runtime option '" + key + "' is not supported: " + reason);
                }
                throw new IllegalArgumentException("unknown ONNX Runtime option '" + key + "'; known options: " + KEYS);
            }
        }
    }

    private static void oneOf(String key, String value, List<String> allowed) {
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException("ONNX Runtime option '" + key + "' must be one of " + allowed + ", not '"
                    + value + "'");
        }
    }
}
