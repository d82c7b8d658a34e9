package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.InferTensorContents;
import dev.serval.api.grpc.v2.ModelInferRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code max_pending_tokens} at the edge: deployment {@code costly} reads at most 64 tokens of a text and holds at
 * most 100 estimated tokens of requests admitted and not answered. While one request of a long text (64) waits in the
 * model, another is refused at once as a full queue is (OIP 503, OpenAI 429 and TEI's 429, with Retry-After;
 * gRPC RESOURCE_EXHAUSTED; counted {@code rejected}), a short one is still served, and a PATCH of the setting takes effect in place.
 */
@QuarkusTest
@TestProfile(GatedModelsProfile.class)
class PendingTokensHttpTest {

    private static final String LONG = "x".repeat(200);

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void closeGate() {
        Serving.awaitModelReady("costly");
        GatedModelSource.GATE.drainPermits();
    }

    @AfterEach
    void openGate() {
        GatedModelSource.GATE.release(1000);
    }

    private static String oip(String text) {
        return "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"" + text + "\"]}]}";
    }

    private CompletableFuture<HttpResponse<String>> held(HttpClient client, String text) {
        return client.sendAsync(HttpRequest.newBuilder(URI.create(base.toString()).resolve("/v2/models/costly/infer"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(oip(text))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double sample(String series) {
        return Serving.metric(series).orElse(0);
    }

    /** How a gRPC ModelInfer of {@code text} to {@code costly} ends, which must be a refusal. */
    private Status grpcRefusal(String text) throws InterruptedException {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext().build();
        try {
            ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("costly")
                    .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("text").setDatatype("BYTES")
                            .addShape(1).setContents(InferTensorContents.newBuilder()
                                    .addBytesContents(ByteString.copyFromUtf8(text))))
                    .build();
            return assertThrows(StatusRuntimeException.class, () -> GRPCInferenceServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(request)).getStatus();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aRequestPastMaxPendingTokensIsRefusedLikeAFullQueueAndAPatchRaisesTheLimitInPlace() throws Exception {
        String rejected = "serval_requests_total{api=\"oip\",deployment=\"costly\",outcome=\"rejected\"}";
        double rejectedBefore = sample(rejected);
        given().get("/api/deployments/costly").then().statusCode(200)
                .body("config.max_pending_tokens", equalTo(100));
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        CompletableFuture<HttpResponse<String>> first = held(client, "wait " + LONG);
        GatedModelSource.awaitWaiting(1);
        assertEquals(64.0, sample("serval_pending_tokens{deployment=\"costly\"}"));

        Response refused = given().contentType("application/json").body(oip("also " + LONG))
                .post("/v2/models/costly/infer");
        refused.then().statusCode(503).body("error", containsString(
                "model 'costly' is overloaded: its admitted requests hold an estimated 64 tokens and this one is "
                        + "estimated at 64 (max_pending_tokens 100)"));
        assertTrue(Long.parseLong(refused.header("Retry-After")) >= 0, refused.header("Retry-After"));
        assertTrue(Long.parseLong(refused.header("retry-after-ms")) >= 1, refused.header("retry-after-ms"));
        given().contentType("application/json").body("{\"model\":\"costly\",\"input\":\"" + LONG + "\"}")
                .post("/v1/embeddings").then().statusCode(429).header("Retry-After", notNullValue())
                .body("error.code", equalTo("rate_limit_exceeded"))
                .body("error.message", containsString("max_pending_tokens 100"));
        given().contentType("application/json").body("{\"inputs\":\"" + LONG + "\"}").post("/tei/costly/embed").then()
                .statusCode(429).header("Retry-After", notNullValue()).body("error_type", equalTo("overloaded"))
                .body("error", containsString("max_pending_tokens 100"));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, grpcRefusal(LONG).getCode());
        assertTrue(grpcRefusal(LONG).getDescription().contains("max_pending_tokens 100"));
        given().contentType("application/json").body(oip("short")).post("/v2/models/costly/infer").then()
                .statusCode(200);
        assertEquals(rejectedBefore + 1, sample(rejected), "a refusal for load, not a server failure");

        given().contentType("application/json").body("{\"max_pending_tokens\":1000}")
                .patch("/api/deployments/costly").then().statusCode(200)
                .body("config.max_pending_tokens", equalTo(1000));
        CompletableFuture<HttpResponse<String>> second = held(client, "wait again " + LONG);
        GatedModelSource.awaitWaiting(2);
        assertEquals(128.0, sample("serval_pending_tokens{deployment=\"costly\"}"));

        GatedModelSource.GATE.release(2);
        assertEquals(200, first.get(30, TimeUnit.SECONDS).statusCode());
        assertEquals(200, second.get(30, TimeUnit.SECONDS).statusCode());
        assertEquals(0.0, sample("serval_pending_tokens{deployment=\"costly\"}"));
        given().contentType("application/json").body("{\"max_pending_tokens\":0}")
                .patch("/api/deployments/costly").then().statusCode(400)
                .body("error", containsString("max_pending_tokens"));
        given().contentType("application/json").body("{\"max_pending_tokens\":100}")
                .patch("/api/deployments/costly").then().statusCode(200);
    }
}
