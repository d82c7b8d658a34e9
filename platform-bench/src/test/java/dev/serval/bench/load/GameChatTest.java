package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The result cache benchmark's texts: distinct short chat lines from a seed, and a seeded Zipf draw over them. */
class GameChatTest {

    @Test
    void theLinesAreDistinctShortAndTheSameForTheSameSeed() {
        List<String> lines = GameChat.lines(CacheBenchmark.POOL, GameChat.SEED);

        assertEquals(CacheBenchmark.POOL, lines.size());
        assertEquals(CacheBenchmark.POOL, new HashSet<>(lines).size(), "every line distinct");
        assertEquals(lines, GameChat.lines(CacheBenchmark.POOL, GameChat.SEED), "same seed, same lines");
        assertNotEquals(lines.subList(0, 100), GameChat.lines(100, GameChat.SEED + 1), "another seed, other lines");
        for (String line : lines) {
            int words = line.split(" ").length;
            assertTrue(!line.isBlank() && words <= 11, "a short chat line: '" + line + "'"); // 10 words + " lol"
        }
        double meanWords = lines.stream().mapToInt(line -> line.split(" ").length).average().orElseThrow();
        assertTrue(meanWords > 3 && meanWords < 6, "mostly short: " + meanWords + " words on average");
    }

    @Test
    void aShorterListIsAPrefixOfALongerOneSoTheTextsPastThePoolAreNotInIt() {
        List<String> pool = GameChat.lines(1_000, GameChat.SEED);
        List<String> longer = GameChat.lines(3_000, GameChat.SEED);

        assertEquals(pool, longer.subList(0, 1_000));
        assertTrue(longer.subList(1_000, 3_000).stream().noneMatch(new HashSet<>(pool)::contains));
    }

    @Test
    void theRequestsFollowAZipfLawOfExponentOneAndAreSeeded() {
        List<Integer> pool = java.util.stream.IntStream.range(0, CacheBenchmark.POOL).boxed().toList();
        List<Integer> requests = GameChat.zipfRequests(pool, CacheBenchmark.EXPONENT, 200_000, 7);

        assertEquals(requests, GameChat.zipfRequests(pool, CacheBenchmark.EXPONENT, 200_000, 7), "same seed");
        assertNotEquals(requests, GameChat.zipfRequests(pool, CacheBenchmark.EXPONENT, 200_000, 8), "another seed");
        Map<Integer, Integer> counts = new HashMap<>();
        requests.forEach(rank -> counts.merge(rank, 1, Integer::sum));
        // P(k) = 1 / (k H), H = the 100,000th harmonic number, 12.09: rank 0 8.27 %, rank 1 4.14 %, rank 9 0.83 %.
        double harmonic = 0;
        for (int k = 1; k <= CacheBenchmark.POOL; k++) {
            harmonic += 1.0 / k;
        }
        assertEquals(1 / harmonic, counts.get(0) / 200_000.0, 0.003);
        assertEquals(2.0, (double) counts.get(0) / counts.get(1), 0.15, "exponent 1: the first twice the second");
        assertEquals(10.0, (double) counts.get(0) / counts.get(9), 1.2, "and ten times the tenth");
        // The 1,000 most popular take H(1000) / H(100000) = 7.49 / 12.09 = 62 % of the requests.
        long top = requests.stream().filter(rank -> rank < 1_000).count();
        assertEquals(7.485 / harmonic, top / 200_000.0, 0.01);
    }
}
