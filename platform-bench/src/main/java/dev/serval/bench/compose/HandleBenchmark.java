package dev.serval.bench.compose;

import dev.serval.bench.BenchmarkBase;
import dev.serval.compose.Composition;
import dev.serval.compose.Handle;
import dev.serval.compose.OutstandingCalls;
import dev.serval.compose.PipelineModel;
import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Composite;
import dev.serval.model.ModelKind;
import dev.serval.model.NoopModel;
import dev.serval.model.PipelineStep;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.Invocation;
import dev.serval.request.WholeRequestIO;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What an in-process call to a deployment costs, without HTTP: a request to the no-op deployment {@code echo}
 * directly ({@link Deployment#infer}), through its {@link Handle} (what a handler's {@code DeploymentHandle} does:
 * the callee's lookup, the deadline check, the cancellation hook, the call meter), and through a one-step pipeline
 * deployment (the handle call plus the pipeline's own routing and predictor thread). Each waits for its answer, one
 * at a time, so the figures are latencies: the difference between two of them is what the extra layer adds. The HTTP
 * side of the comparison is {@code bin/loadbench --composition}.
 *
 * <p>Run from the repository root (about two minutes with these settings):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar HandleBenchmark -f 1 -wi 2 -i 3 -w 3s -r 3s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class HandleBenchmark extends BenchmarkBase {

    private static final Tensors REQUEST = new Tensors(List.of(Tensor.of("x", new float[] {1, 2, 3, 4}, 1, 4)));
    private static final InferenceRequest DIRECT = InferenceRequest.of(REQUEST);

    /** The no-op deployment, called directly. */
    @Benchmark
    public Object direct(Served served) {
        return served.echo.infer(DIRECT).join();
    }

    /** The no-op deployment, called through its handle. */
    @Benchmark
    public Object handle(Served served) {
        return served.handle.infer(served.caller, REQUEST).join();
    }

    /** A one-step pipeline whose step is the no-op deployment. */
    @Benchmark
    public Object pipeline(Served served) {
        return served.pipeline.infer(DIRECT).join();
    }

    @State(Scope.Benchmark)
    public static class Served {

        ServingEngine engine;
        Deployment<Tensors, Tensors> echo;
        Deployment<Invocation, Tensors> pipeline;
        Handle handle;
        Invocation caller;

        @Setup(Level.Trial)
        public void start() throws Exception {
            engine = new ServingEngine(Duration.ofMillis(100), System::nanoTime);
            MeterRegistry meters = new SimpleMeterRegistry();
            echo = engine.deploy(DeploymentSpec.defaults("echo", "noop").withPredictors(new PredictorSpec(1, 1, false)),
                    spec -> new NoopModel(), WholeRequestIO.instance());
            awaitReady(echo);
            Callees callees = new Callees() {
                @Override
                public Deployment<?, ?> find(String name) {
                    return name.equals("echo") ? echo : null;
                }

                @Override
                public MeterRegistry meters() {
                    return meters;
                }
            };
            pipeline = engine.deploy(DeploymentSpec.defaults("via-echo", "via-echo")
                            .withPredictors(new PredictorSpec(1, 1, false)),
                    spec -> PipelineModel.load(new Composition("via-echo", Path.of("."), callees),
                            new Composite.Pipeline(List.of(new PipelineStep("echo", Map.of()))), Duration.ofMinutes(1)),
                    ModelKind.PIPELINE.inputsBeforeLoad());
            awaitReady(pipeline);
            handle = new Handle("bench", "echo", callees, new OutstandingCalls());
            caller = new Invocation(REQUEST, CallContext.NONE); // never ends: each call adds one cancellation hook
        }

        @Setup(Level.Iteration)
        public void freshCaller() {
            caller = new Invocation(REQUEST, CallContext.NONE);
        }

        @TearDown(Level.Trial)
        public void stop() {
            engine.close();
        }
    }
}
