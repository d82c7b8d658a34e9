package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Deleting a deployment whose model is still loading, and creating it again under the same name. */
class RemovalTest {

    private static final long WAIT_SECONDS = 10;

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);
    private final CountDownLatch loadGate = new CountDownLatch(1);
    private final CountDownLatch loading = new CountDownLatch(1);

    @AfterEach
    void closeAll() {
        loadGate.countDown();
        engine.close();
    }

    /** A spec whose drain timeout is far shorter than the load. */
    private static DeploymentSpec spec(String version) {
        return DeploymentSpec.defaults("fake", "fake:").withVersion(version)
                .withAdmission(new AdmissionSpec(8, 10, 10, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofMillis(10)));
    }

    /** Loads a model that only arrives once the test opens {@link #loadGate}. */
    private FakeModel gatedLoad(FakeModel model) throws InterruptedException {
        loading.countDown();
        loadGate.await();
        return model;
    }

    @Test
    void aDeploymentDeletedWhileItsModelLoadsIsCreatedAgainAndServesAndTheLateModelIsClosedUnused() throws Exception {
        FakeModel late = new FakeModel();
        Deployment<String, String> first = engine.deploy(spec("1"), ignored -> gatedLoad(late));
        assertTrue(loading.await(WAIT_SECONDS, TimeUnit.SECONDS));

        Thread closer = Thread.ofPlatform().start(first::close);
        closer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertFalse(closer.isAlive(), "the delete waited for the model load");
        assertEquals(DeploymentState.STOPPED, first.state());

        FakeModel fresh = new FakeModel();
        Deployment<String, String> second = engine.deploy(spec("2"), ignored -> fresh);
        awaitState(second, DeploymentState.READY);
        assertEquals(List.of("A"), second.submit(List.of("a")).get(WAIT_SECONDS, TimeUnit.SECONDS));

        loadGate.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!late.closed) {
            assertTrue(System.nanoTime() < deadline, "the model that finished loading after the delete stayed open");
            Thread.yield();
        }
        assertEquals(0, late.openPredictors.get(), "no predictor was made from the late model");
        assertEquals(0, late.predictions.get(), "the late model never ran");
        assertEquals(DeploymentState.READY, second.state());
        assertEquals(List.of("B"), second.submit(List.of("b")).get(WAIT_SECONDS, TimeUnit.SECONDS));
    }
}
