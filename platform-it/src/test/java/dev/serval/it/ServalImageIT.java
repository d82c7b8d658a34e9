package dev.serval.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;

/**
 * The real image, started once for this class the way the Helm chart runs it (with the chart's deployments file
 * plus a no-op deployment {@code echo}), checked over HTTP on 127.0.0.1: health probes, the deployments file, both
 * embedding APIs against the independent reference vectors, the Prometheus endpoint, and the user and filesystem
 * it runs with.
 */
class ServalImageIT {

    private static final String MODEL = "all-minilm-l6-v2";
    /** The management API's token, from the environment as the chart passes it (SERVAL_API_TOKEN from a Secret). */
    private static final String TOKEN = "it-token";

    private static GenericContainer<?> serval;
    private static Http http;

    @BeforeAll
    static void start() {
        serval = ServalImage.container("serval",
                ServalImage.chartDeploymentsFile(List.of(Map.of("name", "echo", "model", "noop"))))
                .withEnv("SERVAL_API_TOKEN", TOKEN);
        serval.start();
        http = new Http(serval.getHost(), serval.getMappedPort(ServalImage.HTTP_PORT));
    }

    @AfterAll
    static void stop() {
        if (serval != null) {
            serval.stop();
        }
    }

    @Test
    void reportsStartedLiveAndReadyOnTheProbeEndpoints() {
        for (String probe : new String[] {"/q/health/started", "/q/health/live", "/q/health/ready"}) {
            HttpResponse<String> response = http.get(probe);
            assertEquals(200, response.statusCode(), probe + ": " + response.body());
            assertEquals("UP", Http.parse(response).get("status").asText(), probe + ": " + response.body());
        }
        assertEquals(200, http.get("/v2/health/ready").statusCode());
    }

    @Test
    void servesTheDashboardFromTheImage() {
        HttpResponse<String> page = http.get("/ui/");
        assertEquals(200, page.statusCode());
        assertTrue(page.body().contains("dashboard.js"), page.body());
        assertEquals(200, http.get("/ui/dashboard.js").statusCode());
        JsonNode feed = Http.parse(http.get("/ui/api/dashboard"));
        Map<String, String> models = new TreeMap<>();
        feed.get("deployments").forEach(d -> models.put(d.get("name").asText(), d.get("model").asText()));
        assertEquals(Map.of(MODEL, MODEL, "echo", "noop"), models, feed.toString());
    }

    @Test
    void servesTheDeploymentsOfTheMountedConfigFile() {
        JsonNode status = Http.parse(http.get("/api/status", TOKEN));
        Map<String, String> models = new TreeMap<>();
        status.get("deployments").forEach(d -> models.put(d.get("name").asText(), d.get("model").asText()));
        assertEquals(Map.of(MODEL, MODEL, "echo", "noop"), models, status.toString());
    }

    @Test
    void guardsTheManagementApiWithTheTokenFromTheEnvironment() {
        assertEquals(401, http.get("/api/status").statusCode());
        assertEquals(401, http.get("/api/status", "wrong").statusCode());
        assertEquals(200, http.get("/api/status", TOKEN).statusCode());
    }

    @Test
    void withoutATokenInTheEnvironmentTheContainerGeneratesOneOnlyItsUserCanRead() throws Exception {
        GenericContainer<?> open = ServalImage.container("serval-no-token", ServalImage.chartDeploymentsFile(List.of()));
        open.start();
        try {
            Http plain = new Http(open.getHost(), open.getMappedPort(ServalImage.HTTP_PORT));
            assertEquals(401, plain.get("/api/status").statusCode());
            String token = ServalImage.generatedToken(open);
            assertEquals(200, plain.get("/api/status", token).statusCode());
            var mode = open.execInContainer("stat", "-c", "%a %u", ServalImage.GENERATED_TOKEN_FILE);
            assertEquals("600 " + ServalImage.UID, mode.getStdout().trim(), mode.getStderr());
            assertFalse(open.getLogs().contains(token), "the token must never be logged");
        } finally {
            open.stop();
        }
    }

    @Test
    void embedsTextsOverTheOpenAiApiLikeTheReferenceModel() {
        JsonNode sentences = Reference.sentences();
        String first = sentences.get(0).get("text").asText();
        String second = sentences.get(1).get("text").asText();
        HttpResponse<String> response = http.postJson("/v1/embeddings",
                "{\"model\":\"" + MODEL + "\",\"input\":[" + Reference.quote(first) + "," + Reference.quote(second) + "]}");

        assertEquals(200, response.statusCode(), response.body());
        JsonNode data = Http.parse(response).get("data");
        assertEquals(2, data.size());
        for (int i = 0; i < 2; i++) {
            float[] vector = Reference.floats(data.get(i).get("embedding"));
            assertEquals(384, vector.length);
            double cosine = Reference.cosine(Reference.embedding(sentences.get(i)), vector);
            assertTrue(cosine >= 0.999, "text " + i + ": cosine to the reference " + cosine);
        }
    }

