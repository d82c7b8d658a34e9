package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.routing.RoutableReplica;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Real threads: clients route requests while the controller scales the deployment up and down and replicas are
 * killed (their health checks start failing). No request is lost, none reaches a stopped replica (which would
 * answer "shut down"), and every caller gets its answer or a typed rejection.
 */
class ChaosTest {

    @Test
    void noRequestIsLostOrSentToAStoppedReplicaWhileReplicasComeAndGo() throws Exception {
        FakeModel model = new FakeModel();
        DeploymentSpec spec = DeploymentSpec.defaults("fake", "fake:").withNumReplicas(2)
                .withAdmission(new AdmissionSpec(2, 16, 4, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withHealth(new HealthSpec(Duration.ofMillis(10), 1, HealthSpec.DEFAULTS.minReadyReplicas()))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)));
        try (ServingEngine engine = new ServingEngine(Duration.ofMillis(20), System::nanoTime)) {
            Deployment<String, String> deployment = engine.deploy(spec, ignored -> model);
            awaitReady(deployment);

            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger ok = new AtomicInteger();
            AtomicInteger overloaded = new AtomicInteger();
            AtomicInteger noReplica = new AtomicInteger();
            List<String> wrong = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch clientsDone = new CountDownLatch(4);
            for (int c = 0; c < 4; c++) {
                int client = c;
                Thread.ofPlatform().start(() -> {
                    try {
                        for (int i = 0; running.get(); i++) {
                            String text = "c" + client + "-" + i;
                            try {
                                CompletableFuture<List<String>> answer = deployment.submit(List.of(text, text + "b"));
                                List<String> outputs = answer.get(30, TimeUnit.SECONDS);
                                if (!outputs.equals(List.of(text.toUpperCase(), (text + "b").toUpperCase()))) {
                                    wrong.add("wrong answer " + outputs);
                                }
                                ok.incrementAndGet();
                            } catch (Overloaded e) {
                                overloaded.incrementAndGet();
                            } catch (NotReady e) {
                                if (e.getMessage().contains("no running replica")) {
                                    noReplica.incrementAndGet(); // every replica was being replaced at that moment
                                } else {
                                    wrong.add("reached a stopped replica: " + e.getMessage());
                                }
                            } catch (ExecutionException e) {
                                wrong.add("failed: " + e.getCause());
                            }
                        }
                    } catch (Throwable t) {
                        wrong.add(t.toString());
                    } finally {
                        clientsDone.countDown();
                    }
                });
            }

            ThreadLocalRandom random = ThreadLocalRandom.current();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int scaled = 0;
            int killed = 0;
            while (System.nanoTime() < end) {
                if (random.nextBoolean()) {
                    deployment.update(spec.withNumReplicas(1 + random.nextInt(4)));
                    scaled++;
                } else {
                    List<RoutableReplica<String, String>> live = deployment.router().snapshot().replicas();
                    if (!live.isEmpty()) {
                        model.doomed.add(live.get(random.nextInt(live.size())).id());
                        killed++;
                    }
                }
                TimeUnit.MILLISECONDS.sleep(30); // pacing the chaos; the clients run flat out meanwhile
            }
            running.set(false);
            assertTrue(clientsDone.await(60, TimeUnit.SECONDS), "every client finished: no request was lost");

            assertEquals(List.of(), wrong);
            assertTrue(ok.get() > 100, "requests were served throughout: " + ok.get());
            assertTrue(scaled > 10 && killed > 10, "the chaos happened: scaled " + scaled + ", killed " + killed);
            var last = deployment.status(); // one status: it may be replaced between two reads
            assertFalse(last.running() == 0 && last.starting() == 0, last.toString());
            System.out.printf("chaos: %d ok, %d overloaded, %d without a replica, %d scalings, %d kills%n",
                    ok.get(), overloaded.get(), noReplica.get(), scaled, killed);
        }
        assertEquals(0, model.openPredictors.get(), "every predictor was closed");
    }

    private static void awaitReady(Deployment<?, ?> deployment) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (deployment.state() != DeploymentState.READY) {
            assertTrue(System.nanoTime() < deadline, "deployment never became ready");
            TimeUnit.MILLISECONDS.sleep(5); // waiting for the launcher threads; nothing to join on
        }
    }
}
