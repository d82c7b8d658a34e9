package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class MetricsTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static double sample(String metrics, String name, String api, String outcome) {
        Matcher matcher = line(name, api, outcome).matcher(metrics);
        assertTrue(matcher.find(), name + " for " + api + "/" + outcome + " missing from /q/metrics");
        return Double.parseDouble(matcher.group(1));
    }

    /** {@link #sample}, or 0 when the series is not exported (a histogram appears with its first request). */
    private static double sampleOrZero(String metrics, String name, String api, String outcome) {
        Matcher matcher = line(name, api, outcome).matcher(metrics);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }

    private static Pattern line(String name, String api, String outcome) {
        return Pattern.compile("^" + name + "\\{api=\"" + api + "\",deployment=\"" + MODEL + "\",outcome=\""
                + outcome + "\"} ([0-9.E+-]+)$", Pattern.MULTILINE);
    }

    private static String scrape() {
        return given().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    @Test
    void countsAndTimesRequestsPerDeploymentApiAndOutcome() {
        String before = scrape();
        double ok = sample(before, "serval_requests_total", "oip", "ok");
        double bad = sample(before, "serval_requests_total", "oip", "bad_request");
        double okTimed = sampleOrZero(before, "serval_request_seconds_count", "oip", "ok");
        double openAiOk = sample(before, "serval_requests_total", "openai", "ok");

        given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"metered\"]}]}")
                .post(INFER).then().statusCode(200);
        given().contentType("application/json").body("{\"inputs\":7}").post(INFER).then().statusCode(400);
        given().contentType("application/json").body("{\"model\":\"" + MODEL + "\",\"input\":[\"a\",\"b\"]}")
                .post("/v1/embeddings").then().statusCode(200);

        String after = scrape();
        assertEquals(ok + 1, sample(after, "serval_requests_total", "oip", "ok"));
        assertEquals(bad + 1, sample(after, "serval_requests_total", "oip", "bad_request"));
        assertEquals(okTimed + 1, sample(after, "serval_request_seconds_count", "oip", "ok"));
        assertEquals(openAiOk + 1, sample(after, "serval_requests_total", "openai", "ok"));
        assertTrue(after.contains("serval_request_seconds_bucket{api=\"oip\",deployment=\"" + MODEL + "\",outcome=\"ok\",le=\""),
                "latency histogram buckets are exported");
        assertTrue(after.contains("serval_inputs_total{api=\"openai\",deployment=\"" + MODEL + "\"}"));

    }

    @Test
    void exportsTheEngineMetersWithTheirDocumentedNamesAndLabels() {
        given().contentType("application/json").body("{\"model\":\"" + MODEL + "\",\"input\":[\"a\",\"b\",\"c\"]}")
                .post("/v1/embeddings").then().statusCode(200);
        String metrics = scrape();
        String d = "{deployment=\"" + MODEL + "\"}";
        for (String series : new String[] {
            "serval_queue_wait_seconds_count" + d,
            "serval_predictor_wait_seconds_count" + d,
            "serval_inference_seconds_count" + d,
            "serval_request_inputs_count" + d,
            "serval_queued_requests" + d,
            "serval_pending_tokens" + d + " 0.0",
            "serval_replica_starts_total" + d,
            "serval_model_load_seconds_count" + d,
            "serval_replica_warmup_seconds_count" + d,
            "serval_replicas{deployment=\"" + MODEL + "\",state=\"running\"} 1.0",
            "serval_replica_failures_total{deployment=\"" + MODEL + "\",kind=\"unhealthy\"}",
            "serval_replica_in_flight{deployment=\"" + MODEL + "\",replica=\"0\"}",
            // the packaged runtime, under the Java API of the onnxruntime jar (docs/onnxruntime.md)
            "serval_onnxruntime_info{java_api=\"1.29.0\",version=\"1.32.0\"} 1.0",
        }) {
            assertTrue(metrics.contains(series), series + " missing from /q/metrics");
        }
        Matcher inference = Pattern.compile("^serval_inference_seconds_count" + Pattern.quote(d) + " ([0-9.E+]+)$",
                Pattern.MULTILINE).matcher(metrics);
        assertTrue(inference.find());
        assertTrue(Double.parseDouble(inference.group(1)) >= 3, "every text's inference is timed");
    }

    @Test
    void aLatencyHistogramAppearsWithItsFirstRequestWhileCountersExistFromTheStart() {
        given().contentType("application/json").body("{\"model\":\"noop\",\"predictor_threads\":1}")
                .put("/api/deployments/metered").then().statusCode(201);
        Serving.awaitModelReady("metered");
        String fresh = scrape();
        assertTrue(fresh.contains("serval_requests_total{api=\"oip\",deployment=\"metered\",outcome=\"ok\"} 0.0"),
                "counters from the start, for the APIs its kind answers");
        assertFalse(fresh.contains("serval_requests_total{api=\"openai\",deployment=\"metered\""),
                "none for an API a noop model does not answer");
        assertFalse(fresh.contains("serval_request_seconds_count{api=\"oip\",deployment=\"metered\""),
                "no histogram before a request");
        given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[1]}]}")
                .post("/v2/models/metered/infer").then().statusCode(200);
        String after = scrape();
        assertTrue(after.contains("serval_request_seconds_count{api=\"oip\",deployment=\"metered\",outcome=\"ok\"} 1.0"),
                "the ok histogram once a request was ok");
        assertFalse(after.contains("serval_request_seconds_count{api=\"oip\",deployment=\"metered\",outcome=\"error\""),
                "only the outcomes that happened");
        given().delete("/api/deployments/metered").then().statusCode(200);
    }

    @Test
    void theEngineHistogramsAppearWithTheirFirstObservation() {
        // no health probe within the test (a probe is an inference, and would be the first observation)
        given().contentType("application/json")
                .body("{\"model\":\"noop\",\"predictor_threads\":1,\"health_check_period\":\"1d\"}")
                .put("/api/deployments/unserved").then().statusCode(201);
        Serving.awaitModelReady("unserved");
        String d = "{deployment=\"unserved\"";
        String[] served = {"serval_queue_wait_seconds", "serval_predictor_wait_seconds", "serval_inference_seconds",
            "serval_request_inputs"};
        String[] batched = {"serval_batch_wait_seconds", "serval_batch_size"};
        String fresh = scrape();
        assertTrue(fresh.contains("serval_replica_starts_total" + d + "} 1.0"), "the counters from the start");
        for (String histogram : concat(served, batched)) {
            assertFalse(fresh.contains(histogram + "_bucket" + d), histogram + " before anything was observed");
            assertFalse(fresh.contains(histogram + "_count" + d), histogram + " before anything was observed");
        }
        given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[1]}]}")
                .post("/v2/models/unserved/infer").then().statusCode(200);
        String after = scrape();
        for (String histogram : served) {
            assertTrue(after.contains(histogram + "_count" + d + "} 1.0"), histogram + " with the first request");
            assertTrue(after.contains(histogram + "_bucket" + d + ",le=\""), histogram + "'s buckets");
        }
        for (String histogram : batched) {
            assertFalse(after.contains(histogram + "_count" + d), histogram + ": a noop model never batches");
        }
        given().delete("/api/deployments/unserved").then().statusCode(200);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
