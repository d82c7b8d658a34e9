package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InvalidInput;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rolling update from a model version that refuses {@code "v2-only…"} texts to one that refuses {@code "v1-only…"}
 * texts: every request is judged by the version that runs it, whatever the other version is doing.
 */
class RollingUpdateValidationTest {

    private static final long WAIT_SECONDS = 10;

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);
    private final FakeModel v1 = new FakeModel();
    private final FakeModel v2 = new FakeModel();

    RollingUpdateValidationTest() {
        v1.refusedPrefix = "v2-only";
        v2.refusedPrefix = "v1-only";
    }

    @AfterEach
    void closeAll() {
        v2.probeGate.release(10_000);
        engine.close();
    }

    private Deployment<String, String> deploy(int replicas) {
        DeploymentSpec spec = DeploymentSpec.defaults("fake", "fake:").withNumReplicas(replicas)
                .withAdmission(new AdmissionSpec(8, 10, 10, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withRollout(new RolloutSpec(0.5, Duration.ofSeconds(5)));
        Deployment<String, String> deployment = engine.deploy(spec, s -> s.version().equals("1") ? v1 : v2);
        await("version 1 serves on " + replicas + " replicas", () -> deployment.router().routableReplicas() == replicas);
        return deployment;
    }

    /** How one request ended: {@code served by <version>}, {@code refused} (InvalidInput) or the failure's type. */
    private static String outcome(Deployment<String, String> deployment, String text) throws Exception {
        CompletableFuture<List<String>> result;
        try {
            result = deployment.submit(List.of(text));
        } catch (InvalidInput e) {
            return "refused";
        }
        try {
            assertEquals(List.of(text.toUpperCase()), result.get(WAIT_SECONDS, TimeUnit.SECONDS));
            return "served by " + Router.servedVersion(result).orElseThrow();
        } catch (ExecutionException e) {
            return e.getCause() instanceof InvalidInput ? "refused" : e.getCause().getClass().getSimpleName();
        }
    }

    @Test
    void untilANewReplicaServesTheOldVersionJudgesEveryRequestEvenIfTheNewOneLoadedOrFailedItsWarmUp()
            throws Exception {
        v2.probeGate = new Semaphore(0);
        Deployment<String, String> deployment = deploy(1);

        deployment.update(deployment.spec().withVersion("2")).get(WAIT_SECONDS, TimeUnit.SECONDS);
        await("version 2 loaded and is warming up", () -> v2.probesWaiting.get() >= 1);

        assertEquals("served by 1", outcome(deployment, "v1-only text"), "v1's input while v2 warms up");
        assertEquals("refused", outcome(deployment, "v2-only text"), "v2's input is refused by v1, not run by it");
        assertEquals(0, ((dev.serval.replica.Replica<?, ?>) deployment.router().snapshot().replicas().getFirst())
                .consecutiveFailures(), "refusals never count against v1's health");

        v2.allProbesFail = true;
        v2.probeGate.release(10_000);
        await("version 2 failed its warm-up", () -> deployment.status().failedStarts() > 0);

        assertEquals("served by 1", outcome(deployment, "v1-only after the failure"), "a failed v2 judges nothing");
        assertEquals("refused", outcome(deployment, "v2-only after the failure"));
    }

    @Test
    void whileBothVersionsServeEachRequestIsJudgedByTheReplicaThatRunsIt() throws Exception {
        v2.probeGate = new Semaphore(1); // the first new replica warms up; the second waits, holding the mixed window
        Deployment<String, String> deployment = deploy(2);

        deployment.update(deployment.spec().withVersion("2")).get(WAIT_SECONDS, TimeUnit.SECONDS);
        await("one replica of each version serves, the second new one warming up", () -> {
            Set<String> versions = deployment.router().snapshot().replicas().stream().map(RoutableReplica::version)
                    .collect(Collectors.toSet());
            return versions.equals(Set.of("1", "2")) && v2.probesWaiting.get() >= 2;
        });
        assertTrue(deployment.uniformSignature().isEmpty(), "no single signature while two models serve");
        assertTrue(deployment.signature().isPresent(), "metadata describes the newest serving version");

        Map<String, Integer> v1Only = new java.util.TreeMap<>();
        Map<String, Integer> v2Only = new java.util.TreeMap<>();
        Map<String, Integer> both = new java.util.TreeMap<>();
        for (int i = 0; i < 64; i++) {
            v1Only.merge(outcome(deployment, "v1-only " + i), 1, Integer::sum);
            v2Only.merge(outcome(deployment, "v2-only " + i), 1, Integer::sum);
            both.merge(outcome(deployment, "either " + i), 1, Integer::sum);
        }

        assertEquals(Set.of("served by 1", "refused"), v1Only.keySet(), "v1's inputs: " + v1Only);
        assertEquals(Set.of("served by 2", "refused"), v2Only.keySet(), "v2's inputs: " + v2Only);
        assertEquals(Set.of("served by 1", "served by 2"), both.keySet(), "inputs both take: " + both);
        for (var replica : deployment.router().snapshot().replicas()) {
            assertEquals(0, ((dev.serval.replica.Replica<?, ?>) replica).consecutiveFailures());
        }
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
            Thread.yield();
        }
    }
}
