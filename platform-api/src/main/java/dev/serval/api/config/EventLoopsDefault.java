package dev.serval.api.config;

import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Serval's default number of Vert.x event loops ({@code quarkus.vertx.event-loops-pool-size}): one per two cores, at
 * least one, where Quarkus would start two per core. Quarkus's default suits a service whose event loops do all its
 * work; in Serval they only read, decode, encode and write, while the predictor threads (as many as the cores) run
 * the models, and twice as many event loops as cores only add threads that take the cores from the predictors and
 * from each other. Measured on 2 cores (docs/design-decisions.md, "Fewer event loops than cores"): one event loop
 * served more no-op requests and more MiniLM texts than four.
 *
 * <p>Every other source overrides it (ordinal {@value #ORDINAL}, below {@code application.properties}' 250, the
 * environment's 300 and system properties' 400), so {@code QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE} or
 * {@code -Dquarkus.vertx.event-loops-pool-size} still set it. Registered in
 * {@code META-INF/services/org.eclipse.microprofile.config.spi.ConfigSource}; the cores are read when the value is,
 * so a container's CPU limit counts.
 */
public final class EventLoopsDefault implements ConfigSource {

    static final String PROPERTY = "quarkus.vertx.event-loops-pool-size";
    static final int ORDINAL = 50;

    /** Event loops for a machine of {@code cores} (the load benchmark's second bare server runs as many). */
    static int eventLoops(int cores) {
        return Math.max(1, cores / 2);
    }

    @Override
    public Map<String, String> getProperties() {
        return Map.of(PROPERTY, getValue(PROPERTY));
    }

    @Override
    public Set<String> getPropertyNames() {
        return Set.of(PROPERTY);
    }

    @Override
    public String getValue(String name) {
        return PROPERTY.equals(name) ? Integer.toString(eventLoops(Runtime.getRuntime().availableProcessors())) : null;
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }

    @Override
    public String getName() {
        return "serval-event-loops-default";
    }
}
