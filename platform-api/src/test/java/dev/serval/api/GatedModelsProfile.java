package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval on two event loops with, besides the default model: {@code gated} (one replica: 2 predictor threads,
 * 2 requests at once, room for 4 queued requests) and {@code slow}, whose loading waits for {@link GatedModelSource#LOAD_GATE}.
 */
public class GatedModelsProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "quarkus.vertx.event-loops-pool-size", "2",
                "serval.deployments.gated.model", "gated:",
                "serval.deployments.gated.predictor-threads", "2",
                "serval.deployments.gated.max-ongoing-requests", "2",
                "serval.deployments.gated.max-queued-requests", "4",
                "serval.deployments.slow.model", "gated-load:",
                "serval.deployments.slow.predictor-threads", "1");
    }
}
