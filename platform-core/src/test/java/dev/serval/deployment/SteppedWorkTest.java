package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InvalidInput;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.replica.Replica;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Inputs whose work comes in steps (a chunked text's windows), run through a real deployment: the predictor thread
 * learns when the request is abandoned, and input errors found while running are the client's, not the replica's.
 */
class SteppedWorkTest {

    private static final long WAIT_SECONDS = 10;

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);
    private final Semaphore stepGate = new Semaphore(0);
    private final AtomicInteger steps = new AtomicInteger();
    private final AtomicInteger stepping = new AtomicInteger();

    @AfterEach
    void closeAll() {
        stepGate.release(10_000);
        engine.close();
    }

    /**
     * Input {@code "steps"} runs ten steps, each waiting for a permit of {@link #stepGate}, and checks before each
     * whether it is abandoned; {@code "too-long"} is refused while running, as a text with too many windows is.
     */
    private final class SteppedModel implements Model<String, String> {
        @Override
        public ModelSignature signature() {
            return new ModelSignature("stepped", List.of(), List.of());
        }

        @Override
        public dev.serval.request.TensorIO<String, String> io() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Predictor<String, String> newPredictor() {
            return new Predictor<>() {
                @Override
                public String predict(String input) throws Exception {
                    return predict(input, () -> false);
                }

                @Override
                public String predict(String input, BooleanSupplier abandoned) throws Exception {
                    if (input.equals("too-long")) {
                        throw new InvalidInput("a text splits into 99 windows; at most 64 (max_chunks_per_input)");
                    }
                    if (!input.equals("steps")) {
                        return input;
                    }
                    for (int i = 0; i < 10; i++) {
                        if (abandoned.getAsBoolean()) {
                            return null;
                        }
                        stepping.incrementAndGet();
                        stepGate.acquire();
                        steps.incrementAndGet();
                    }
                    return "done";
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public String probeInput() {
            return "probe";
        }

        @Override
        public void validate(String input, int index) {
        }

        @Override
        public void close() {
        }
    }

    private Deployment<String, String> ready() {
        DeploymentSpec spec = DeploymentSpec.defaults("stepped", "stepped:")
                .withAdmission(new AdmissionSpec(8, 10, 10, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withHealth(HealthSpec.DEFAULTS.withHealthCheckFailureThreshold(2))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)));
        Deployment<String, String> deployment = engine.deploy(spec, ignored -> new SteppedModel());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (deployment.state() != DeploymentState.READY) {
            assertTrue(System.nanoTime() < deadline, "never ready: " + deployment.status());
            Thread.yield();
        }
        return deployment;
    }

    @Test
    void aCancelledRequestStopsAtItsNextStep() throws Exception {
        Deployment<String, String> deployment = ready();
        CompletableFuture<List<String>> result = deployment.submit(List.of("steps"));
        awaitAtLeast(stepping, 1);

        result.cancel(false);
        stepGate.release(); // the first step ends; the predictor then sees the request is abandoned

        assertEquals(List.of("after"), deployment.submit(List.of("after")).get(WAIT_SECONDS, TimeUnit.SECONDS),
                "the predictor is free again");
        assertEquals(1, steps.get(), "no step ran after the cancellation");
    }

    @Test
    void anInputRefusedWhileRunningFailsAsInvalidInputAndDoesNotCountAgainstTheReplica() throws Exception {
        Deployment<String, String> deployment = ready();

        for (int i = 0; i < 3; i++) { // the failure threshold is 2
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> deployment.submit(List.of("too-long")).get(WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(InvalidInput.class, failure.getCause());
        }

        Replica<?, ?> replica = (Replica<?, ?>) deployment.router().snapshot().replicas().getFirst();
        assertEquals(0, replica.consecutiveFailures());
        assertEquals(0L, deployment.status().failedStarts());
        assertEquals(List.of("fine"), deployment.submit(List.of("fine")).get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    private static void awaitAtLeast(AtomicInteger counter, int value) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (counter.get() < value) {
            assertTrue(System.nanoTime() < deadline, "counter stayed at " + counter.get());
            Thread.yield();
        }
    }
}
