package dev.serval.api.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.jina.JinaScoringModel;
import dev.serval.api.ModelKindsProfile;
import dev.serval.api.Serving;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rerank and classification clients, unmodified, against the tiny cross-encoder ({@code reranker}) and the tiny
 * classifier ({@code classifier}): Cohere's Python SDK ({@code ClientV2.rerank} with a {@code base_url}), LangChain4j's
 * Jina scoring model (its base URL Serval's {@code /v1/}) and huggingface_hub's {@code text_classification} on the
 * classifier's TEI URL; each answers the Python reference's scores.
 */
@QuarkusTest
@TestProfile(ModelKindsProfile.class)
class RerankClientsTest {

    private static final JsonNode CASE = reference().get("cases").get(0);

    private static JsonNode reference() {
        try {
            return new ObjectMapper().readTree(Path.of("..", "platform-core", "src", "test", "resources",
                    "reference", "tiny-cross-encoder-reference.json").toFile());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> documents() {
        List<String> documents = new ArrayList<>();
        CASE.get("documents").forEach(document -> documents.add(document.asText()));
        return documents;
    }

    @BeforeEach
    void ready() {
        Serving.awaitModelReady("reranker");
    }

    @Test
    void coheresSdkRerankAnswersTheReferenceScores() throws Exception {
        List<String> args = new ArrayList<>(List.of("http://127.0.0.1:" + RestAssured.port, "reranker",
                CASE.get("query").asText()));
        args.addAll(documents());

        JsonNode results = new ObjectMapper().readTree(PythonClients.run("rerank_clients.py", args)).get("cohere");

        assertEquals(documents().size(), results.size());
        double previous = Double.POSITIVE_INFINITY;
        for (JsonNode result : results) {
            int index = result.get("index").asInt();
            double score = result.get("relevance_score").asDouble();
            assertEquals(CASE.get("scores").get(index).asDouble(), score, 1e-5, "document " + index);
            assertEquals(true, score <= previous, "best first");
            previous = score;
        }
    }

    @Test
    void huggingFaceHubsTextClassificationAnswersEveryLabelBestFirst() throws Exception {
        JsonNode answered = new ObjectMapper().readTree(PythonClients.run("classify_clients.py",
                List.of("http://127.0.0.1:" + RestAssured.port, "classifier", "i love it")));

        assertEquals(3, answered.size());
        assertEquals("positive", answered.get(0).get("label").asText());
        assertEquals(0.8819518089294434, answered.get(0).get("score").asDouble(), 1e-5);
    }

    @Test
    void langChain4jsJinaScoringModelScoresAsTheReference() {
        JinaScoringModel model = JinaScoringModel.builder().baseUrl("http://127.0.0.1:" + RestAssured.port + "/v1/")
                .apiKey("unused").modelName("reranker").build();
        List<TextSegment> segments = documents().stream().map(TextSegment::from).toList();

        List<Double> scores = model.scoreAll(segments, CASE.get("query").asText()).content();

        assertEquals(segments.size(), scores.size());
        for (int i = 0; i < scores.size(); i++) {
            assertEquals(CASE.get("scores").get(i).asDouble(), scores.get(i), 1e-5, "document " + i);
        }
    }
}
