package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server-wide byte budget: bodies being read count against {@code serval.http.max-buffered-bytes}; past it new
 * requests are refused on their headers with 503 + Retry-After (OpenAI 429) as a refusal for load, never a failure, and the bytes come back when their requests end,
 * including when the client goes away in the middle of its body.
 */
@QuarkusTest
@TestProfile(ByteBudgetTest.Profile.class)
class ByteBudgetTest {

    private static final Pattern BUFFERED = Pattern.compile("(?m)^serval_http_buffered_bytes (\\S+)$");

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            return Map.of("serval.http.max-buffered-bytes", "64K");
        }
    }

    @TestHTTPResource("/")
    URL base;

    private static final String GOOD =
            "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"fine\"]}]}";

    @Test
    void anEmbedAllAnswerIsTakenFromTheBudgetBeforeItIsComputedAndGivenBack() throws Exception {
        Serving.awaitReady();
        // One text of 13 characters: at most 47 tokens of 384 floats, about 361 KB of answer: past the 64 KiB budget.
        var refused = given().contentType("application/json").body("{\"inputs\":\"Hello, world!\"}")
                .post("/embed_all");
        refused.then().statusCode(429).header("Retry-After", "1")
                .body("error", containsString("serval.http.max-buffered-bytes"))
                .body("error_type", equalTo("overloaded")); // TEI's refusal for load
        awaitBuffered(bytes -> bytes == 0);
    }

    @Test
    void bodiesHeldPastTheBudgetMakeNewRequestsWaitOutsideAndTheBytesComeBackWhenClientsLeave() throws Exception {
        Serving.awaitReady();
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) { // two clients that send 40 KB of a declared 50 KB body, then stall
                Socket socket = new Socket(base.getHost(), base.getPort());
                slow.add(socket);
                OutputStream out = socket.getOutputStream();
                out.write(("POST " + INFER + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 50000\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.write(new byte[40_000]);
                out.flush();
            }
            awaitBuffered(bytes -> bytes >= 65_536);
            double rejectedBefore = requests("oip", "rejected");

            var refused = given().contentType("application/json").body(GOOD).post(INFER);
            refused.then().statusCode(503).body("error", containsString("serval.http.max-buffered-bytes"));
            assertTrue(Long.parseLong(refused.header("retry-after-ms")) > 0, refused.headers().toString());
            assertEquals("1", refused.header("Retry-After"));
            given().contentType("application/json").body("{\"model\":\"" + Serving.MODEL + "\",\"input\":\"x\"}")
                    .post("/v1/embeddings").then().statusCode(429).header("Retry-After", "1");
            // A refusal for load, not a server failure: the failure monitor must not replace replicas over it.
            assertEquals(rejectedBefore + 1, requests("oip", "rejected"));
            assertEquals(0, requests("oip", "error"));
            assertEquals(0, requests("openai", "error"));
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
        awaitBuffered(bytes -> bytes == 0);
        given().contentType("application/json").body(GOOD).post(INFER).then().statusCode(200);
        given().get("/q/metrics").then().body(containsString("serval_http_buffer_refusals_total"));
    }

    /** {@code serval_requests_total} of the test model for {@code api} and {@code outcome}. */
    private static double requests(String api, String outcome) {
        Matcher m = Pattern.compile("(?m)^serval_requests_total\\{api=\"" + api + "\",deployment=\"" + Serving.MODEL
                + "\",outcome=\"" + outcome + "\"} (\\S+)$").matcher(given().get("/q/metrics").asString());
        assertTrue(m.find(), "no serval_requests_total for " + api + " " + outcome);
        return Double.parseDouble(m.group(1));
    }

    private static void awaitBuffered(LongPredicate condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long last = -1;
        while (System.nanoTime() < deadline) {
            Matcher m = BUFFERED.matcher(given().get("/q/metrics").asString());
            if (m.find()) {
                last = (long) Double.parseDouble(m.group(1));
                if (condition.test(last)) {
                    return;
                }
            }
            Thread.sleep(20); // the server reads the sockets on its own event loops: poll its gauge
        }
        throw new AssertionError("serval_http_buffered_bytes stayed at " + last);
    }
}
