package dev.serval.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The JMH settings every Serval benchmark inherits, so that numbers from different benchmarks are taken the
 * same way: throughput in operations per second, one fork, a few five-second warm-up and measurement
 * iterations (sized so that a whole benchmark class finishes in a few minutes on a two-core machine; pass
 * {@code -wi}, {@code -i}, {@code -w}, {@code -r}, {@code -f} on the command line for tighter error bars).
 *
 * <p>Every fork runs with DJL kept off the network ({@code ai.djl.offline}, {@code OPT_OUT_TRACKING}), ONNX
 * Runtime as DJL's engine, and native access enabled for ONNX Runtime and the tokenizer. They are appended
 * with {@code jvmArgsAppend}; note that {@code -jvmArgsAppend} on the command line replaces them rather
 * than adding to them, so repeat them there if you use it.
 *
 * <p>Subclasses live in the package of the feature they measure ({@code dev.serval.bench.<feature>}) and
 * say in their Javadoc what they measure, why, and the command that runs them.
 */
@Fork(value = 1, jvmArgsAppend = {
        "-Dai.djl.offline=true",
        "-DOPT_OUT_TRACKING=true",
        "-Dai.djl.default_engine=OnnxRuntime",
        "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 5, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 5, timeUnit = TimeUnit.SECONDS)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public abstract class BenchmarkBase {

    /** How long a benchmark's set-up waits for its deployment's model to load and warm up. */
    private static final java.time.Duration READY_TIMEOUT = java.time.Duration.ofMinutes(2);

    /**
     * Waits, during a benchmark's set-up, until {@code deployment} is READY. It polls: a deployment offers no future
     * for its first load, and set-up time is not measured.
     *
     * @throws IllegalStateException naming the state and the failure, when it failed or is still loading after two
     *                               minutes
     */
    public static void awaitReady(dev.serval.deployment.Deployment<?, ?> deployment) throws InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (deployment.state() == dev.serval.spec.DeploymentState.LOADING) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("deployment still loading after " + READY_TIMEOUT);
            }
            Thread.sleep(20); // set-up only: waiting for the model to load
        }
        if (deployment.state() != dev.serval.spec.DeploymentState.READY) {
            throw new IllegalStateException("deployment is " + deployment.state() + ": "
                    + deployment.failure().orElse("no reason given"));
        }
    }
}
