package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.jboss.logmanager.ExtLogRecord;
import org.jboss.logmanager.Logger;
import org.junit.jupiter.api.Test;

/**
 * A deployment whose model starts failing every request: the failure monitor first replaces its replicas, then,
 * as it keeps failing, turns liveness DOWN. Error logs carry the request id. Its own profile, because it leaves
 * the node not live.
 */
@QuarkusTest
@TestProfile(FailureMonitorTest.FlakyModel.class)
class FailureMonitorTest {

    public static class FlakyModel implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "serval.deployments.flaky.model", "gated:",
                    "serval.deployments.flaky.predictor-threads", "1",
                    "serval.deployments.flaky.health-check-failure-threshold", "1000",
                    // Long enough that four failing requests fall in one window on a loaded machine (the monitor
                    // evaluates once a second; with 2 s, four requests taking over a second could straddle it).
                    "serval.failure-monitor.window", "10s",
                    "serval.failure-monitor.min-requests", "4",
                    "serval.failure-monitor.max-replacements", "1");
        }
    }

    private static final String FLAKY = "/v2/models/flaky/infer";

    private static void failRequests(String prefix) {
        for (int i = 0; i < 4; i++) {
            given().header("x-request-id", prefix + i).contentType("application/json")
                    .body("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"boom\"]}]}")
                    .post(FLAKY).then().statusCode(500).body("error", containsString("the model failed on 'boom'"));
        }
    }

    @Test
    void replacesFailingReplicasThenTurnsLivenessDown() {
        Serving.awaitModelReady("flaky");
        List<ExtLogRecord> errors = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                ExtLogRecord extended = (ExtLogRecord) record;
                extended.copyMdc(); // the MDC is read lazily; snapshot it on the logging thread
                errors.add(extended);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger edge = Logger.getLogger("dev.serval.api.http.ErrorResponses");
        edge.addHandler(capture);
        try {
            failRequests("first-");
        } finally {
            edge.removeHandler(capture);
        }
        assertTrue(errors.stream().anyMatch(r -> "first-0".equals(r.getMdc("requestId"))
                && r.getFormattedMessage().contains("the model failed on 'boom'")), "the error log names the request id");

        await(() -> given().get("/api/status").jsonPath()
                .getList("deployments.find { it.name == 'flaky' }.recent_errors.message", String.class).stream()
                .anyMatch(message -> message.contains("failure monitor")), "the monitor replaced the replicas");
        Serving.awaitModelReady("flaky");
        given().get("/q/health/live").then().statusCode(200);
        given().get("/q/metrics").then().body(containsString(
                "serval_replica_failures_total{deployment=\"flaky\",kind=\"failure_monitor\"} 1.0"));

        failRequests("second-");

        await(() -> given().get("/q/health/live").statusCode() == 503, "liveness went DOWN");
        given().get("/q/health/live").then().body("checks.find { it.name == 'failure-monitor' }.data.reason",
                containsString("of the last 4 requests to 'flaky' failed after 1 replica replacements"));
        given().get("/v2/health/live").then().statusCode(503).body("live", equalTo(false));
        given().get("/api/status").then().body("live", equalTo(false))
                .body("not_live_reason", containsString("'flaky'"));
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never happened: " + what);
            }
            Thread.onSpinWait();
        }
    }
}
