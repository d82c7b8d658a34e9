package dev.serval.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.Embedding;
import dev.serval.model.TokenVectors;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.ServedModel;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-deployment store: its byte bound, exact keys, and its flights. */
class ResultCacheTest {

    private static final ServedModel V1 = ServedModel.of(DeploymentSpec.defaults("d", "m"));
    private static final ServedModel V2 = ServedModel.of(DeploymentSpec.defaults("d", "m").withVersion("2"));

    @Test
    void theByteBoundHoldsUnder100000UniqueTextsOfRandomLength() {
        long max = 1L << 20;
        AtomicLong evicted = new AtomicLong();
        ResultCache<Embedding> cache = new ResultCache<>(max, evicted::incrementAndGet);
        Random random = new Random(41);
        for (int i = 0; i < 100_000; i++) {
            int length = random.nextInt(2_000);
            StringBuilder text = new StringBuilder(length + 8).append(i).append(':');
            for (int c = 0; c < length; c++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
            cache.put(V1, text.toString(), new Embedding(new float[384], length));
            assertTrue(cache.bytes() <= max, "after " + (i + 1) + " texts: " + cache.bytes() + " bytes");
        }
        assertTrue(evicted.get() > 0, "evictions counted");
        assertTrue(cache.bytes() > max / 2, "the bound is used, not starved: " + cache.bytes());
    }

    @Test
    void keysCompareTheTextInFullAndTheServedModel() {
        ResultCache<String> cache = new ResultCache<>(1L << 20, () -> { });
        // "Aa" and "BB" have one String hash: the hash picks the bucket, equality decides.
        assertEquals("Aa".hashCode(), "BB".hashCode());
        cache.put(V1, "Aa", "first");

        assertNull(cache.get(new ResultKey(V1, "BB")));
        assertNull(cache.get(new ResultKey(V2, "Aa")), "another version's result is not this one's");
        assertEquals("first", cache.get(new ResultKey(V1, "Aa")));
    }

    @Test
    void anEmbeddingIsStoredWithoutItsTokenVectorsSoThatNoEntryHoldsAnInferencesOutput() {
        ResultCache<Embedding> cache = new ResultCache<>(1L << 20, () -> { });
        float[] output = new float[64 * 8]; // a whole inference's [rows, width, dim] output
        float[] vector = new float[8];
        Embedding answered = new Embedding(vector, 3, 2f, new TokenVectors(output, 16, 3, 8));

        cache.put(V1, "text", answered);

        Embedding stored = cache.get(new ResultKey(V1, "text"));
        assertNull(stored.tokenVectors(), "a cached answer is pooled only");
        assertSame(vector, stored.vector());
        assertEquals(2f, stored.norm());
        assertEquals(ResultCache.ENTRY_OVERHEAD + 2 * 4 + 4 * 8, cache.bytes(), "weighed as pooled");
    }

    @Test
    void aFlightIsJoinedUntilItLandsAndItsResultIsStoredUnderItsProducer() {
        ResultCache<String> cache = new ResultCache<>(1L << 20, () -> { });
        Flight<String> leader = new Flight<>(new ResultKey(V1, "gg"));
        assertNull(cache.join(leader), "the first one leads");
        Flight<String> waiter = new Flight<>(new ResultKey(V1, "gg"));
        assertSame(leader, cache.join(waiter), "the second one waits for it");

        cache.land(leader, V2, "made by v2");

        assertEquals("made by v2", leader.join());
        assertSame(V2, leader.producer());
        assertNull(cache.get(new ResultKey(V1, "gg")), "never stored under the model it was looked up with");
        assertEquals("made by v2", cache.get(new ResultKey(V2, "gg")));
        assertEquals(0, cache.flights());
    }

    @Test
    void aResultThatLandedBetweenTheLookupAndTheJoinIsNotRunAgain() {
        ResultCache<String> cache = new ResultCache<>(1L << 20, () -> { });
        cache.put(V1, "gg", "landed");

        Flight<String> late = new Flight<>(new ResultKey(V1, "gg"));
        Flight<String> joined = cache.join(late);

        assertSame(late, joined, "answered at once");
        assertEquals("landed", joined.join());
        assertEquals(0, cache.flights());
    }

    @Test
    void anAbandonedFlightFailsItsWaitersAndLeavesTheMap() {
        ResultCache<String> cache = new ResultCache<>(1L << 20, () -> { });
        Flight<String> leader = new Flight<>(new ResultKey(V1, "gg"));
        cache.join(leader);

        cache.abandon(leader, new IllegalStateException("cancelled"));

        assertTrue(leader.isCompletedExceptionally());
        assertNull(cache.join(new Flight<>(new ResultKey(V1, "gg"))), "the next one leads");
    }

    @Test
    void theBudgetSharesTheCeilingByMaxMinFairness() {
        CacheBudget budget = new CacheBudget(100);
        Map<String, Long> granted = new HashMap<>();
        CacheBudget.Member small = member("small", 10, granted);
        CacheBudget.Member big = member("big", 1_000, granted);
        CacheBudget.Member other = member("other", 1_000, granted);

        budget.join(small);
        budget.join(big);
        assertEquals(Map.of("small", 10L, "big", 90L), granted);
        budget.join(other);
        assertEquals(Map.of("small", 10L, "big", 45L, "other", 45L), granted);
        budget.leave(big);
        assertEquals(90L, granted.get("other"), "the others grow into what a leaver held");
    }

    private static CacheBudget.Member member(String name, long wanted, Map<String, Long> granted) {
        return new CacheBudget.Member() {
            @Override
            public long wanted() {
                return wanted;
            }

            @Override
            public void grant(long bytes) {
                granted.put(name, bytes);
            }
        };
    }
}
