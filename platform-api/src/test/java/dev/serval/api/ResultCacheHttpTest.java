package dev.serval.api;

import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The result cache over HTTP: on by default for the default text-embedding deployment, a repeated text is a hit in
 * {@code /q/metrics} with the same vector, and the management API shows and changes the setting through the one field
 * table.
 */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class ResultCacheHttpTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + ManagementProfile.TOKEN);
    }

    private static String scrape() {
        return given().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    private static double sample(String metrics, String series) {
        Matcher matcher = Pattern.compile("^" + Pattern.quote(series) + " ([0-9.E+-]+)$", Pattern.MULTILINE)
                .matcher(metrics);
        assertTrue(matcher.find(), series + " missing from /q/metrics");
        return Double.parseDouble(matcher.group(1));
    }

    private static List<Float> embed(String text) {
        return given().contentType("application/json")
                .body("{\"model\":\"" + MODEL + "\",\"input\":[\"" + text + "\"]}")
                .post("/v1/embeddings").then().statusCode(200).extract().jsonPath().getList("data[0].embedding",
                        Float.class);
    }

    @Test
    void aRepeatedTextIsAHitWithTheSameVector() {
        String text = "a text for the result cache " + System.nanoTime();
        String hit = "serval_cache_requests_total{deployment=\"" + MODEL + "\",result=\"hit\"}";
        String miss = "serval_cache_requests_total{deployment=\"" + MODEL + "\",result=\"miss\"}";
        String before = scrape();

        List<Float> first = embed(text);
        List<Float> second = embed(text);

        assertEquals(first, second, "a hit is the miss's vector");
        String after = scrape();
        assertEquals(sample(before, hit) + 1, sample(after, hit));
        assertEquals(sample(before, miss) + 1, sample(after, miss));
        assertTrue(sample(after, "serval_cache_bytes{deployment=\"" + MODEL + "\"}") > 0);
        sample(after, "serval_cache_evictions_total{deployment=\"" + MODEL + "\"}");
        JsonPath view = admin().get("/api/deployments/" + MODEL).then().statusCode(200).extract().jsonPath();
        assertTrue(view.getBoolean("cache.active"));
        assertTrue(view.getLong("cache.bytes") > 0);
        assertTrue(view.getLong("cache.hits") >= 1 && view.getLong("cache.lookups") >= view.getLong("cache.hits") + 1,
                "the deployment's lookups so far, this hit among them: " + view.get("cache"));
        assertEquals(64L << 20, view.getLong("cache.granted_bytes"));
        assertTrue(view.getBoolean("config.cache.enabled"));
        assertEquals(64L << 20, view.getLong("config.cache.max_bytes"));
    }

    @Test
    void theManagementApiTurnsTheCacheOffAndOnInPlace() {
        admin().contentType("application/json").body("{\"model\":\"" + MODEL + "\",\"cache\":\"off\"}")
                .put("/api/deployments/uncached").then().statusCode(201);
        try {
            Serving.awaitModelReady("uncached");
            JsonPath off = admin().get("/api/deployments/uncached").then().statusCode(200).extract().jsonPath();
            assertFalse(off.getBoolean("cache.active"));
            assertFalse(off.getBoolean("config.cache.enabled"));

            admin().contentType("application/json").body("{\"cache\":{\"enabled\":true,\"max_bytes\":\"1Mi\"}}")
                    .patch("/api/deployments/uncached").then().statusCode(200);

            JsonPath on = admin().get("/api/deployments/uncached").then().statusCode(200).extract().jsonPath();
            assertTrue(on.getBoolean("cache.active"));
            assertEquals(1L << 20, on.getLong("cache.granted_bytes"));
            assertEquals(1L << 20, on.getLong("config.cache.max_bytes"));
        } finally {
            admin().delete("/api/deployments/uncached").then().statusCode(200);
        }
    }
}
