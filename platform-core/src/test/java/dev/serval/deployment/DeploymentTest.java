package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.health.FailureMonitor;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeploymentTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final ServingEngine engine = new ServingEngine();

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        model.hang.countDown();
        engine.close();
        assertFalse(model.closedWhilePredicting, "the model was closed while a predictor was inside it");
    }

    private Deployment<String, String> ready(DeploymentSpec spec) throws InterruptedException {
        Deployment<String, String> deployment = engine.deploy(spec, ignored -> model);
        awaitState(deployment, DeploymentState.READY);
        return deployment;
    }

    /** One replica with {@code threads} predictors, {@code ongoing} slots, {@code queued} queue places. */
    private static DeploymentSpec spec(int threads, int ongoing, int queued, int maxPerRequest) {
        return DeploymentSpec.defaults("fake", "fake:")
                .withAdmission(new AdmissionSpec(ongoing, queued, maxPerRequest, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(threads, 1, true))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)));
    }

    @Test
    void queuesWhileTheReplicaIsFullAndRefusesPastTheQueueBound() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 1, 2, 4));
        CompletableFuture<List<String>> running = deployment.submit(List.of("wait-running"));
        model.awaitWaiting(1);
        CompletableFuture<List<String>> first = deployment.submit(List.of("wait-a", "wait-b"));
        CompletableFuture<List<String>> second = deployment.submit(List.of("c"));
        assertEquals(2, deployment.queuedRequests());

        Overloaded refused = assertThrows(Overloaded.class, () -> deployment.submit(List.of("x", "y")));

        assertTrue(refused.getMessage().contains("2 requests are queued (max-queued-requests 2)"), refused.getMessage());
        assertTrue(refused.retryAfter().compareTo(Duration.ofMillis(1)) >= 0
                && refused.retryAfter().compareTo(Duration.ofSeconds(60)) <= 0, refused.retryAfter().toString());
        assertEquals(2, deployment.queuedRequests(), "the refused request was not queued");
        model.gate.release(3);
        assertEquals(List.of("WAIT-RUNNING"), running.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("WAIT-A", "WAIT-B"), first.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("C"), second.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(0, deployment.queuedRequests());
    }

    @Test
    void rejectsEmptyOversizedAndInvalidRequestsBeforeQueueing() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 3));

        assertEquals("the request holds no inputs",
                assertThrows(InvalidInput.class, () -> deployment.submit(List.of())).getMessage());
        assertEquals("the request holds 4 inputs; model 'fake' takes at most 3 per request",
                assertThrows(InvalidInput.class, () -> deployment.submit(List.of("a", "b", "c", "d"))).getMessage());
        assertEquals("text 1 is bad",
                assertThrows(InvalidInput.class, () -> deployment.submit(List.of("ok", "bad"))).getMessage());
        assertEquals(0, deployment.queuedRequests());
    }

    @Test
    void isNotReadyWhileLoadingAndReportsALoadFailure() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Deployment<String, String> loading = engine.deploy(spec(1, 8, 10, 10), ignored -> {
            release.await();
            throw new java.io.IOException("no such file: /models/x.onnx");
        });
        assertEquals(DeploymentState.LOADING, loading.state());
        assertEquals("model 'fake' is still loading",
                assertThrows(NotReady.class, () -> loading.submit(List.of("a"))).getMessage());

        release.countDown();
        awaitState(loading, DeploymentState.FAILED);

        assertEquals("no such file: /models/x.onnx", loading.failure().orElseThrow());
        assertEquals(0, loading.status().running());
        assertEquals("model 'fake' failed to load: no such file: /models/x.onnx",
                assertThrows(NotReady.class, () -> loading.submit(List.of("a"))).getMessage());
    }

    @Test
    void inputTheModelRejectsNeverCountsAgainstTheReplicasHealth() throws Exception {
        List<String> unhealthy = Collections.synchronizedList(new ArrayList<>());
        DeploymentSpec spec = spec(1, 8, 10, 10).withHealth(new HealthSpec(Duration.ofSeconds(10), 1, 1)); // one failure is enough
        dev.serval.replica.Replica<String, String> replica = dev.serval.replica.Replica.start(spec, 0, model,
                Thread.ofPlatform().name("serval-fake-r0-", 0).factory(), System::nanoTime,
                dev.serval.metrics.DeploymentMetrics.discarding("fake"), unhealthy::add);
        try {
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> replica.run(List.of("reject")).get(WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(InvalidInput.class, failure.getCause());
            // The one predictor thread records a request's outcome before it takes the next request.
            assertEquals(List.of("OK"), replica.run(List.of("ok")).get(WAIT_SECONDS, TimeUnit.SECONDS));

            assertEquals(List.of(), unhealthy, "bad input is the client's fault, not the replica's");
        } finally {
            assertTrue(replica.close(Duration.ZERO));
        }
    }

    @Test
    void anUnansweredProbeCountsAsAHangOnlyWhenNothingMovesAndTheModelWaitsOnNoOtherDeployment() throws Exception {
        List<String> unhealthy = Collections.synchronizedList(new ArrayList<>());
        DeploymentSpec spec = spec(1, 8, 10, 10).withHealth(new HealthSpec(Duration.ofSeconds(10), 1, 1));
        dev.serval.replica.Replica<String, String> replica = dev.serval.replica.Replica.start(spec, 0, model,
                Thread.ofPlatform().name("serval-fake-r0-", 0).factory(), System::nanoTime,
                dev.serval.metrics.DeploymentMetrics.discarding("fake"), unhealthy::add);
        try {
            CompletableFuture<List<String>> first = replica.run(List.of("wait-1"));
            CompletableFuture<List<String>> second = replica.run(List.of("wait-2"));
            model.awaitWaiting(1);
            replica.probe(); // queued behind the two requests; the health-check thread calls this once a period

            model.waitsOnOthers = true; // a pipeline whose step is slow: its one predictor waits on the step
            replica.probe();
            assertEquals(List.of(), unhealthy, "waiting on another deployment is not a hang");

            model.waitsOnOthers = false;
            model.gate.release(); // the first request finishes; the second holds the predictor
            model.awaitWaiting(2);
            assertEquals(List.of("WAIT-1"), first.get(WAIT_SECONDS, TimeUnit.SECONDS));
            replica.probe();
            assertEquals(List.of(), unhealthy, "slow work that finishes is not a hang");

            replica.probe(); // a period in which nothing finished and nothing waits on another deployment
            assertEquals(1, unhealthy.size(), "a predictor that moves no more is");
            assertTrue(unhealthy.getFirst().contains("did not answer within its period"), unhealthy.getFirst());
            model.gate.release();
            assertEquals(List.of("WAIT-2"), second.get(WAIT_SECONDS, TimeUnit.SECONDS));
        } finally {
            assertTrue(replica.close(Duration.ZERO));
        }
    }

    @Test
    void theModelIsNotClosedWhileAPredictorThreadIsStillInsideItAndIsLeftOpenWhenTheThreadNeverLeaves()
            throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 10)
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofMillis(50))));
        CompletableFuture<List<String>> hung = deployment.submit(List.of("hang"));
        model.awaitWaiting(1);

        deployment.close(); // drains for 50 ms, interrupts (ignored), gives the thread the exit grace, then gives up

        assertTrue(model.ignoredInterrupts.get() > 0, "the predictor thread was interrupted");
        assertEquals(1, model.inside.get(), "it is still inside the model");
        assertFalse(model.closed, "so the model was left open");
        model.hang.countDown();
        assertEquals(List.of("HANG"), hung.get(WAIT_SECONDS, TimeUnit.SECONDS), "answered when the thread comes back");
        assertFalse(model.closed, "a model once left open stays open");
    }

    @Test
    void anInterruptedPredictorLeavesTheModelBeforeTheModelIsClosed() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 10)
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofMillis(50))));
        CompletableFuture<List<String>> blocked = deployment.submit(List.of("wait"));
        model.awaitWaiting(1);

        deployment.close(); // the drain runs out; the interrupt ends the blocked predict

        assertTrue(model.closed);
        assertFalse(model.closedWhilePredicting, "closed only after the interrupted thread left the model");
        assertEquals(0, model.openPredictors.get());
        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> blocked.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, failure.getCause());
    }

    @Test
    void closeFinishesQueuedWorkThenReleasesPredictorsAndModel() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 10));
        CompletableFuture<List<String>> running = deployment.submit(List.of("wait"));
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = deployment.submit(List.of("queued"));

        Thread closer = Thread.ofPlatform().start(deployment::close);
        awaitState(deployment, DeploymentState.STOPPED);
        assertEquals("model 'fake' is shutting down",
                assertThrows(NotReady.class, () -> deployment.submit(List.of("late"))).getMessage());
        model.gate.release();
        closer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));

        assertEquals(List.of("WAIT"), running.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("QUEUED"), queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(0, model.openPredictors.get());
        assertTrue(model.closed);
    }

    @Test
    void everyConcurrentCallerGetsAResultOrATypedRefusal() throws Exception {
        Deployment<String, String> deployment = ready(spec(2, 4, 8, 8));
        int clients = 8;
        int requestsPerClient = 200;
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch startLine = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    startLine.await();
                    for (int r = 0; r < requestsPerClient; r++) {
                        List<String> inputs = IntStream.range(0, 1 + r % 8).mapToObj(i -> client + "-" + i).toList();
                        try {
                            List<String> outputs = deployment.submit(inputs).get(WAIT_SECONDS, TimeUnit.SECONDS);
                            if (!outputs.equals(inputs.stream().map(String::toUpperCase).toList())) {
                                unexpected.add(new AssertionError("wrong outputs " + outputs));
                            }
                            ok.incrementAndGet();
                        } catch (Overloaded e) {
                            refused.incrementAndGet();
                        }
                    }
                } catch (Throwable t) {
                    unexpected.add(t);
                }
            }));
        }
        startLine.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(thread.isAlive());
        }

        assertEquals(List.of(), unexpected);
        assertEquals(clients * requestsPerClient, ok.get() + refused.get());
        assertEquals(0, deployment.queuedRequests(), "the queue empties");
        assertEquals(0, deployment.router().snapshot().replicas().getFirst().inFlight(), "every slot is released");
    }

    @Test
    void aReplicaWhoseSlotsTimesInputsPerRequestPassesTheIntRangeStillAdmitsRequests() throws Exception {
        // 1,000,000 x 1,000,000 inputs wrapped to a negative int queue bound: every request was refused as overloaded.
        Deployment<String, String> deployment = ready(spec(1, 1_000_000, 10, 1_000_000));

        assertEquals(List.of("A", "B"), deployment.submit(List.of("a", "b")).get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void loadsTheWeightsOncePerVersionForAllReplicasAndClosesThemWithTheLastReplica() throws Exception {
        AtomicInteger loads = new AtomicInteger();
        Deployment<String, String> deployment = engine.deploy(spec(1, 8, 10, 10).withNumReplicas(3), ignored -> {
            loads.incrementAndGet();
            return model;
        });
        awaitRunning(deployment, 3);
        assertEquals(1, loads.get(), "three replicas, one load");

        deployment.update(deployment.spec().withVersion("2"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        for (var now = deployment.status(); !now.version().equals("2") || now.running() != 3 || now.stopping() > 0
                || now.updating() > 0; now = deployment.status()) { // one status per check: it is replaced meanwhile
            assertTrue(System.nanoTime() < deadline, "old replicas never left: " + now);
            Thread.yield();
        }
        assertEquals(2, loads.get(), "a new version loads once more");
        assertTrue(model.closed, "version 1's weights were closed with its last replica");
        assertEquals("2", deployment.status().version());
    }

    @Test
    void aReplicaFailingItsHealthCheckIsReplaced() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 10).withHealth(new HealthSpec(Duration.ofMillis(20), 2, 1)));
        long first = deployment.router().snapshot().replicas().getFirst().id();

        model.doomed.add(first);

        awaitReplaced(deployment, first);
        // Either failing probe may be the one that reached the threshold: the doomed probe itself, or (on a loaded
        // machine, with a 20 ms period) a probe still unanswered when the next period began.
        String lastError = deployment.status().lastError();
        assertTrue(lastError.contains("doomed replica") || lastError.contains("did not answer within its period"),
                lastError);
        assertEquals(lastError, deployment.recentErrors().getLast().message());
        assertEquals(List.of("STILL SERVED"), deployment.submit(List.of("still served")).get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void aDeploymentThatKeepsFailingHasItsReplicasReplacedThenTurnsTheNodeNotLive() throws Exception {
        try (ServingEngine failing = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
                java.time.InstantSource.system(), new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                new dev.serval.health.FailureMonitor.Settings(true, Duration.ofMinutes(10), 0.5, 4, 1))) {
            Deployment<String, String> deployment = failing.deploy(
                    spec(1, 8, 10, 10).withHealth(new HealthSpec(Duration.ofSeconds(10), 100, 1)), ignored -> model);
            awaitState(deployment, DeploymentState.READY);
            long first = deployment.router().snapshot().replicas().getFirst().id();

            failRequests(deployment, 4);
            failing.failureMonitor().evaluate();

            awaitReplaced(deployment, first);
            assertTrue(failing.failureMonitor().live());

            failRequests(deployment, 4);
            failing.failureMonitor().evaluate();
            assertFalse(failing.failureMonitor().live(), "still failing after the replacement");
            assertTrue(failing.failureMonitor().notLiveReason().contains("100% of the last 4 requests to 'fake' failed"));
        }
    }

    @Test
    void aClosedDeploymentLeavesNoMeterBehindSoThatCreatingAndDeletingNamesDoesNotGrowTheRegistry() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        try (ServingEngine metered = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
                java.time.InstantSource.system(), registry, FailureMonitor.Settings.defaults())) {
            Deployment<String, String> gone = metered.deploy(spec(1, 8, 10, 10), ignored -> model);
            DeploymentSpec other = spec(1, 8, 10, 10);
            Deployment<String, String> kept = metered.deploy(DeploymentSpec.defaults("kept", "fake:")
                    .withAdmission(other.admission()).withPredictors(other.predictors()), ignored -> model);
            awaitState(gone, DeploymentState.READY);
            awaitState(kept, DeploymentState.READY);
            assertEquals(List.of("A"), gone.submit(List.of("a")).get(WAIT_SECONDS, TimeUnit.SECONDS));
            // what the edge registers for a deployment besides the engine's own meters (request counters)
            registry.counter("serval.requests", "deployment", gone.name(), "outcome", "ok").increment();
            gone.close();

            assertEquals(List.of(), registry.getMeters().stream()
                    .filter(m -> gone.name().equals(m.getId().getTag("deployment")))
                    .map(m -> m.getId().getName()).toList(), "every series of the closed deployment is gone");
            assertTrue(registry.getMeters().stream().anyMatch(m -> "kept".equals(m.getId().getTag("deployment"))),
                    "the other deployment's meters stay");
        }
    }

    @Test
    void requestsThatFailInUserCodeNeverTakeTheNodeOutOfLiveness() throws Exception {
        model.failuresMarkUnhealthy = false; // as a pipeline or a Java handler: the failure is the input's
        try (ServingEngine failing = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
                java.time.InstantSource.system(), new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                new FailureMonitor.Settings(true, Duration.ofMinutes(10), 0.5, 4, 0))) {
            Deployment<String, String> deployment = failing.deploy(
                    spec(1, 8, 10, 10).withHealth(new HealthSpec(Duration.ofSeconds(10), 100, 1)), ignored -> model);
            awaitState(deployment, DeploymentState.READY);
            long first = deployment.router().snapshot().replicas().getFirst().id();

            failRequests(deployment, 8);
            failing.failureMonitor().evaluate();

            assertTrue(failing.failureMonitor().live(), failing.failureMonitor().notLiveReason());
            assertEquals(first, deployment.router().snapshot().replicas().getFirst().id(), "no replacement");
        }
    }

    private static void failRequests(Deployment<String, String> deployment, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> deployment.submit(List.of("boom")).get(WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(InferenceFailed.class, failure.getCause());
            deployment.recordOutcome(true);
        }
    }

    @Test
    void queuedRequestsFailInsteadOfWaitingForeverWhenNoReplicaCanStart() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 1, 4, 4).withHealth(new HealthSpec(Duration.ofMillis(20), 1, 1)));
        CompletableFuture<List<String>> running = deployment.submit(List.of("wait"));
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = deployment.submit(List.of("queued"));

        model.allProbesFail = true; // the replica fails its health check, and every replacement fails its warm-up

        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, failure.getCause());
        assertTrue(failure.getCause().getMessage().startsWith("model 'fake' failed to load: "),
                failure.getCause().getMessage());
        model.gate.release();
        assertEquals(List.of("WAIT"), running.get(WAIT_SECONDS, TimeUnit.SECONDS), "the admitted request finished");
    }

    @Test
    void scalingToZeroReplicasRefusesQueuedAndNewRequestsAtOnceNamingTheReason() throws Exception {
        Deployment<String, String> deployment = ready(spec(1, 1, 4, 4));
        CompletableFuture<List<String>> running = deployment.submit(List.of("wait"));
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = deployment.submit(List.of("queued"));

        deployment.update(deployment.spec().withNumReplicas(0)).get(WAIT_SECONDS, TimeUnit.SECONDS);

        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, failure.getCause());
        assertEquals("model 'fake' has num_replicas 0: no replica serves it", failure.getCause().getMessage());
        assertEquals("model 'fake' has num_replicas 0: no replica serves it",
                assertThrows(NotReady.class, () -> deployment.submit(List.of("new"))).getMessage());
        model.gate.release();
        assertEquals(List.of("WAIT"), running.get(WAIT_SECONDS, TimeUnit.SECONDS), "the admitted request finished");

        deployment.update(deployment.spec().withNumReplicas(1)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        awaitState(deployment, DeploymentState.READY);
        assertEquals(List.of("BACK"), deployment.submit(List.of("back")).get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void theBatchSizeChangesInPlaceWithoutReplacingReplicas() throws Exception {
        model.batches = true;
        Deployment<String, String> deployment = ready(spec(1, 8, 10, 8));
        long replica = deployment.router().snapshot().replicas().getFirst().id();

        deployment.update(deployment.spec().withBatching(deployment.spec().batching().withMaxBatchSize(2))).get(WAIT_SECONDS, TimeUnit.SECONDS); // applied
        CompletableFuture<List<String>> blocker = deployment.submit(List.of("wait"));
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = deployment.submit(List.of("a", "b", "c", "d", "e"));
        model.batchSizes.clear();
        model.gate.release();
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of("A", "B", "C", "D", "E"), queued.get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertTrue(model.batchSizes.stream().allMatch(size -> size <= 2), "batches of at most 2: " + model.batchSizes);
        assertEquals(replica, deployment.router().snapshot().replicas().getFirst().id(), "the same replica serves");
        assertEquals(1, deployment.status().running());
    }

    @Test
    void specRejectsUnboundedOrInvalidSettings() {
        assertThrows(IllegalArgumentException.class, () -> spec(0, 8, 10, 10));
        assertThrows(IllegalArgumentException.class, () -> spec(1, 0, 10, 10));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> spec(1, 8, -1, 10));
        assertEquals("max_queued_requests must be between 0 and 1000000, not -1", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DeploymentSpec.defaults("Bad Name", "fake:"));
    }

    /**
     * Waits until a replica other than {@code first} is routable. Reads one snapshot per check: the controller may
     * swap in a new (even empty) one between two reads.
     */
    private static void awaitReplaced(Deployment<?, ?> deployment, long first) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        for (var now = deployment.router().snapshot(); now.isEmpty() || now.replicas().getFirst().id() == first;
                now = deployment.router().snapshot()) {
            assertTrue(System.nanoTime() < deadline, "the replica was never replaced: " + deployment.status());
            Thread.yield();
        }
    }

    private static void awaitRunning(Deployment<?, ?> deployment, int replicas) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (deployment.status().running() != replicas) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never " + replicas + " running: " + deployment.status());
            }
            Thread.yield();
        }
    }
}
