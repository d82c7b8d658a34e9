package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import io.vertx.core.impl.VertxInternal;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** The server runs one event loop per two cores (at least one), not Quarkus's two per core. */
@QuarkusTest
class EventLoopsTest {

    @Inject
    Vertx vertx;

    @Test
    void oneEventLoopPerTwoCores() {
        int loops = 0;
        for (var ignored : ((VertxInternal) vertx).getEventLoopGroup()) {
            loops++;
        }
        assertEquals(Math.max(1, Runtime.getRuntime().availableProcessors() / 2), loops);
    }
}
