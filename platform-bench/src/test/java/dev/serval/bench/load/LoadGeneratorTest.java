package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LoadGeneratorTest {

    @Test
    void retryAfterIsReadInSecondsAndRefinedByRetryAfterMs() {
        assertEquals(1_000, LoadGenerator.retryAfterMillis("1", null));
        assertEquals(0, LoadGenerator.retryAfterMillis(" 0 ", null));
        assertEquals(35, LoadGenerator.retryAfterMillis("1", "35"));
        assertEquals(2_000, LoadGenerator.retryAfterMillis("2", "soon")); // an unreadable refinement is ignored
    }

    @Test
    void aRefusalWithoutAUsableRetryAfterHeaderHasNoWait() {
        assertEquals(-1, LoadGenerator.retryAfterMillis(null, null));
        assertEquals(-1, LoadGenerator.retryAfterMillis(null, "35")); // retry-after-ms alone is not Retry-After
        assertEquals(-1, LoadGenerator.retryAfterMillis("Wed, 21 Oct 2026 07:28:00 GMT", null));
        assertEquals(-1, LoadGenerator.retryAfterMillis("-3", null));
    }

    @Test
    void aClosedLoopInOrderSendsEachBodyOnceAndInTheirOrder() throws Exception {
        Vertx vertx = Vertx.vertx();
        List<String> received = new ArrayList<>();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<String> repeated = new ArrayList<>();
        try (LoadGenerator generator = new LoadGenerator()) {
            HttpServer server = vertx.createHttpServer().requestHandler(request -> request.body().onSuccess(body -> {
                synchronized (received) {
                    received.add(body.toString());
                    if (!seen.add(body.toString())) {
                        repeated.add(body.toString());
                    }
                }
                request.response().end("{}");
            })).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            Workload workload = new Workload("numbers", "/", IntStream.range(0, 500_000)
                    .mapToObj(i -> Buffer.buffer(Integer.toString(i))).toList());

            // Each connection sends its first request at once, and the run waits for every answer.
            generator.closedLoopInOrder("test", server.actualPort(), ProcessHandle.current().pid(), workload, 4,
                    Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(30));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        synchronized (received) {
            assertTrue(received.size() >= 4, "every connection sent: " + received);
            assertTrue(repeated.isEmpty(), "bodies sent twice: " + repeated);
            // Connection c sends c, c + 4, c + 8...: the bodies sent are the first ones, but for the connections' lag.
            int highest = received.stream().mapToInt(Integer::parseInt).max().orElseThrow();
            assertTrue(highest < received.size() + 4 * 4, highest + " among the first " + received.size());
        }
    }
}
