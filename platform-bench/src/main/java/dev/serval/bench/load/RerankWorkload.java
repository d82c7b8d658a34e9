package dev.serval.bench.load;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.bench.model.EmbeddingBenchmark;
import dev.serval.model.TextPair;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The rerank benchmark's requests, generated from a seed so that the load generator and the raw loop's child JVM
 * ({@link RerankRawLoop}) build the same ones: each a short chat-like query ({@value #MIN_QUERY_WORDS} to
 * {@value #MAX_QUERY_WORDS} words) with {@value #MIN_DOCUMENTS} to {@value #MAX_DOCUMENTS} documents of
 * {@value #MIN_DOCUMENT_WORDS} to {@value #MAX_DOCUMENT_WORDS} words (counts and lengths uniform), all made of the
 * chat texts' vocabulary ({@link EmbeddingBenchmark#chatTexts}). A document of 100 words is about 130 tokens, so no
 * pair reaches the reranker's {@code max_length} and nothing is truncated. Stateless.
 */
final class RerankWorkload {

    /** The seed of the benchmark's queries. */
    static final long SEED = 20261140L;
    /** How many queries a run cycles through. */
    static final int QUERIES = 200;
    static final int MIN_DOCUMENTS = 20;
    static final int MAX_DOCUMENTS = 100;
    static final int MIN_DOCUMENT_WORDS = 3;
    static final int MAX_DOCUMENT_WORDS = 100;
    static final int MIN_QUERY_WORDS = 4;
    static final int MAX_QUERY_WORDS = 12;
    /** The Jina/Cohere rerank route the benchmark posts to. */
    static final String PATH = "/v2/rerank";

    private static final ObjectMapper JSON = new ObjectMapper();

    private RerankWorkload() {
    }

    /** One rerank request: a query and the documents to score against it, in order. */
    record Query(String query, List<String> documents) {

        Query {
            documents = List.copyOf(documents);
            if (query.isBlank() || documents.isEmpty()) {
                throw new IllegalArgumentException("a query needs text and at least one document");
            }
        }
    }

    /** {@code count} queries from {@code seed}: the same list in every process. */
    static List<Query> queries(int count, long seed) {
        if (count < 1) {
            throw new IllegalArgumentException("at least one query, not " + count);
        }
        Random random = new Random(seed);
        // A stream of words in the chat texts' order, long enough for every document; words are drawn from it at
        // random offsets, so documents share words with each other and with the queries, as retrieved passages do.
        String[] words = String.join(" ", EmbeddingBenchmark.chatTexts(4 * count, seed)).split(" ");
        List<Query> queries = new ArrayList<>(count);
        for (int q = 0; q < count; q++) {
            String query = sentence(words, random, between(random, MIN_QUERY_WORDS, MAX_QUERY_WORDS), '?');
            int documents = between(random, MIN_DOCUMENTS, MAX_DOCUMENTS);
            List<String> texts = new ArrayList<>(documents);
            for (int d = 0; d < documents; d++) {
                texts.add(sentence(words, random, between(random, MIN_DOCUMENT_WORDS, MAX_DOCUMENT_WORDS), '.'));
            }
            queries.add(new Query(query, texts));
        }
        return List.copyOf(queries);
    }

    /** Every (query, document) pair of {@code queries}, query by query, documents in order. */
    static List<TextPair> pairs(List<Query> queries) {
        List<TextPair> pairs = new ArrayList<>();
        for (Query query : queries) {
            for (String document : query.documents()) {
                pairs.add(new TextPair(query.query(), document));
            }
        }
        return List.copyOf(pairs);
    }

    /** Documents per query, on average. */
    static double meanDocuments(List<Query> queries) {
        return queries.stream().mapToInt(q -> q.documents().size()).average().orElse(Double.NaN);
    }

    /**
     * One query per request, cycling through {@code queries}, to {@value #PATH}: {@code {"model": model, "query":
     * ..., "documents": [...], "return_documents": false}}, which Serval answers with a score for every document.
     */
    static Workload workload(String name, String model, List<Query> queries) {
        return new Workload(name, PATH, queries.stream().map(q -> Buffer.buffer(body(model, q))).toList());
    }

    static String body(String model, Query query) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model);
        body.put("query", query.query());
        body.put("documents", query.documents());
        body.put("return_documents", false);
        try {
            return JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int between(Random random, int min, int max) {
        return min + random.nextInt(max - min + 1);
    }

    /** {@code count} consecutive words from a random offset of {@code words}, capitalised, ending with {@code end}. */
    private static String sentence(String[] words, Random random, int count, char end) {
        int from = random.nextInt(words.length - count);
        String text = String.join(" ", Arrays.copyOfRange(words, from, from + count)).replaceAll("[.?!,]", "");
        return Character.toUpperCase(text.charAt(0)) + text.substring(1) + end;
    }
}
