package dev.serval.api;

import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class EmbeddingsResourceTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static Response embed(String body) {
        return given().contentType("application/json").body(body).post("/v1/embeddings");
    }

    private static void expectError(Response response, int status, String type, String param, String message) {
        response.then().statusCode(status).contentType("application/json")
                .body("error.message", org.hamcrest.Matchers.containsString(message))
                .body("error.type", equalTo(type))
                .body("error.param", param == null ? nullValue() : equalTo(param));
    }

    @Test
    void embedsOneStringWithRealTokenCounts() {
        JsonNode reference = Serving.reference().get("sentences").get(0);
        Response response = embed("{\"model\":\"" + MODEL + "\",\"input\":\"" + reference.get("text").asText() + "\"}");

        response.then().statusCode(200)
                .body("object", equalTo("list"))
                .body("model", equalTo(MODEL))
                .body("data", hasSize(1))
                .body("data[0].object", equalTo("embedding"))
                .body("data[0].index", equalTo(0))
                .body("data[0].embedding", hasSize(384))
                .body("usage.prompt_tokens", equalTo(reference.get("tokens").asInt()))
                .body("usage.total_tokens", equalTo(reference.get("tokens").asInt()));
        float[] vector = Serving.floats(response.jsonPath().getList("data[0].embedding", Float.class));
        double cosine = Serving.cosine(Serving.floats(reference.get("embedding"), 0, 384), vector);
        assertTrue(cosine >= 0.999, "cosine " + cosine);
    }

    @Test
    void embedsAnArrayInOrderAndSumsTokens() {
        JsonNode sentences = Serving.reference().get("sentences");
        Response response = embed("{\"model\":\"" + MODEL + "\",\"input\":[\"" + sentences.get(1).get("text").asText()
                + "\",\"" + sentences.get(3).get("text").asText() + "\"]}");

        response.then().statusCode(200).body("data", hasSize(2)).body("data[1].index", equalTo(1))
                .body("usage.prompt_tokens", equalTo(sentences.get(1).get("tokens").asInt() + sentences.get(3).get("tokens").asInt()));
        float[] second = Serving.floats(response.jsonPath().getList("data[1].embedding", Float.class));
        assertTrue(Serving.cosine(Serving.floats(sentences.get(3).get("embedding"), 0, 384), second) >= 0.999);
    }

    @Test
    void encodesBase64AsLittleEndianFloat32() {
        String body = "{\"model\":\"" + MODEL + "\",\"input\":\"base64 please\"";
        List<Float> asFloats = embed(body + "}").jsonPath().getList("data[0].embedding", Float.class);
        String encoded = embed(body + ",\"encoding_format\":\"base64\"}").then().statusCode(200)
                .extract().path("data[0].embedding");

        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(encoded)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(384 * 4, bytes.remaining());
        for (int i = 0; i < 384; i++) {
            assertEquals(asFloats.get(i), bytes.getFloat(), 1e-7, "element " + i);
        }
    }

    @Test
    void packsSignBitsAsSentenceTransformersQuantizeEmbeddingsDoes() {
        String body = "{\"model\":\"" + MODEL + "\",\"input\":\"bits please\"";
        List<Float> asFloats = embed(body + "}").jsonPath().getList("data[0].embedding", Float.class);
        List<Integer> ubinary = embed(body + ",\"encoding_format\":\"ubinary\"}").then().statusCode(200)
                .extract().jsonPath().getList("data[0].embedding", Integer.class);
        List<Integer> binary = embed(body + ",\"encoding_format\":\"binary\"}").then().statusCode(200)
                .extract().jsonPath().getList("data[0].embedding", Integer.class);

        assertEquals(384 / 8, ubinary.size());
        for (int b = 0; b < ubinary.size(); b++) {
            int expected = 0;
            for (int j = 0; j < 8; j++) {
                expected = expected << 1 | (asFloats.get(b * 8 + j) > 0 ? 1 : 0); // numpy.packbits(v > 0)
            }
            assertEquals(expected, ubinary.get(b), "byte " + b);
            assertEquals(expected - 128, binary.get(b), "byte " + b);
        }
    }

    /**
     * int8 and uint8 by the bundled model's ranges equal the integers scripts/make_int8_ranges.py computed in Python
     * (sentence-transformers' formula on the Python float vector, same ranges file). Where the Python value lies within
     * a thousandth of a step of an integer, the two runtimes' last float bits may fall either side: one off is allowed
     * there, nowhere else.
     */
    @Test
    void writesInt8AndUint8AsSentenceTransformersDoesWithTheShippedRanges() throws Exception {
        JsonNode reference = new ObjectMapper().readTree(Path.of("..",
                "platform-core", "src", "test", "resources", "reference", "minilm-int8-reference.json").toFile());
        JsonNode ranges = new ObjectMapper().readTree(Path.of("..",
                "platform-core", "src", "main", "resources", "serval", "models", "all-minilm-l6-v2",
                "quantization-ranges.json").toFile());
        for (JsonNode sentence : reference.get("sentences")) {
            String body = "{\"model\":\"" + MODEL + "\",\"input\":" + sentence.get("text") + ",\"encoding_format\":";
            List<Integer> uint8 = embed(body + "\"uint8\"}").then().statusCode(200).extract().jsonPath()
                    .getList("data[0].embedding", Integer.class);
            List<Integer> int8 = embed(body + "\"int8\"}").then().statusCode(200).extract().jsonPath()
                    .getList("data[0].embedding", Integer.class);
            assertEquals(384, uint8.size());
            assertEquals(384, int8.size());
            for (int j = 0; j < 384; j++) {
                float min = (float) ranges.get(0).get(j).asDouble();
                float step = ((float) ranges.get(1).get(j).asDouble() - min) / 255f;
                float scaled = ((float) sentence.get("embedding").get(j).asDouble() - min) / step;
                boolean nearBoundary = Math.abs(scaled - Math.rint(scaled)) < 0.001;
                int tolerance = nearBoundary ? 1 : 0;
                String where = sentence.get("text").asText() + " [" + j + "]";
                assertTrue(Math.abs(sentence.get("uint8").get(j).asInt() - uint8.get(j)) <= tolerance,
                        where + " uint8 " + uint8.get(j) + " vs " + sentence.get("uint8").get(j));
                assertTrue(Math.abs(sentence.get("int8").get(j).asInt() - int8.get(j)) <= tolerance,
                        where + " int8 " + int8.get(j) + " vs " + sentence.get("int8").get(j));
            }
        }
    }

    @Test
    void acceptsTheModelsOwnDimensionAndTheUserField() {
        embed("{\"model\":\"" + MODEL + "\",\"input\":\"x\",\"dimensions\":384,\"user\":\"u-1\"}").then().statusCode(200);
    }

    @Test
    void refusesAnUnknownModelWithOpenAisErrorObject() {
        Response response = embed("{\"model\":\"text-embedding-3-small\",\"input\":\"x\"}");
        expectError(response, 404, "invalid_request_error", "model", "model 'text-embedding-3-small' is not deployed");
        response.then().body("error.code", equalTo("model_not_found"));
    }

    @Test
    void refusesMissingOrMalformedFields() {
        expectError(embed("{\"input\":\"x\"}"), 400, "invalid_request_error", "model", "'model' is required");
        expectError(embed("{\"model\":\"" + MODEL + "\"}"), 400, "invalid_request_error", "input", "'input' is required");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":\"x\",\"temperature\":1}"), 400,
                "invalid_request_error", "temperature", "unknown field 'temperature'");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":42}"), 400, "invalid_request_error", "input",
                "must be a string or an array of strings, not a number");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":[[101,2023]]}"), 400, "invalid_request_error", "input",
                "token arrays are not supported");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":\"x\",\"encoding_format\":\"hex\"}"), 400,
                "invalid_request_error", "encoding_format", "must be 'float', 'base64', 'int8', 'uint8', 'binary' or 'ubinary'");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":\"x\",\"dimensions\":256}"), 400,
                "invalid_request_error", "dimensions", "returns 384 dimensions");
        expectError(embed("{\"model\": "), 400, "invalid_request_error", null, "malformed JSON");
    }

    @Test
    void refusesEmptyInputs() {
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":\"\"}"), 400, "invalid_request_error", "input",
                "'input' is an empty string");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":[]}"), 400, "invalid_request_error", "input",
                "'input' is an empty array");
        expectError(embed("{\"model\":\"" + MODEL + "\",\"input\":[\"a\",\"\"]}"), 400, "invalid_request_error", "input",
                "'input[1]' is an empty string");
    }

    @Test
    void refusesWrongContentTypeAndOversizedBodies() {
        expectError(given().contentType("text/plain").body("{}").post("/v1/embeddings"), 415,
                "invalid_request_error", null, "unsupported Content-Type 'text/plain");
        Response tooLarge = given().contentType("application/json").body(new byte[9 * 1024 * 1024]).post("/v1/embeddings");
        expectError(tooLarge, 413, "invalid_request_error", null, "exceeds the limit of 8388608 bytes");
        tooLarge.then().body("error.code", equalTo("request_too_large"));
    }
}
