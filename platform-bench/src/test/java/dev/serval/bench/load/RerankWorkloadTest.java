package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.model.TextPair;
import java.util.List;
import org.junit.jupiter.api.Test;

class RerankWorkloadTest {

    private static final List<RerankWorkload.Query> QUERIES = RerankWorkload.queries(RerankWorkload.QUERIES,
            RerankWorkload.SEED);

    private static int words(String text) {
        return text.split(" ").length;
    }

    @Test
    void theSameSeedGivesTheSameQueriesInEveryProcessAndAnotherSeedOthers() {
        assertEquals(QUERIES, RerankWorkload.queries(RerankWorkload.QUERIES, RerankWorkload.SEED));
        assertNotEquals(QUERIES, RerankWorkload.queries(RerankWorkload.QUERIES, RerankWorkload.SEED + 1));
    }

    @Test
    void everyQueryHasTwentyToAHundredDocumentsAndTheCountsAreMixed() {
        for (RerankWorkload.Query query : QUERIES) {
            int documents = query.documents().size();
            assertTrue(documents >= 20 && documents <= 100, "documents: " + documents);
        }
        assertTrue(QUERIES.stream().anyMatch(q -> q.documents().size() < 30));
        assertTrue(QUERIES.stream().anyMatch(q -> q.documents().size() > 90));
        double mean = RerankWorkload.meanDocuments(QUERIES);
        assertTrue(mean > 50 && mean < 70, "mean documents: " + mean);
    }

    @Test
    void queriesAreShortAndDocumentsRangeFromAFewWordsToAHundred() {
        for (RerankWorkload.Query query : QUERIES) {
            assertTrue(words(query.query()) >= 4 && words(query.query()) <= 12, query.query());
            for (String document : query.documents()) {
                assertTrue(words(document) >= 3 && words(document) <= 100, document);
            }
        }
        List<Integer> lengths = QUERIES.stream().flatMap(q -> q.documents().stream()).map(d -> words(d)).toList();
        assertTrue(lengths.stream().anyMatch(n -> n <= 5));
        assertTrue(lengths.stream().anyMatch(n -> n >= 95));
    }

    @Test
    void thePairsAreEveryDocumentWithItsQueryInRequestOrder() {
        List<TextPair> pairs = RerankWorkload.pairs(QUERIES);

        assertEquals(QUERIES.stream().mapToInt(q -> q.documents().size()).sum(), pairs.size());
        RerankWorkload.Query first = QUERIES.getFirst();
        assertEquals(new TextPair(first.query(), first.documents().getFirst()), pairs.getFirst());
        assertEquals(new TextPair(first.query(), first.documents().getLast()), pairs.get(first.documents().size() - 1));
    }

    @Test
    void eachRequestIsAJinaCohereRerankBodyOfOneQuery() throws Exception {
        Workload workload = RerankWorkload.workload("rerank", "reranker", QUERIES);

        assertEquals("/v2/rerank", workload.path());
        assertEquals(QUERIES.size(), workload.bodies().size());
        JsonNode body = new ObjectMapper().readTree(workload.body(1).toString());
        assertEquals("reranker", body.get("model").asText());
        assertEquals(QUERIES.get(1).query(), body.get("query").asText());
        assertEquals(QUERIES.get(1).documents().size(), body.get("documents").size());
        assertEquals(QUERIES.get(1).documents().getLast(), body.get("documents").get(
                QUERIES.get(1).documents().size() - 1).asText());
        assertEquals(false, body.get("return_documents").asBoolean());
    }

    @Test
    void theRerankInputCountIsReadFromTheRerankSeriesOfTheDeploymentOnly() {
        String metrics = """
                # HELP serval_inputs_total Inputs (texts) served by successful requests
                # TYPE serval_inputs_total counter
                serval_inputs_total{api="rerank",deployment="reranker"} 1234.0
                serval_inputs_total{api="tei",deployment="reranker"} 7.0
                serval_inputs_total{api="rerank",deployment="other"} 99.0
                serval_requests_total{api="rerank",deployment="reranker",outcome="ok"} 20.0
                """;

        assertEquals(1234.0, RerankBenchmark.rerankInputs(metrics), 1e-9);
        assertEquals(0.0, RerankBenchmark.rerankInputs(""), 1e-9);
    }
}
