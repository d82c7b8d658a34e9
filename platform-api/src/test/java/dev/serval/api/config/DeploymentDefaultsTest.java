package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A deployment's defaults are written twice, as {@code @WithDefault}s of the properties ({@link ServalConfig.Deployment})
 * and as {@link DeploymentConfig#defaults()} (the config file and the management API); they must say the same thing,
 * or a deployment declared in properties behaves unlike the same one in a file (as {@code batch-wait-timeout} did:
 * 2 ms in properties, 0 s everywhere else).
 */
class DeploymentDefaultsTest {

    @Test
    void everyPropertyDefaultIsTheConfigFilesDefault() {
        Map<String, Object> documented = DeploymentConfig.defaults();
        List<String> compared = new ArrayList<>();
        for (Method method : ServalConfig.Deployment.class.getDeclaredMethods()) {
            WithDefault fallback = method.getAnnotation(WithDefault.class);
            if (fallback == null || method.isDefault()) {
                continue;
            }
            WithName name = method.getAnnotation(WithName.class);
            String field = (name == null ? method.getName() : name.value()).replace('-', '_');
            assertTrue(documented.containsKey(field), "property default for '" + field + "' has no config-file default");
            Object expected = documented.get(field);
            String given = fallback.value();
            if (method.getReturnType() == Duration.class) {
                assertEquals(DurationConverter.parseDuration(expected.toString()), DurationConverter.parseDuration(given),
                        field);
            } else if (method.getReturnType().isEnum()) {
                assertEquals(expected.toString().toLowerCase(), given.toLowerCase(), field);
            } else if (method.getReturnType() == double.class) {
                assertEquals(((Number) expected).doubleValue(), Double.parseDouble(given), field);
            } else {
                assertEquals(expected.toString(), given, field);
            }
            compared.add(field);
        }
        assertEquals(documented.size(), compared.size(), "compared " + compared + " of " + documented.keySet());
    }
}
