package dev.serval.api.clients;

import static dev.serval.api.Serving.MODEL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.openai.OpenAiEmbeddingModel;
import dev.serval.api.Serving;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's client models, unmodified, against Serval: its OpenAI embedding model given Serval's {@code /v1} as
 * its base URL answers the reference embeddings of the MiniLM.
 */
@QuarkusTest
class LangChain4jClientsTest {

    private static String base() {
        return "http://127.0.0.1:" + RestAssured.port;
    }

    @Test
    void openAiEmbeddingModelEmbedsAsTheReference() {
        Serving.awaitReady();
        JsonNode sentences = Serving.reference().get("sentences");
        List<TextSegment> segments = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            segments.add(TextSegment.from(sentences.get(i).get("text").asText()));
        }
        OpenAiEmbeddingModel model = OpenAiEmbeddingModel.builder().baseUrl(base() + "/v1").apiKey("unused")
                .modelName(MODEL).build();

        List<Embedding> embeddings = model.embedAll(segments).content();

        assertEquals(segments.size(), embeddings.size());
        for (int i = 0; i < segments.size(); i++) {
            float[] vector = embeddings.get(i).vector();
            double cosine = Serving.cosine(Serving.floats(sentences.get(i).get("embedding"), 0, 384), vector);
            assertTrue(cosine >= 0.999, "text " + i + ": cosine " + cosine);
        }
    }
}
