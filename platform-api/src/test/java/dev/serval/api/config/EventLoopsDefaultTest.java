package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EventLoopsDefaultTest {

    @Test
    void oneEventLoopPerTwoCoresAndAtLeastOne() {
        assertEquals(1, EventLoopsDefault.eventLoops(1));
        assertEquals(1, EventLoopsDefault.eventLoops(2));
        assertEquals(1, EventLoopsDefault.eventLoops(3));
        assertEquals(2, EventLoopsDefault.eventLoops(4));
        assertEquals(8, EventLoopsDefault.eventLoops(16));
    }

    @Test
    void itGivesOnlyThatPropertyAndEveryConfigurationFileOrVariableOverridesIt() {
        EventLoopsDefault source = new EventLoopsDefault();
        assertEquals(Integer.toString(EventLoopsDefault.eventLoops(Runtime.getRuntime().availableProcessors())),
                source.getValue("quarkus.vertx.event-loops-pool-size"));
        assertNull(source.getValue("quarkus.http.port"));
        assertEquals(java.util.Set.of("quarkus.vertx.event-loops-pool-size"), source.getPropertyNames());
        assertTrue(source.getOrdinal() < 250, "below application.properties (250)");
    }
}
