package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each model kind end to end over HTTP with the tiny models of scripts/make_tiny_models.py, against the outputs numpy
 * computed for the same inputs (tiny-models-expected.json), including the datatype and shape errors.
 */
@QuarkusTest
@TestProfile(ModelKindsProfile.class)
class ModelKindsHttpTest {

    private static final JsonNode EXPECTED = expected();

    private static JsonNode expected() {
        try {
            return new ObjectMapper().readTree(Path.of("..", "platform-core", "src", "test", "resources", "reference",
                    "tiny-models-expected.json").toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static Response infer(String model, String body) {
        return given().contentType("application/json").body(body).post("/v2/models/" + model + "/infer");
    }

    private static void expectError(Response response, int status, String message) {
        response.then().statusCode(status).body("error", containsString(message));
    }

    // --- tensor ----------------------------------------------------------------------------------------------------

    @Test
    void aTensorModelMapsInputsByNameAndAnswersEveryOutput() {
        JsonNode mlp = EXPECTED.get("tiny-mlp");
        int rows = mlp.get("input").size();
        String body = "{\"id\":\"t1\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[" + rows
                + ",4],\"data\":" + mlp.get("input") + "}]}";
        Response response = infer("mlp", body);
        response.then().statusCode(200)
                .body("model_name", equalTo("mlp"))
                .body("model_version", equalTo("1"))
                .body("id", equalTo("t1"))
                .body("outputs[0].name", equalTo("output"))
                .body("outputs[0].datatype", equalTo("FP32"))
                .body("outputs[0].shape", equalTo(List.of(rows, 2)));
        List<Float> data = response.jsonPath().getList("outputs[0].data", Float.class);
        int i = 0;
        for (JsonNode row : mlp.get("output")) {
            for (JsonNode value : row) {
                assertEquals(value.floatValue(), data.get(i++), 1e-5, "output element " + (i - 1));
            }
        }
        given().get("/v2/models/mlp").then().statusCode(200)
                .body("platform", equalTo("onnxruntime_onnx"))
                .body("inputs[0].name", equalTo("input"))
                .body("inputs[0].datatype", equalTo("FP32"))
                .body("inputs[0].shape", equalTo(List.of(-1, 4)))
                .body("outputs[0].name", equalTo("output"));
    }

    @Test
    void everyDatatypeRoundTripsAsJson() {
        JsonNode in = EXPECTED.get("tiny-dtypes").get("inputs");
        String body = "{\"inputs\":["
                + "{\"name\":\"a\",\"datatype\":\"FP64\",\"shape\":[3],\"data\":" + in.get("a") + "},"
                + "{\"name\":\"b\",\"datatype\":\"INT32\",\"shape\":[3],\"data\":" + in.get("b") + "},"
                + "{\"name\":\"c\",\"datatype\":\"INT64\",\"shape\":[3],\"data\":" + in.get("c") + "},"
                + "{\"name\":\"d\",\"datatype\":\"BOOL\",\"shape\":[3],\"data\":" + in.get("d") + "}]}";
        Response response = infer("dtypes", body);
        response.then().statusCode(200);
        JsonNode outputs = readTree(response.asString()).get("outputs");
        JsonNode expected = EXPECTED.get("tiny-dtypes").get("outputs");
        for (JsonNode output : outputs) {
            String name = output.get("name").asText();
            assertEquals(expected.get(name), output.get("data"), "output " + name);
        }
        assertEquals("FP64", datatype(outputs, "a_out"));
        assertEquals("INT32", datatype(outputs, "b_out"));
        assertEquals("INT64", datatype(outputs, "c_out"));
        assertEquals("BOOL", datatype(outputs, "d_out"));
    }

    @Test
    void everyDatatypeRoundTripsInTheBinaryExtension() {
        JsonNode in = EXPECTED.get("tiny-dtypes").get("inputs");
        ByteBuffer binary = ByteBuffer.allocate(3 * 8 + 3 * 4 + 3 * 8 + 3).order(ByteOrder.LITTLE_ENDIAN);
        in.get("a").forEach(v -> binary.putDouble(v.doubleValue()));
        in.get("b").forEach(v -> binary.putInt(v.intValue()));
        in.get("c").forEach(v -> binary.putLong(v.longValue()));
        in.get("d").forEach(v -> binary.put((byte) (v.booleanValue() ? 1 : 0)));
        String header = "{\"inputs\":["
                + "{\"name\":\"a\",\"datatype\":\"FP64\",\"shape\":[3],\"parameters\":{\"binary_data_size\":24}},"
                + "{\"name\":\"b\",\"datatype\":\"INT32\",\"shape\":[3],\"parameters\":{\"binary_data_size\":12}},"
                + "{\"name\":\"c\",\"datatype\":\"INT64\",\"shape\":[3],\"parameters\":{\"binary_data_size\":24}},"
                + "{\"name\":\"d\",\"datatype\":\"BOOL\",\"shape\":[3],\"parameters\":{\"binary_data_size\":3}}],"
                + "\"outputs\":[{\"name\":\"c_out\",\"parameters\":{\"binary_data\":true}},{\"name\":\"d_out\"}]}";
        byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(headerBytes);
        body.writeBytes(binary.array());
        Response response = given().contentType("application/octet-stream")
                .header("Inference-Header-Content-Length", headerBytes.length).body(body.toByteArray())
                .post("/v2/models/dtypes/infer");
        response.then().statusCode(200);
        int jsonLength = Integer.parseInt(response.header("Inference-Header-Content-Length"));
        byte[] bytes = response.asByteArray();
        JsonNode json = readTree(new String(bytes, 0, jsonLength, StandardCharsets.UTF_8));
        assertEquals(2, json.get("outputs").size(), "only the outputs asked for, in the order asked");
        assertEquals("c_out", json.get("outputs").get(0).get("name").asText());
        assertEquals(24, json.get("outputs").get(0).get("parameters").get("binary_data_size").asInt());
        ByteBuffer out = ByteBuffer.wrap(bytes, jsonLength, 24).order(ByteOrder.LITTLE_ENDIAN);
        long[] c = {out.getLong(), out.getLong(), out.getLong()};
        JsonNode expected = EXPECTED.get("tiny-dtypes").get("outputs");
        assertArrayEquals(new long[] {expected.get("c_out").get(0).asLong(), expected.get("c_out").get(1).asLong(),
                expected.get("c_out").get(2).asLong()}, c);
        assertEquals(expected.get("d_out"), json.get("outputs").get(1).get("data"), "d_out stays JSON");
    }

    @Test
    void aTensorModelRefusesWrongNamesDatatypesAndShapes() {
        String good = "{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,4]}";
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"INT64\",\"shape\":[1,4],"
                + "\"data\":[1,2,3,4]}]}"), 400, "'input'");
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"INT64\",\"shape\":[1,4],"
                + "\"data\":[1,2,3,4]}]}"), 400, "FP32");
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,3],"
                + "\"data\":[1,2,3]}]}"), 400, "'input'");
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[4],"
                + "\"data\":[1,2,3,4]}]}"), 400, "'input'");
        expectError(infer("mlp", "{\"inputs\":[" + good + ",{\"name\":\"extra\",\"datatype\":\"FP32\",\"shape\":[1],"
                + "\"data\":[1]}]}"), 400, "'extra'");
        expectError(infer("mlp", "{\"inputs\":[" + good + "],\"outputs\":[{\"name\":\"nope\"}]}"), 400,
                "unknown output 'nope'; this model's outputs are 'output'");
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                + "\"data\":[1,2,\"x\",4]}]}"), 400, "input 'input' element 2 is a string; FP32 data must be numbers");
        expectError(infer("mlp", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP16\",\"shape\":[1,4],"
                + "\"data\":[1,2,3,4]}]}"), 400, "datatype FP16");
        expectError(infer("dtypes", "{\"inputs\":[{\"name\":\"b\",\"datatype\":\"INT32\",\"shape\":[1],"
                + "\"data\":[3000000000]}]}"), 400, "INT32 data must be integers in the 32-bit range");
        expectError(infer("mlp", "{\"inputs\":[]}"), 400, "'inputs' is empty");
        given().contentType("application/json").body("{\"model\":\"mlp\",\"input\":\"hi\"}").post("/v1/embeddings")
                .then().statusCode(400).body("error.message", containsString("model 'mlp' is a tensor model"));
    }

    // --- noop ------------------------------------------------------------------------------------------------------

    @Test
    void theNoopModelAnswersWithItsInput() {
        String body = "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1.5,2,3,4]},"
                + "{\"name\":\"s\",\"datatype\":\"BYTES\",\"shape\":[2],\"data\":[\"hé\",\"\"]}]}";
        infer("echo", body).then().statusCode(200)
                .body("outputs[0].name", equalTo("x"))
                .body("outputs[0].shape", equalTo(List.of(1, 4)))
                .body("outputs[0].data", equalTo(List.of(1.5f, 2f, 3f, 4f)))
                .body("outputs[1].name", equalTo("s"))
                .body("outputs[1].datatype", equalTo("BYTES"))
                .body("outputs[1].data", equalTo(List.of("hé", "")));
    }

    // --- text-classification ---------------------------------------------------------------------------------------

    @Test
    void aClassifierAnswersScoresAndLabels() {
        JsonNode cases = EXPECTED.get("tiny-classifier").get("cases");
        StringBuilder texts = new StringBuilder();
        for (JsonNode c : cases) {
            texts.append(texts.isEmpty() ? "" : ",").append(c.get("text"));
        }
        Response response = infer("classifier", "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":["
                + cases.size() + "],\"data\":[" + texts + "]}]}");
        response.then().statusCode(200)
                .body("outputs[0].name", equalTo("scores"))
                .body("outputs[0].datatype", equalTo("FP32"))
                .body("outputs[0].shape", equalTo(List.of(cases.size(), 3)))
                .body("outputs[1].name", equalTo("label"))
                .body("outputs[1].datatype", equalTo("BYTES"));
        List<Float> scores = response.jsonPath().getList("outputs[0].data", Float.class);
        List<String> labels = response.jsonPath().getList("outputs[1].data", String.class);
        for (int i = 0; i < cases.size(); i++) {
            JsonNode c = cases.get(i);
            assertEquals(c.get("label").asText(), labels.get(i), "label of '" + c.get("text").asText() + "'");
            for (int k = 0; k < 3; k++) {
                assertEquals(c.get("scores").get(k).floatValue(), scores.get(i * 3 + k), 1e-5,
                        "score " + k + " of '" + c.get("text").asText() + "'");
            }
        }
        expectError(infer("classifier", "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"FP32\",\"shape\":[1],"
                + "\"data\":[1]}]}"), 400, "input 'text' has datatype FP32; this model takes BYTES");
        expectError(infer("classifier", "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2,2],"
                + "\"data\":[\"a\",\"b\",\"c\",\"d\"]}]}"), 400, "this model takes [n] (or [n, 1])");
    }

    private static String datatype(JsonNode outputs, String name) {
        for (JsonNode output : outputs) {
            if (output.get("name").asText().equals(name)) {
                return output.get("datatype").asText();
            }
        }
        throw new AssertionError("no output " + name);
    }

    private static JsonNode readTree(String json) {
        try {
            return new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
