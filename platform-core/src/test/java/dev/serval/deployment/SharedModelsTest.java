package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.ChunkReduction;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.LongInputPolicy;
import dev.serval.spec.ModelReference;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which replicas share a loaded model, and which get their own. */
class SharedModelsTest {

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);

    @AfterEach
    void closeAll() {
        engine.close();
    }

    private static DeploymentSpec spec() {
        return DeploymentSpec.defaults("fake", "fake:")
                .withAdmission(new AdmissionSpec(8, 10, 10, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)));
    }

    @Test
    void theKeyHoldsEveryFieldALoaderReads() {
        DeploymentSpec spec = spec();
        SharedModels.Key key = SharedModels.key(spec);

        assertNotEquals(key, SharedModels.key(spec.withPredictors(new PredictorSpec(1, 2, true))), "intra-op threads");
        assertNotEquals(key, SharedModels.key(spec.withVersion("2")), "version");
        assertNotEquals(key, SharedModels.key(spec.withModel(new ModelReference("fake:", 128, LongInputPolicy.TRUNCATE,
                32, ChunkReduction.MEAN, 64))), "a loader option");
        assertNotEquals(key, SharedModels.key(spec.withBatching(spec.batching().withBatchInvariance(false))), "batch invariance");
        assertEquals(key, SharedModels.key(spec.withNumReplicas(3).withPredictors(new PredictorSpec(4, 1, true))),
                "replica count and predictor threads do not change the session");
    }

    @Test
    void aChangeOfIntraOpThreadsLoadsASessionWithTheNewThreadsInsteadOfReusingTheRunningOne() throws Exception {
        List<DeploymentSpec> loads = new CopyOnWriteArrayList<>();
        List<FakeModel> models = new CopyOnWriteArrayList<>();
        Deployment<String, String> deployment = engine.deploy(spec(), spec -> {
            loads.add(spec);
            FakeModel model = new FakeModel();
            models.add(model);
            return model;
        });
        awaitSettled(deployment, 1);

        deployment.update(spec().withPredictors(new PredictorSpec(1, 2, true))).get(10, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (;;) { // one read of each piece of shared state per check
            var replicas = deployment.router().snapshot().replicas();
            boolean replaced = replicas.size() == 1 && replicas.getFirst().id() != 0;
            if (replaced && models.getFirst().closed) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, "the replica was never replaced, or the old session never closed"
                    + " with its last replica: " + deployment.status() + ", loads " + loads.size());
            Thread.yield();
        }

        assertEquals(List.of(1, 2), loads.stream().map(s -> s.predictors().intraOpThreads()).toList(),
                "the new replica loaded its own session with 2 intra-op threads");
        assertEquals(List.of("A"), deployment.submit(List.of("a")).get(10, TimeUnit.SECONDS));
    }

    @Test
    void theEngineLoadsACustomHandlerOncePerReplicaAndEveryOtherKindOncePerVersion() {
        List<DeploymentSpec> handlerLoads = new CopyOnWriteArrayList<>();
        List<DeploymentSpec> tensorLoads = new CopyOnWriteArrayList<>();
        Deployment<Object, Object> handler = engine.deploy(spec().withNumReplicas(2), spec -> {
            handlerLoads.add(spec);
            return anyModel();
        }, ModelKind.JAVA);
        Deployment<Object, Object> tensor = engine.deploy(DeploymentSpec.defaults("tensor", "fake:")
                .withPredictors(new PredictorSpec(1, 1, true)).withNumReplicas(2), spec -> {
                    tensorLoads.add(spec);
                    return anyModel();
                }, ModelKind.TENSOR);
        awaitSettled(handler, 2);
        awaitSettled(tensor, 2);

        assertEquals(2, handlerLoads.size(), "each replica of a java model loads its own");
        assertEquals(1, tensorLoads.size(), "the replicas of a tensor model share one load");
    }

    @SuppressWarnings("unchecked")
    private static Model<Object, Object> anyModel() {
        return (Model<Object, Object>) (Model<?, ?>) new FakeModel();
    }

    /** Waits until exactly {@code running} replicas run and none is updating, stopping or starting. */
    static void awaitSettled(Deployment<?, ?> deployment, int running) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (;;) {
            var status = deployment.status();
            if (status.running() == running && status.updating() == 0 && status.stopping() == 0
                    && status.starting() == 0) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "never settled at " + running + " running: " + status);
            Thread.yield();
        }
    }
}
