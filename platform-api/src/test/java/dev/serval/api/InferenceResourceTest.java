package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class InferenceResourceTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URI base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static String textInput(String shape, String data) {
        return "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":" + shape + ",\"data\":" + data + "}]}";
    }

    private static Response infer(String body) {
        return given().contentType("application/json").body(body).post(INFER);
    }

    private static void expectError(Response response, int status, String message) {
        response.then().statusCode(status).contentType("application/json").body("error", containsString(message));
    }

    // --- metadata and health ----------------------------------------------------------------------------------

    @Test
    void describesTheServer() {
        given().get("/v2").then().statusCode(200)
                .body("name", equalTo("serval"))
                .body("extensions", hasItem("binary_tensor_data"))
                .body("extensions", hasItem("model_repository")); // POST /v2/repository/index and load/unload
    }

    @Test
    void reportsLiveAndReady() {
        given().get("/v2/health/live").then().statusCode(200).body("live", equalTo(true));
        given().get("/v2/health/ready").then().statusCode(200).body("ready", equalTo(true));
        given().get("/v2/models/" + MODEL + "/ready").then().statusCode(200).body("ready", equalTo(true));
        given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks[0].data.'" + MODEL + "'", equalTo("READY"));
    }

    @Test
    void describesTheModel() {
        given().get("/v2/models/" + MODEL).then().statusCode(200)
                .body("name", equalTo(MODEL))
                .body("versions", contains("1"))
                .body("platform", equalTo("onnxruntime_onnx"))
                .body("inputs[0].name", equalTo("text"))
                .body("inputs[0].datatype", equalTo("BYTES"))
                .body("inputs[0].shape", contains(-1))
                .body("outputs[0].name", equalTo("embedding"))
                .body("outputs[0].datatype", equalTo("FP32"))
                .body("outputs[0].shape", contains(-1, 384));
    }

    @Test
    void answers404ForAnUnknownModelOnEveryModelEndpoint() {
        // The 404 names what is deployed (at most ten deployments), so that a typo is seen at once.
        String deployed = "model 'no-such-model' is not deployed; deployed: " + Serving.MODEL;
        expectError(given().get("/v2/models/no-such-model"), 404, deployed);
        expectError(given().get("/v2/models/no-such-model/ready"), 404, deployed);
        expectError(given().contentType("application/json").body(textInput("[1]", "[\"a\"]"))
                .post("/v2/models/no-such-model/infer"), 404, deployed);
    }

    @Test
    void publishesAnOpenApiDocument() {
        given().get("/q/openapi?format=json").then().statusCode(200)
                .body("paths", org.hamcrest.Matchers.hasKey("/v2/models/{name}/infer"))
                .body("paths", org.hamcrest.Matchers.hasKey("/v1/embeddings"));
    }

    // --- inference ---------------------------------------------------------------------------------------------

    @Test
    void embedsTextsMatchingTheIndependentReference() throws Exception {
        JsonNode sentences = Serving.reference().get("sentences");
        String data = JSON.writeValueAsString(
                java.util.stream.StreamSupport.stream(sentences.spliterator(), false).map(s -> s.get("text").asText()).toList());
        Response response = infer("{\"id\":\"req-7\"," + textInput("[" + sentences.size() + "]", data).substring(1));

        response.then().statusCode(200)
                .body("model_name", equalTo(MODEL))
                .body("id", equalTo("req-7"))
                .body("outputs[0].name", equalTo("embedding"))
                .body("outputs[0].datatype", equalTo("FP32"))
                .body("outputs[0].shape", contains(sentences.size(), 384));
        JsonNode flat = JSON.readTree(response.asByteArray()).get("outputs").get(0).get("data");
        assertEquals(sentences.size() * 384, flat.size());
        for (int i = 0; i < sentences.size(); i++) {
            double cosine = Serving.cosine(Serving.floats(sentences.get(i).get("embedding"), 0, 384), Serving.floats(flat, i * 384, 384));
            assertTrue(cosine >= 0.999, "cosine " + cosine + " for sentence " + i);
        }
    }

    @Test
    void acceptsNestedDataWithAColumnShape() throws Exception {
        Response nested = infer(textInput("[2,1]", "[[\"first\"],[\"second\"]]"));
        Response flat = infer(textInput("[2]", "[\"first\",\"second\"]"));
        nested.then().statusCode(200).body("outputs[0].shape", contains(2, 384));
        assertEquals(JSON.readTree(flat.asByteArray()).get("outputs").get(0).get("data"),
                JSON.readTree(nested.asByteArray()).get("outputs").get(0).get("data"));
    }

    @Test
    void speaksTheBinaryTensorDataExtensionBothWays() throws Exception {
        byte[] binaryTexts = lengthPrefixed("héllo wörld", "second 🎉");
        String header = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2],"
                + "\"parameters\":{\"binary_data_size\":" + binaryTexts.length + "}}],"
                + "\"outputs\":[{\"name\":\"embedding\",\"parameters\":{\"binary_data\":true}}]}";
        byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(headerBytes);
        body.writeBytes(binaryTexts);

        Response response = given().contentType("application/octet-stream")
                .header("Inference-Header-Content-Length", headerBytes.length)
                .body(body.toByteArray()).post(INFER);

        response.then().statusCode(200).contentType("application/octet-stream");
        int jsonLength = Integer.parseInt(response.header("Inference-Header-Content-Length"));
        byte[] bytes = response.asByteArray();
        JsonNode json = JSON.readTree(new String(bytes, 0, jsonLength, StandardCharsets.UTF_8));
        JsonNode output = json.get("outputs").get(0);
        assertEquals(2 * 384 * 4, output.get("parameters").get("binary_data_size").asInt());
        assertTrue(output.get("data") == null, "binary outputs carry no JSON data");
        assertEquals(jsonLength + 2 * 384 * 4, bytes.length);
        ByteBuffer floats = ByteBuffer.wrap(bytes, jsonLength, 2 * 384 * 4).order(ByteOrder.LITTLE_ENDIAN);
        float[] binaryFirst = new float[384];
        for (int i = 0; i < 384; i++) {
            binaryFirst[i] = floats.getFloat();
        }

        JsonNode jsonAnswer = JSON.readTree(infer(textInput("[1]", "[\"héllo wörld\"]")).asByteArray());
        float[] jsonFirst = Serving.floats(jsonAnswer.get("outputs").get(0).get("data"), 0, 384);
        for (int i = 0; i < 384; i++) {
            assertEquals(jsonFirst[i], binaryFirst[i], 1e-6, "element " + i);
        }
    }

    @Test
    void returnsBinaryOutputForJsonInputWhenAskedForWithARequestParameter() {
        Response response = infer("{\"parameters\":{\"binary_data_output\":true},"
                + textInput("[1]", "[\"hi\"]").substring(1));
        response.then().statusCode(200).contentType("application/octet-stream");
        int jsonLength = Integer.parseInt(response.header("Inference-Header-Content-Length"));
        assertEquals(jsonLength + 384 * 4, response.asByteArray().length);
    }

    // --- bad input -------------------------------------------------------------------------------------------

    @Test
    void refusesMalformedJson() {
        expectError(infer("{\"inputs\": ["), 400, "malformed JSON at line 1");
        expectError(infer("[1,2]"), 400, "must be a JSON object, not an array");
        expectError(infer(""), 400, "the request body is empty");
        expectError(infer("{\"inputs\":[]} trailing"), 400, "malformed JSON");
    }

    @Test
    void refusesMissingAndUnknownFields() {
        expectError(infer("{}"), 400, "'inputs' must be an array");
        expectError(infer("{\"inputs\":[],\"extra\":1}"), 400, "unknown field 'extra'");
        expectError(infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"a\"],\"colour\":1}]}"),
                400, "unknown field 'inputs[0].colour'");
        expectError(infer("{\"inputs\":[{\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"a\"]}]}"), 400,
                "'inputs[0].name' is required");
        expectError(infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"data\":[\"a\"]}]}"), 400,
                "needs 'shape'");
        expectError(infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1]}]}"), 400, "has no 'data'");
        expectError(infer("{\"inputs\":[{\"name\":\"image\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"a\"]}]}"),
                400, "unknown input 'image'");
        expectError(infer(textInput("[1]", "[\"a\"]").replace("}]}", "}],\"outputs\":[{\"name\":\"logits\"}]}")), 400,
                "unknown output 'logits'");
    }

    @Test
    void refusesAShapeThatDoesNotMatchTheData() {
        expectError(infer(textInput("[3]", "[\"a\",\"b\"]")), 400, "shape of 3 elements but 2 data elements");
        expectError(infer(textInput("[2,2]", "[\"a\",\"b\",\"c\",\"d\"]")), 400, "this model takes [n] (or [n, 1])");
        expectError(infer(textInput("[-1]", "[\"a\"]")), 400, "non-negative integers");
    }

    @Test
    void refusesADatatypeTheModelDoesNotTake() {
        expectError(infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[1.5]}]}"), 400,
                "input 'text' has datatype FP32; this model takes BYTES");
        expectError(infer(textInput("[2]", "[\"a\",7]")), 400, "element 1 is a number; BYTES data must be strings");
    }

    @Test
    void refusesAnEmptyInputListAndEmptyStrings() {
        expectError(infer(textInput("[0]", "[]")), 400, "input 'text' is empty");
        expectError(infer(textInput("[2]", "[\"fine\",\"\"]")), 400, "text 1 is an empty string");
    }

    @Test
    void refusesMoreInputsThanARequestMayCarry() {
        String data = "[" + String.join(",", java.util.Collections.nCopies(257, "\"x\"")) + "]";
        expectError(infer(textInput("[257]", data)), 400, "the request holds 257 inputs; model '" + MODEL
                + "' takes at most 256 per request");
    }

    @Test
    void refusesInconsistentBinaryData() {
        byte[] texts = lengthPrefixed("abc");
        String header = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],"
                + "\"parameters\":{\"binary_data_size\":" + (texts.length + 5) + "}}]}";
        byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(headerBytes);
        body.writeBytes(texts);
        expectError(given().contentType("application/octet-stream").header("Inference-Header-Content-Length", headerBytes.length)
                .body(body.toByteArray()).post(INFER), 400, "binary_data_size is " + (texts.length + 5));
        expectError(given().contentType("application/octet-stream").header("Inference-Header-Content-Length", 99999)
                .body(body.toByteArray()).post(INFER), 400, "Inference-Header-Content-Length 99999 is outside the body");
    }

    @Test
    void refusesAnUnsupportedContentType() {
        expectError(given().contentType("text/plain").body(textInput("[1]", "[\"a\"]")).post(INFER), 415,
                "unsupported Content-Type 'text/plain");
    }

    @Test
    void refusesABodyOverTheLimitWith413() {
        byte[] big = new byte[8 * 1024 * 1024 + 1];
        expectError(given().contentType("application/json").body(big).post(INFER), 413,
                "request body of 8388609 bytes exceeds the limit of 8388608 bytes");
    }

    @Test
    void refusesAChunkedBodyOverTheLimitOnceReadAndKeepsServing() throws Exception {
        // No Content-Length: the body arrives chunked, so the limit can only be applied while reading it.
        byte[] big = new byte[8 * 1024 * 1024 + 100];
        HttpResponse<String> response = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(
                HttpRequest.newBuilder(base.resolve(INFER.substring(1))).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(413, response.statusCode(), response.body());
        assertTrue(response.body().contains("request body of 8388708 bytes exceeds the limit of 8388608 bytes"),
                response.body());
        infer(textInput("[1]", "[\"still fine\"]")).then().statusCode(200);
    }

    @Test
    void answersABodySentInManyChunksAsTheSameBodySentWhole() throws Exception {
        byte[] body = textInput("[2]", "[\"one text\", \"and a second one\"]").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream chunked = new ByteArrayOutputStream();
        for (int at = 0; at < body.length; at += 7) {
            int length = Math.min(7, body.length - at);
            chunked.writeBytes((Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            chunked.write(body, at, length);
            chunked.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        chunked.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        String head = "POST " + INFER + " HTTP/1.1\r\nContent-Type: application/json";
        RawHttp.Answer whole = RawHttp.send(base.toURL(), head + "\r\nContent-Length: " + body.length, body);
        RawHttp.Answer inChunks = RawHttp.send(base.toURL(), head + "\r\nTransfer-Encoding: chunked",
                chunked.toByteArray());
        assertEquals(200, whole.status(), whole.text());
        assertEquals(200, inChunks.status(), inChunks.text());
        String answer = whole.text().substring(whole.text().indexOf("\r\n\r\n"));
        assertTrue(answer.contains("\"shape\":[2,384]"), answer);
        assertEquals(answer, inChunks.text().substring(inChunks.text().indexOf("\r\n\r\n")));
    }

    @Test
    void answers405ToOtherMethodsOnTheInferenceEndpoints() {
        expectError(given().get(INFER), 405, "method GET is not allowed on " + INFER + "; use POST");
        given().get(INFER).then().header("Allow", "POST");
        given().put("/v1/embeddings").then().statusCode(405).header("Allow", "POST")
                .body("error.message", containsString("method PUT is not allowed on /v1/embeddings"))
                .body("error.type", equalTo("invalid_request_error"));
    }

    @Test
    void badInputNeverDisturbsTheNextGoodRequest() {
        infer("{\"inputs\": [").then().statusCode(400);
        infer(textInput("[1]", "[\"still fine\"]")).then().statusCode(200).body("outputs[0].shape", contains(1, 384))
                .body("id", nullValue());
    }

    static byte[] lengthPrefixed(String... texts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String text : texts) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length).array());
            out.writeBytes(bytes);
        }
        return out.toByteArray();
    }

}
