package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Loading a model logs what Serval decided, not what the libraries beneath it say on every load of a CPU model
 * (issue 42's quiet log): nothing from DJL at INFO or above (its "Onnx extension not found in classpath", twice per
 * load; its platform line; the CUDA warning at the engine's start, on a CPU build).
 */
@QuarkusTest
class QuietLogTest {

    private static final String NAME = "quiet-log-minilm";

    @Test
    void aModelLoadSaysNothingFromTheLibrariesBelow() {
        List<String> said = new CopyOnWriteArrayList<>();
        Handler listener = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.INFO.intValue()) {
                    said.add(record.getLoggerName() + ": " + record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger djl = Logger.getLogger("ai.djl");
        djl.addHandler(listener);
        try {
            given().contentType("application/json").body("{\"model\":\"all-minilm-l6-v2\",\"predictor_threads\":1}")
                    .put("/api/deployments/" + NAME).then().statusCode(201);
            Serving.awaitModelReady(NAME);
        } finally {
            djl.removeHandler(listener);
            given().delete("/api/deployments/" + NAME).then().statusCode(200);
        }
        assertEquals(List.of(), said, "what DJL said while a model loaded");
    }
}
