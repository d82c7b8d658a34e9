package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad requests sent concurrently with good ones get 4xx; the good ones all succeed with unchanged answers. */
@QuarkusTest
class BadInputIsolationTest {

    private static final String GOOD = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2],"
            + "\"data\":[\"a stable sentence\",\"another stable sentence\"]}]}";
    private static final List<String> BAD = List.of(
            "{\"inputs\": [",
            "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[3],\"data\":[\"a\"]}]}",
            "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"INT64\",\"shape\":[1],\"data\":[1]}]}",
            "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"\"]}]}",
            "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[0],\"data\":[]}]}",
            "{\"nonsense\":true}");

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @Test
    void concurrentBadRequestsDoNotAffectGoodOnes() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonNode expected = json.readTree(given().contentType("application/json").body(GOOD).post(INFER).asByteArray())
                .get("outputs").get(0).get("data");
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            boolean good = c % 2 == 0;
            clients.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 15; i++) {
                        if (good) {
                            var response = given().contentType("application/json").body(GOOD).post(INFER);
                            JsonNode data = json.readTree(response.asByteArray()).path("outputs").path(0).path("data");
                            if (response.statusCode() != 200 || !data.equals(expected)) {
                                failures.add("good request got " + response.statusCode() + ": " + response.asString());
                            }
                        } else {
                            String body = BAD.get(i % BAD.size());
                            int status = given().contentType("application/json").body(body).post(INFER).statusCode();
                            if (status != 400) {
                                failures.add("bad request " + body + " got " + status);
                            }
                        }
                    }
                } catch (Exception e) {
                    failures.add(e.toString());
                }
            }));
        }
        start.countDown();
        for (Thread client : clients) {
            client.join(TimeUnit.MINUTES.toMillis(2));
        }
        assertEquals(List.of(), failures);
    }
}
