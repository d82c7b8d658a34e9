package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval on two event loops with, besides the default model: {@code fragile} (health-checked every 50 ms, fails
 * its probes while {@link GatedModelSource#FRAGILE_BROKEN} is set), {@code gated} (one replica: 2 predictor threads,
 * 2 requests at once, room for 4 queued requests), {@code costly} (texts read up to 64 tokens, and at most 100
 * estimated tokens pending: max_pending_tokens) and {@code slow}, whose loading waits for
 * {@link GatedModelSource#LOAD_GATE}.
 * Their result caches are off: these tests hold requests at the gate, and a repeated text would be answered, or wait
 * for its twin, without reaching it.
 */
public class GatedModelsProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(
                Map.entry("serval.deployments.fragile.model", "gated-fragile:"),
                Map.entry("serval.deployments.fragile.predictor-threads", "1"),
                Map.entry("serval.deployments.fragile.health-check-period", "50ms"),
                Map.entry("serval.deployments.fragile.health-check-failure-threshold", "1"),
                Map.entry("serval.deployments.fragile.cache", "off"),
                Map.entry("serval.deployments.gated.cache", "off"),
                Map.entry("serval.deployments.slow.cache", "off"),
                Map.entry("quarkus.vertx.event-loops-pool-size", "2"),
                Map.entry("serval.deployments.gated.model", "gated:"),
                Map.entry("serval.deployments.gated.predictor-threads", "2"),
                Map.entry("serval.deployments.gated.max-ongoing-requests", "2"),
                Map.entry("serval.deployments.gated.max-queued-requests", "4"),
                Map.entry("serval.deployments.costly.model", "gated:"),
                Map.entry("serval.deployments.costly.max-length", "64"),
                Map.entry("serval.deployments.costly.max-pending-tokens", "100"),
                Map.entry("serval.deployments.costly.cache", "off"),
                Map.entry("serval.deployments.slow.model", "gated-load:"),
                Map.entry("serval.deployments.slow.predictor-threads", "1"));
    }
}
