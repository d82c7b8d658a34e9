package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval with, beside the default MiniLM, {@code tenants}: a multiplexed deployment of the repository models matching
 * {@code tenant-*} (three tiny encoders), at most two per replica, declared as properties; the repository is
 * rescanned every 200 ms, and the LRU is plain (no residency).
 */
public class MultiplexingProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        TestRepository.encoders("tenant-a", "tenant-b", "tenant-c");
        return Map.of(
                "serval.deployments.tenants.model", "tenant-*",
                "serval.deployments.tenants.max-models-per-replica", "2",
                "serval.deployments.tenants.predictor-threads", "1",
                "serval.multiplex.refresh-period", "200ms",
                // a plain LRU, so that what is unloaded depends on the requests' order only (the residency that
                // paces a thrashing LRU is MultiplexedDeploymentsTest's)
                "serval.multiplex.min-residency", "0s",
                "serval.multiplex.residency-factor", "0");
    }
}
