package dev.serval.api;

import static io.restassured.RestAssured.given;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;

/** Helpers shared by the HTTP tests. */
public final class Serving {

    public static final String MODEL = "all-minilm-l6-v2";
    public static final String INFER = "/v2/models/" + MODEL + "/infer";

    private Serving() {
    }

    /**
     * The value of {@code series} (a meter's name and labels exactly as {@code /q/metrics} exports them, e.g.
     * {@code serval_pending_tokens{deployment="d"}}) now, or empty while it is not exported.
     */
    public static OptionalDouble metric(String series) {
        for (String line : given().get("/q/metrics").asString().split("\n")) {
            if (line.startsWith(series + " ")) {
                return OptionalDouble.of(Double.parseDouble(line.substring(series.length() + 1)));
            }
        }
        return OptionalDouble.empty();
    }

    /** Waits (up to 2 minutes) until every deployment has loaded and warmed up. */
    public static void awaitReady() {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (given().get("/v2/health/ready").statusCode() != 200) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Serval did not become ready: " + given().get("/q/health/ready").asString());
            }
            pause();
        }
    }

    /** Waits (up to 2 minutes) until model {@code name} has loaded and warmed up. */
    public static void awaitModelReady(String name) {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (given().get("/v2/models/" + name + "/ready").statusCode() != 200) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("model " + name + " did not become ready: " + given().get("/q/health/ready").asString());
            }
            pause();
        }
    }

    /** Waits (up to 30 s) until deployment {@code name} is in {@code state} ({@code GET /api/deployments/{name}}). */
    public static void awaitDeploymentState(String name, String state) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        String now;
        while (!(now = given().get("/api/deployments/" + name).jsonPath().getString("state")).equals(state)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("deployment " + name + " stayed " + now + ", expected " + state + ": "
                        + given().get("/api/deployments/" + name).asString());
            }
            pause();
        }
    }

    /**
     * Calls {@code call} until its answer is {@code done} (up to 30 s), for what happens in the background with nothing
     * to wait on but the server's answers: a rescan of the repository, an autoscaling decision.
     *
     * @return the answer that was done
     */
    public static io.restassured.response.Response await(String what,
            java.util.function.Supplier<io.restassured.response.Response> call,
            java.util.function.Predicate<io.restassured.response.Response> done) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        io.restassured.response.Response last;
        while (!done.test(last = call.get())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " did not happen within 30 s; last answer: " + last.statusCode() + " "
                        + last.asString());
            }
            pause();
        }
        return last;
    }

    private static void pause() {
        try {
            Thread.sleep(100); // polling the server's answers: nothing to wait on but time
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The reference embeddings made by scripts/make_minilm_reference.py, from platform-core's test resources. */
    public static JsonNode reference() {
        try {
            return new ObjectMapper().readTree(
                    Path.of("..", "platform-core", "src", "test", "resources", "reference", "minilm-reference.json").toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    public static float[] floats(JsonNode array, int from, int count) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = (float) array.get(from + i).asDouble();
        }
        return values;
    }

    public static float[] floats(List<? extends Number> values) {
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i).floatValue();
        }
        return out;
    }
}
