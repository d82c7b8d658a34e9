package dev.serval.multiplex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The multiplexer over a fake hosting: single-flight loads under concurrent first requests (real threads), the LRU
 * order, the in-flight guard, the memory bound, and what a repository change does. The refresher's period is an
 * hour: tests run {@link Multiplexer#refresh} themselves.
 */
class MultiplexerTest {

    /** What serves one model, as the fake hosting drives it. */
    static final class Model {
        final String name;
        volatile String version;
        final AtomicInteger ongoing = new AtomicInteger();
        final AtomicInteger loads = new AtomicInteger();
        final AtomicInteger queued = new AtomicInteger();
        volatile int replicas;
        volatile boolean failed;
        volatile boolean closed;
        /** When set, closing waits for it: a model whose requests take long to drain. */
        volatile java.util.concurrent.CountDownLatch closeGate;

        Model(String name, String version) {
            this.name = name;
            this.version = version;
        }
    }

    final class FakeHosting implements Multiplexer.Hosting<Model> {
        final Map<String, Model> created = new ConcurrentHashMap<>();
        final AtomicInteger creations = new AtomicInteger();
        final List<String> unloads = new CopyOnWriteArrayList<>();
        /** Calls of {@link #ongoing}: each placement reads every loaded model's. */
        final AtomicInteger ongoingReads = new AtomicInteger();

        @Override
        public Model create(String model, String version) {
            creations.incrementAndGet();
            Model created = new Model(model, version);
            this.created.put(model, created);
            return created;
        }

        @Override
        public CompletableFuture<Void> replicas(Model handle, int count) {
            int before = handle.replicas;
            handle.replicas = count;
            if (count > before && before == 0) {
                handle.loads.incrementAndGet();
            } else if (count < before) {
                unloads.add(handle.name);
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public int queued(Model handle) {
            return handle.queued.get();
        }

        @Override
        public int serving(Model handle) {
            return handle.replicas;
        }

        @Override
        public int capacity(Model handle) {
            return 2;
        }

        @Override
        public void update(Model handle, String version) {
            handle.version = version;
        }

        @Override
        public int ongoing(Model handle) {
            ongoingReads.incrementAndGet();
            return handle.ongoing.get();
        }

        @Override
        public boolean failed(Model handle) {
            return handle.failed;
        }

        @Override
        public void close(Model handle) {
            java.util.concurrent.CountDownLatch gate = handle.closeGate;
            if (gate != null) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            handle.closed = true;
        }
    }

    private final AtomicLong clock = new AtomicLong();
    private final FakeHosting hosting = new FakeHosting();
    private final Map<String, Candidate> repository = new ConcurrentHashMap<>(Map.of(
            "t-a", new Candidate("1", 100), "t-b", new Candidate("1", 100), "t-c", new Candidate("2", 100),
            "t-huge", new Candidate("1", 10_000)));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Multiplexer<Model>> opened = new ArrayList<>();

    /** A plain LRU: no residency. */
    private Multiplexer<Model> multiplexer(int replicas, int perReplica, long memory) {
        return multiplexer(replicas, perReplica, memory, new Multiplexer.Tuning(Duration.ofHours(1), Duration.ZERO, 0));
    }

    private Multiplexer<Model> multiplexer(int replicas, int perReplica, long memory, Multiplexer.Tuning tuning) {
        Multiplexer<Model> multiplexer = new Multiplexer<>("tenants", replicas, new MultiplexSpec(perReplica, memory),
                hosting, () -> Map.copyOf(repository), tuning, clock::incrementAndGet, registry);
        opened.add(multiplexer);
        return multiplexer;
    }

    @AfterEach
    void close() {
        opened.forEach(Multiplexer::close);
    }

    /** One request to {@code model}: acquired and released at once. */
    private static void use(Multiplexer<Model> multiplexer, String model) {
        multiplexer.acquire(model).release();
    }

    private static List<String> loaded(Multiplexer<Model> multiplexer) {
        return multiplexer.replicaModels().stream().flatMap(r -> r.models().stream()).sorted().toList();
    }

    @Test
    void concurrentFirstRequestsLoadTheModelOnce() throws Exception {
        Multiplexer<Model> multiplexer = multiplexer(2, 2, 0);
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Entry<Model>> entries = new CopyOnWriteArrayList<>();
        List<Thread> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            started.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await(10, TimeUnit.SECONDS);
                    entries.add(multiplexer.acquire("t-a"));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }));
        }
        for (Thread thread : started) {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertEquals(threads, entries.size());
        entries.forEach(entry -> assertSame(entries.getFirst(), entry, "one entry for every request"));
        assertEquals(1, hosting.creations.get(), "one handle");
        assertEquals(1, hosting.created.get("t-a").loads.get(), "one load");
        assertEquals(1.0, registry.get("serval.multiplex.loads").counter().count());
        assertEquals(1, multiplexer.loadedCount());
        entries.forEach(Entry::release);
    }

    @Test
    void aFullReplicaUnloadsItsLeastRecentlyUsedModel() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        use(multiplexer, "t-b");
        use(multiplexer, "t-a"); // t-b is now the least recently used
        use(multiplexer, "t-c");
        assertEquals(List.of("t-b"), hosting.unloads);
        assertEquals(List.of("t-a", "t-c"), loaded(multiplexer));
        assertEquals(List.of("t-c", "t-a"), multiplexer.replicaModels().getFirst().models(), "most recent first");
        assertEquals(1.0, registry.get("serval.multiplex.evictions").counter().count());
        assertEquals(2.0, registry.get("serval.multiplex.models.loaded").gauge().value());

        use(multiplexer, "t-b"); // loads again, in place of t-a now
        assertEquals(List.of("t-b", "t-a"), hosting.unloads);
        assertEquals(2, hosting.created.get("t-b").loads.get());
        assertEquals(3, hosting.creations.get(), "an unloaded model keeps its handle");
    }

    @Test
    void aModelARequestHoldsIsNeverUnloaded() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        Entry<Model> held = multiplexer.acquire("t-a"); // the oldest, but in use
        use(multiplexer, "t-b");
        use(multiplexer, "t-c");
        assertEquals(List.of("t-b"), hosting.unloads);
        Entry<Model> c = multiplexer.acquire("t-c");
        // both t-a and t-c are held now: nothing can make room for t-b, which waits (its requests in its queue)
        Entry<Model> b = multiplexer.acquire("t-b");
        assertEquals(List.of(), multiplexer.replicasOf("t-b"));
        assertEquals(1, hosting.created.get("t-b").loads.get(), "only its first load so far");
        held.release(); // t-a is idle now: t-b takes its place at once
        assertEquals(List.of("t-b", "t-a"), hosting.unloads);
        assertEquals(List.of(0), multiplexer.replicasOf("t-b"));
        assertEquals(2, hosting.created.get("t-b").loads.get());
        b.release();
        c.release();
    }

    @Test
    void aModelWaitingForRoomIsForgottenOnceNothingWaitsForIt() {
        Multiplexer<Model> multiplexer = multiplexer(1, 1, 0);
        Entry<Model> a = multiplexer.acquire("t-a");
        Entry<Model> b = multiplexer.acquire("t-b"); // waits for room
        b.release(); // its request gave up (deadline, client gone)
        a.release();
        assertEquals(List.of(), hosting.unloads, "t-a is not unloaded for a model nobody waits for");
        assertEquals(0, hosting.created.get("t-b").loads.get());
    }

    @Test
    void aModelWithRequestsRunningOrQueuedIsNeverUnloaded() {
        Multiplexer<Model> multiplexer = multiplexer(1, 1, 0);
        use(multiplexer, "t-a");
        hosting.created.get("t-a").ongoing.set(1); // its client went away, its inference still runs
        Entry<Model> b = multiplexer.acquire("t-b");
        assertEquals(List.of(), multiplexer.replicasOf("t-b"), "t-b waits for room");
        assertEquals(List.of(), hosting.unloads);
        hosting.created.get("t-a").ongoing.set(0);
        multiplexer.refresh(); // no release came: the refresher retries
        assertEquals(List.of("t-a"), hosting.unloads);
        assertEquals(List.of(0), multiplexer.replicasOf("t-b"));
        b.release();
    }

    @Test
    void aModelStaysItsResidencyBeforeItMakesRoomSoThatTooManyModelsDoNotThrash() {
        Multiplexer<Model> multiplexer = multiplexer(1, 1, 0,
                new Multiplexer.Tuning(Duration.ofHours(1), Duration.ofSeconds(1), 0));
        use(multiplexer, "t-a");
        Entry<Model> b = multiplexer.acquire("t-b"); // t-a is idle but loaded a moment ago
        assertEquals(List.of(), multiplexer.replicasOf("t-b"), "t-b waits for t-a's residency to end");
        multiplexer.balance();
        assertEquals(List.of(), hosting.unloads);

        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        multiplexer.balance(); // no release comes: the balancer retries
        assertEquals(List.of("t-a"), hosting.unloads);
        assertEquals(List.of(0), multiplexer.replicasOf("t-b"));
        b.release();
    }

    @Test
    void aPinAndAnUnloadExcludeEachOther() {
        Entry<Model> entry = new Entry<>(null, "t-a", new Model("t-a", "1"), new Candidate("1", 1));
        assertTrue(entry.pin());
        assertFalse(entry.retire(), "a held model cannot be retired");
        entry.release();
        assertTrue(entry.retire());
        assertFalse(entry.pin(), "a retiring model cannot be held");
        entry.reinstate();
        assertTrue(entry.pin());
    }

    @Test
    void theMemoryBoundUnloadsAndRefusesAModelThatCanNeverFit() {
        Multiplexer<Model> multiplexer = multiplexer(2, 4, 250);
        use(multiplexer, "t-a");
        use(multiplexer, "t-b");
        use(multiplexer, "t-c");
        assertEquals(List.of("t-a"), hosting.unloads, "300 bytes would pass 250");
        NotReady refused = assertThrows(NotReady.class, () -> multiplexer.acquire("t-huge"));
        assertTrue(refused.getMessage().contains("max_model_memory (250 bytes)"), refused.getMessage());
        assertEquals(List.of("t-b", "t-c"), loaded(multiplexer), "a refused load unloads nothing");
    }

    @Test
    void aNameTheRepositoryDoesNotHoldIsUnknownWithoutALoad() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        assertNull(multiplexer.acquire("t-z"));
        assertEquals(0, hosting.creations.get());
        repository.put("t-z", new Candidate("1", 1));
        assertNull(multiplexer.acquire("t-z"), "until the next scan sees it");
        multiplexer.refresh();
        use(multiplexer, "t-z");
        assertEquals(1, hosting.created.get("t-z").loads.get());
    }

    @Test
    void aNewVersionRollsOnlyThatModel() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        use(multiplexer, "t-b");
        repository.put("t-a", new Candidate("2", 100));
        multiplexer.refresh();
        assertEquals("2", hosting.created.get("t-a").version);
        assertEquals("1", hosting.created.get("t-b").version);
        assertEquals(List.of(), hosting.unloads, "rolled, not unloaded");
    }

    @Test
    void aModelThatLeftTheRepositoryClosesOnceItsRequestsEnded() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        Entry<Model> held = multiplexer.acquire("t-a");
        repository.remove("t-a");
        multiplexer.refresh();
        assertFalse(hosting.created.get("t-a").closed, "a request still holds it");
        held.release();
        multiplexer.refresh();
        awaitClosed(hosting.created.get("t-a")); // closed in the background
        assertNull(multiplexer.acquire("t-a"), "unknown from now on");
        assertEquals(0, multiplexer.loadedCount());
    }

    @Test
    void aFailedLoadIsUnloadedSoThatTheNextRequestLoadsAgain() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        hosting.created.get("t-a").failed = true;
        multiplexer.refresh();
        assertEquals(List.of("t-a"), hosting.unloads);
        hosting.created.get("t-a").failed = false;
        use(multiplexer, "t-a");
        assertEquals(2, hosting.created.get("t-a").loads.get());
    }

    @Test
    void fewerReplicasUnloadTheIdleModelsOfTheReplicasThatWent() {
        Multiplexer<Model> multiplexer = multiplexer(2, 1, 0);
        use(multiplexer, "t-a");
        Entry<Model> held = multiplexer.acquire("t-b");
        assertEquals(2, multiplexer.replicaModels().size());
        int replicaOfB = multiplexer.replicaModels().get(0).models().contains("t-b") ? 0 : 1;
        multiplexer.configure(1, new MultiplexSpec(1, 0));
        if (replicaOfB == 1) {
            assertEquals(List.of(), hosting.unloads, "t-b, busy on the replica that went, stays until idle");
            held.release();
            multiplexer.refresh();
            assertEquals(List.of("t-b"), hosting.unloads);
        } else {
            assertEquals(List.of("t-a"), hosting.unloads);
            held.release();
        }
        assertEquals(1, multiplexer.loadedCount());
    }

    @Test
    void aHotModelSpreadsToAReplicaWithRoomAndGivesItBackOnceItCooled() {
        Multiplexer<Model> multiplexer = multiplexer(2, 2, 0);
        use(multiplexer, "t-a");
        Model a = hosting.created.get("t-a");
        multiplexer.balance();
        assertEquals(1, multiplexer.replicasOf("t-a").size(), "not busy: one replica");

        a.queued.set(3); // its replica is full: requests wait in its queue
        a.ongoing.set(5);
        multiplexer.balance();
        assertEquals(List.of(0, 1), multiplexer.replicasOf("t-a").stream().sorted().toList());
        assertEquals(2, a.replicas);
        assertEquals(2.0, registry.get("serval.multiplex.loads").counter().count(), "a spread counts as a load");
        assertEquals(2.0, registry.get("serval.multiplex.models.loaded").gauge().value(), "summed over replicas");
        multiplexer.balance();
        assertEquals(2, a.replicas, "no third replica: there are two");

        a.queued.set(0);
        a.ongoing.set(1); // one replica fewer (capacity 2) serves it at half its capacity
        multiplexer.balance();
        assertEquals(2, a.replicas, "calm only just began");
        clock.addAndGet(Spreader.CALM_PERIOD.toNanos());
        multiplexer.balance();
        assertEquals(1, a.replicas);
        assertEquals(List.of("t-a"), hosting.unloads);
    }

    @Test
    void aSpreadModelsExtraReplicaMakesRoomEvenWhileTheModelIsBusy() {
        Multiplexer<Model> multiplexer = multiplexer(2, 1, 0);
        Entry<Model> a = multiplexer.acquire("t-a");
        hosting.created.get("t-a").queued.set(1);
        multiplexer.balance();
        assertEquals(2, hosting.created.get("t-a").replicas);
        hosting.created.get("t-a").queued.set(0);

        use(multiplexer, "t-b"); // both replicas full: t-a, busy, gives up its extra replica, not its last
        assertEquals(1, hosting.created.get("t-a").replicas);
        assertEquals(1, hosting.created.get("t-b").replicas);
        assertEquals(2, multiplexer.loadedCount());
        a.release();
    }

    @Test
    void aModelDoesNotSpreadBeyondTheReplicaCount() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        hosting.created.get("t-a").queued.set(4);
        multiplexer.balance();
        assertEquals(1, hosting.created.get("t-a").replicas);
    }

    @Test
    void closingClosesEveryModelAndRemovesTheMeters() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        multiplexer.close();
        assertTrue(hosting.created.get("t-a").closed);
        assertTrue(registry.find("serval.multiplex.loads").counters().isEmpty());
        assertThrows(NotReady.class, () -> multiplexer.acquire("t-b"));
    }
    @Test
    void aNameTheRepositoryDoesNotHoldIsNoArrival() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        assertNull(multiplexer.acquire("t-zzz"));
        assertFalse(multiplexer.takeArrived(), "an unknown name must not wake an autoscaled deployment");
        use(multiplexer, "t-a");
        assertTrue(multiplexer.takeArrived());
    }

    @Test
    void findingAModelNeitherPinsNorLoadsItUntilItsRequestIsAcquired() {
        Multiplexer<Model> multiplexer = multiplexer(1, 1, 0);
        use(multiplexer, "t-a");
        Entry<Model> b = multiplexer.entry("t-b"); // a request that may still be refused
        assertEquals(0, b.pins.get());
        assertEquals(0, hosting.created.get("t-b").loads.get());
        assertEquals(List.of("t-a"), loaded(multiplexer), "t-a is not evicted for a request not yet valid");
        assertNull(multiplexer.entry("t-zzz"));
        assertTrue(multiplexer.acquire(b)); // valid: now it loads, in place of t-a
        assertEquals(List.of("t-b"), loaded(multiplexer));
        b.release();
    }

    @Test
    void anEntryFoundBeforeItsModelLeftTheRepositoryCannotBeAcquired() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        Entry<Model> a = multiplexer.entry("t-a");
        repository.remove("t-a");
        multiplexer.refresh();
        assertFalse(multiplexer.acquire(a));
        assertEquals(0, hosting.created.get("t-a").loads.get());
    }

    @Test
    void aModelThatLeftTheRepositoryIsClosedOffTheRefresherThread() throws Exception {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        Model a = hosting.created.get("t-a");
        a.closeGate = gate; // its requests take long to drain
        try {
            repository.remove("t-a");
            Thread refresher = Thread.ofPlatform().start(multiplexer::refresh);
            refresher.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(refresher.isAlive(), "the refresh (and the balancer behind it) waited for the close");
            use(multiplexer, "t-b"); // the deployment goes on serving meanwhile
            assertFalse(a.closed);
        } finally {
            gate.countDown();
        }
        awaitClosed(a);
    }

    /** Waits, up to a bounded deadline, for a close that runs in the background. */
    private static void awaitClosed(Model model) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!model.closed && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(model.closed, model.name + " closed");
    }

    @Test
    void closingWaitsForTheClosesItStartedInTheBackground() {
        Multiplexer<Model> multiplexer = multiplexer(1, 2, 0);
        use(multiplexer, "t-a");
        use(multiplexer, "t-b");
        repository.remove("t-a");
        multiplexer.refresh();
        multiplexer.close();
        assertTrue(hosting.created.get("t-a").closed);
        assertTrue(hosting.created.get("t-b").closed);
    }

    @Test
    void aReleaseThatLeavesItsModelHeldDoesNotRetryTheModelsWaitingForRoom() {
        Multiplexer<Model> multiplexer = multiplexer(1, 1, 0);
        Entry<Model> first = multiplexer.acquire("t-a");
        Entry<Model> second = multiplexer.acquire("t-a");
        Entry<Model> b = multiplexer.acquire("t-b"); // waits for room
        assertEquals(List.of(), multiplexer.replicasOf("t-b"));
        int reads = hosting.ongoingReads.get();
        first.release(); // t-a is still held: no room can come of it
        assertEquals(reads, hosting.ongoingReads.get(), "a placement ran under the lock for nothing");
        second.release(); // t-a is idle now: t-b takes its place
        assertEquals(List.of(0), multiplexer.replicasOf("t-b"));
        b.release();
    }

    @Test
    void scalingKeepsTheAutoscalersCountThroughAConfigChangeAndReportsOnlyWhileAutoscaled() {
        Multiplexer<Model> multiplexer = multiplexer(3, 2, 0);
        DeploymentSpec autoscaled = DeploymentSpec.defaults("tenants", "t-*").withMultiplex(new MultiplexSpec(2, 0))
                .withAutoscaling(AutoscalingSpec.DEFAULTS.withMinReplicas(1).withMaxReplicas(4));
        MultiplexScaling scaling = new MultiplexScaling(multiplexer, autoscaled);
        scaling.scale(3);
        assertEquals(3, scaling.desiredReplicas());
        assertTrue(scaling.status().isEmpty());
        DeploymentStatus.Autoscaling seen = new DeploymentStatus.Autoscaling(1.0, 3, "steady", null);
        scaling.autoscaled(seen, false, false);
        assertSame(seen, scaling.status().orElseThrow());

        DeploymentSpec narrower = autoscaled.withAutoscaling(autoscaled.autoscaling().withMaxReplicas(2));
        assertEquals(2, scaling.replicasAfter(narrower), "the autoscaler's 3, clamped to the new bounds");
        assertSame(narrower, scaling.spec());

        DeploymentSpec fixed = narrower.withAutoscaling(AutoscalingSpec.OFF).withNumReplicas(1);
        assertEquals(1, scaling.replicasAfter(fixed), "no longer autoscaled: its own count");
        assertTrue(scaling.status().isEmpty(), "not autoscaled: no autoscaler view");
        assertEquals(4, scaling.replicasAfter(autoscaled.withNumReplicas(4)), "autoscaled again: its own count first");
    }
}
