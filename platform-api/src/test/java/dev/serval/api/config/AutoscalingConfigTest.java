package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code autoscaling} block of a deployment's config: file, API bodies, PATCH, properties, and toMap. */
class AutoscalingConfigTest {

    private static final String SOURCE = "serval.yaml";

    private static DeploymentSpec parse(String autoscaling) {
        String yaml = "deployments:\n  - name: bert\n    model: bert-base\n" + autoscaling;
        return ConfigParser.deployments(ConfigParser.read(yaml, SOURCE), SOURCE).getFirst();
    }

    private static InvalidConfig refused(String autoscaling) {
        return assertThrows(InvalidConfig.class, () -> parse(autoscaling));
    }

    private static DeploymentSpec patch(DeploymentSpec current, String json) {
        return ConfigParser.merge(current, ConfigParser.read(json, "PATCH"), "PATCH");
    }

    @Test
    void readsTheIssuesExampleWithEveryField() {
        DeploymentSpec spec = parse("""
                    autoscaling:
                      min_replicas: 0
                      max_replicas: 4
                      initial_replicas: 1
                      target_ongoing_requests: 2
                      upscale_delay: 30s
                      downscale_delay: 600s
                      downscale_to_zero_delay: 120s
                      look_back_period: 30s
                      upscaling_factor: 1.5
                      downscaling_factor: 0.5
                """);
        assertEquals(new AutoscalingSpec(0, 4, 1, 2, Duration.ofSeconds(30), Duration.ofSeconds(600),
                Duration.ofSeconds(120), Duration.ofSeconds(30), 1.5, 0.5), spec.autoscaling());
        assertEquals(1, spec.numReplicas(), "starts at initial_replicas");
    }

    @Test
    void fieldsNotGivenTakeRaySServesDefaults() {
        DeploymentSpec spec = parse("    autoscaling: {max_replicas: 3}\n");
        assertEquals(AutoscalingSpec.DEFAULTS.withMaxReplicas(3), spec.autoscaling());
        assertFalse(parse("").isAutoscaled());
    }

    @Test
    void numReplicasAndAutoscalingTogetherAreRefusedNamingBoth() {
        InvalidConfig e = refused("    num_replicas: 2\n    autoscaling: {max_replicas: 3}\n");
        assertEquals("autoscaling", e.field());
        assertTrue(e.getMessage().contains("autoscaling and num_replicas are both given"), e.getMessage());
        assertFalse(parse("    num_replicas: 2\n    autoscaling: null\n").isAutoscaled(), "null is off");
    }

    @Test
    void namesTheSubFieldOfEveryMistake() {
        assertEquals("autoscaling.max_replicas", refused("    autoscaling: {max_replicas: 65}\n").field());
        assertEquals("autoscaling.max_replicas", refused("    autoscaling: {min_replicas: 3, max_replicas: 2}\n")
                .field());
        assertEquals("autoscaling.initial_replicas", refused("    autoscaling: {initial_replicas: 11}\n").field());
        assertEquals("autoscaling.target_ongoing_requests",
                refused("    autoscaling: {target_ongoing_requests: 0}\n").field());
        assertEquals("autoscaling.upscale_delay", refused("    autoscaling: {upscale_delay: soon}\n").field());
        assertEquals("autoscaling.downscaling_factor", refused("    autoscaling: {downscaling_factor: 2}\n").field());
        assertEquals("autoscaling", refused("    autoscaling: 3\n").field());
        InvalidConfig unknown = refused("    autoscaling: {max-replicas: 3}\n");
        assertEquals("autoscaling.max-replicas", unknown.field());
        assertTrue(unknown.getMessage().contains("did you mean 'max_replicas'?"), unknown.getMessage());
        assertTrue(refused("    autoscaling: {maximum: 3}\n").getMessage().contains("known fields: [min_replicas"));
    }

    @Test
    void acceptsAFractionalTarget() {
        assertEquals(0.5, parse("    autoscaling: {target_ongoing_requests: 0.5}\n").autoscaling()
                .targetOngoingRequests());
    }

    @Test
    void minReadyReplicasIsBoundedByMaxReplicasWhenAutoscaled() {
        assertEquals(3, parse("    min_ready_replicas: 3\n    autoscaling: {min_replicas: 0, max_replicas: 3}\n")
                .health().minReadyReplicas());
        InvalidConfig e = refused("    min_ready_replicas: 4\n    autoscaling: {max_replicas: 3}\n");
        assertTrue(e.getMessage().contains("autoscaling.max_replicas is 3"), e.getMessage());
    }

    @Test
    void toMapWritesTheBlockInsteadOfNumReplicasAndRoundTrips() {
        DeploymentSpec spec = parse("    autoscaling: {min_replicas: 0, max_replicas: 4, look_back_period: 500ms}\n");
        Map<String, Object> map = ConfigParser.toMap(spec);
        assertFalse(map.containsKey("num_replicas"));
        @SuppressWarnings("unchecked")
        Map<String, Object> autoscaling = (Map<String, Object>) map.get("autoscaling");
        assertEquals("500ms", autoscaling.get("look_back_period"));
        assertFalse(autoscaling.containsKey("initial_replicas"), "unset optional fields are not written");
        assertEquals(List.of(spec), ConfigParser.deployments(ConfigParser.read(ConfigParser.toYaml(List.of(spec)),
                "state"), "state"));
        assertEquals(1, ConfigParser.toMap(parse("")).get("num_replicas"));
    }

    @Test
    void aPatchMergesTurnsOnAndTurnsOff() {
        DeploymentSpec fixed = parse("    num_replicas: 3\n");
        DeploymentSpec on = patch(fixed, "{\"autoscaling\": {\"max_replicas\": 5}}");
        assertEquals(AutoscalingSpec.DEFAULTS.withMaxReplicas(5), on.autoscaling());

        DeploymentSpec merged = patch(on, "{\"autoscaling\": {\"min_replicas\": 0}, \"max_batch_size\": 4}");
        assertEquals(AutoscalingSpec.DEFAULTS.withMaxReplicas(5).withMinReplicas(0), merged.autoscaling());
        assertEquals(merged.autoscaling(), patch(merged, "{\"max_batch_size\": 2}").autoscaling(),
                "other fields leave it alone");

        DeploymentSpec off = patch(merged, "{\"num_replicas\": 2}");
        assertEquals(AutoscalingSpec.OFF, off.autoscaling());
        assertEquals(2, off.numReplicas());
        assertEquals(AutoscalingSpec.OFF, patch(merged, "{\"autoscaling\": null}").autoscaling());
        assertThrows(InvalidConfig.class, () -> patch(merged, "{\"num_replicas\": 2, \"autoscaling\": {}}"));
    }

    @Test
    void propertiesGiveTheBlockInKebabCaseWhichReplacesTheListedNumReplicas() {
        DeploymentSpec spec = ConfigParser.fromProperties(Map.of("bert", Map.of("model", "bert-base",
                "num-replicas", "1", "autoscaling.min-replicas", "0", "autoscaling.max-replicas", "2",
                "autoscaling.target-ongoing-requests", "1.5", "autoscaling.upscale-delay", "2s"))).getFirst();
        assertEquals(new AutoscalingSpec(0, 2, null, 1.5, Duration.ofSeconds(2), Duration.ofSeconds(600), null,
                Duration.ofSeconds(30), 1, 1), spec.autoscaling());
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.fromProperties(Map.of("bert",
                Map.of("model", "bert-base", "autoscaling.max", "2"))));
        assertEquals("autoscaling.max", e.field());
        assertTrue(e.getMessage().contains("autoscaling.max-replicas"), e.getMessage());
    }
}
