package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The multiplexing benchmark's traffic: a seeded Zipf sequence of models, the same for every server. */
class MultiplexBenchmarkTest {

    @Test
    void theSequenceIsSeededAndFollowsTheZipfLaw() {
        int[] sequence = MultiplexBenchmark.zipfSequence(8, 1.1, 20_000, 42);
        assertArrayEquals(sequence, MultiplexBenchmark.zipfSequence(8, 1.1, 20_000, 42), "same seed, same traffic");
        long[] counts = new long[8];
        for (int model : sequence) {
            assertTrue(model >= 0 && model < 8, "model " + model);
            counts[model]++;
        }
        // P(k) = (1/k^1.1) / sum: 39.9 % for the first, 4.0 % for the eighth.
        assertEquals(0.399, counts[0] / 20_000.0, 0.02);
        assertEquals(0.040, counts[7] / 20_000.0, 0.01);
        for (int k = 1; k < 8; k++) {
            assertTrue(counts[k] < counts[k - 1] * 1.15, "shares fall with the rank: " + java.util.Arrays.toString(counts));
        }
    }

    @Test
    void modelNamesSortAsTheirRank() {
        assertEquals("t-00", MultiplexBenchmark.model(0));
        assertEquals("t-63", MultiplexBenchmark.model(63));
    }
}