    @Test
    void embedsATextOverTheOpenInferenceProtocol() {
        JsonNode sentence = Reference.sentences().get(2);
        HttpResponse<String> response = http.postJson("/v2/models/" + MODEL + "/infer",
                "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":["
                        + Reference.quote(sentence.get("text").asText()) + "]}]}");

        assertEquals(200, response.statusCode(), response.body());
        JsonNode output = Http.parse(response).get("outputs").get(0);
        assertEquals("FP32", output.get("datatype").asText());
        assertEquals("[1,384]", output.get("shape").toString());
        double cosine = Reference.cosine(Reference.embedding(sentence), Reference.floats(output.get("data")));
        assertTrue(cosine >= 0.999, "cosine to the reference " + cosine);
    }

    @Test
    void servesTheOipGrpcServiceOnTheHttpPort() throws Exception {
        JsonNode sentence = Reference.sentences().get(2);
        byte[] text = sentence.get("text").asText().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.ByteBuffer raw = java.nio.ByteBuffer.allocate(4 + text.length)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(text.length).put(text);
        io.grpc.ManagedChannel channel = io.grpc.ManagedChannelBuilder.forAddress(serval.getHost(),
                serval.getMappedPort(ServalImage.HTTP_PORT)).usePlaintext().build();
        try {
            var stub = dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(stub.serverReady(dev.serval.api.grpc.v2.ServerReadyRequest.getDefaultInstance()).getReady());

            var answer = stub.modelInfer(dev.serval.api.grpc.v2.ModelInferRequest.newBuilder().setModelName(MODEL)
                    .addInputs(dev.serval.api.grpc.v2.ModelInferRequest.InferInputTensor.newBuilder().setName("text")
                            .setDatatype("BYTES").addShape(1))
                    .addRawInputContents(com.google.protobuf.ByteString.copyFrom(raw.array())).build());

            assertEquals(List.of(1L, 384L), answer.getOutputs(0).getShapeList());
            java.nio.FloatBuffer floats = answer.getRawOutputContents(0).asReadOnlyByteBuffer()
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
            float[] embedding = new float[floats.remaining()];
            floats.get(embedding);
            double cosine = Reference.cosine(Reference.embedding(sentence), embedding);
            assertTrue(cosine >= 0.999, "cosine to the reference " + cosine);
        } finally {
            channel.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void countsServedRequestsOnThePrometheusEndpoint() {
        double before = openAiOk(http.get("/q/metrics").body());
        assertEquals(200, http.postJson("/v1/embeddings", "{\"model\":\"" + MODEL + "\",\"input\":[\"hi\"]}").statusCode());

        HttpResponse<String> metrics = http.get("/q/metrics");
        assertEquals(200, metrics.statusCode());
        String type = metrics.headers().firstValue("Content-Type").orElse("");
        assertTrue(type.startsWith("text/plain") || type.startsWith("application/openmetrics-text"), type);
        assertEquals(before + 1, openAiOk(metrics.body()), 0.0);
        assertTrue(metrics.body().contains("serval_replicas{deployment=\"" + MODEL + "\",state=\"running\"} 1.0"),
                "no running replica in the metrics");
        assertTrue(metrics.body().contains("jvm_memory_used_bytes{"), "no JVM metrics");
    }

    @Test
    void runsAsTheNonRootUserWithAReadOnlyRootFilesystem() throws IOException, InterruptedException {
        ExecResult id = serval.execInContainer("id", "-u");
        assertEquals(ServalImage.UID, id.getStdout().strip());
        ExecResult writeApp = serval.execInContainer("touch", "/opt/serval/probe");
        assertNotEquals(0, writeApp.getExitCode(), "the root filesystem is writable");
        assertTrue(writeApp.getStderr().contains("Read-only file system"), writeApp.getStderr());
        assertEquals(0, serval.execInContainer("touch", "/tmp/probe").getExitCode(), "/tmp is not writable");
        ExecResult model = serval.execInContainer("find", "/var/lib/serval/models", "-name", "*.onnx");
        assertTrue(model.getStdout().contains("/var/lib/serval/models/" + MODEL + "/"),
                "the default model is not in the writable repository: " + model.getStdout() + model.getStderr());
    }

    /** serval_requests_total{api="openai",deployment=MODEL,outcome="ok"}, 0 before the first such request. */
    private static double openAiOk(String metrics) {
        Matcher m = Pattern.compile("^serval_requests_total\\{api=\"openai\",deployment=\"" + MODEL
                + "\",outcome=\"ok\"} (\\S+)$", Pattern.MULTILINE).matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0.0;
    }
}
