package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ServalMetricsTest {

    @Test
    void cacheRequestsAreReadByResultForOneDeployment() {
        String scrape = """
                # HELP serval_cache_requests_total Texts looked up in the result cache
                # TYPE serval_cache_requests_total counter
                serval_cache_requests_total{deployment="all-minilm-l6-v2",result="hit"} 1200.0
                serval_cache_requests_total{deployment="all-minilm-l6-v2",result="miss"} 80.0
                serval_cache_requests_total{deployment="all-minilm-l6-v2",result="coalesced"} 3.0
                serval_cache_requests_total{deployment="other",result="hit"} 5.0
                serval_cache_bytes{deployment="all-minilm-l6-v2"} 65536.0
                """;

        Map<String, Double> counts = ServalMetrics.cacheRequests(scrape, "all-minilm-l6-v2");

        assertEquals(Map.of("hit", 1200.0, "miss", 80.0, "coalesced", 3.0), counts);
        assertTrue(ServalMetrics.cacheRequests(scrape, "noop").isEmpty(), "a deployment without a cache has none");
    }
}
