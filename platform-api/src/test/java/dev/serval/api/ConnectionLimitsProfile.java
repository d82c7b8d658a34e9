package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval with small connection bounds, so that tests reach them: 24 connections ({@code quarkus.http.limits.max-connections})
 * and 3 s of silence before a connection is closed ({@code quarkus.http.idle-timeout}), 2 s for a request body to start
 * coming or to stall ({@code serval.http.body-timeout}; SlowBodyTest); the management API needs its token
 * ({@link #TOKEN}).
 */
public class ConnectionLimitsProfile implements QuarkusTestProfile {

    static final int MAX_CONNECTIONS = 24;
    static final String TOKEN = "connection-limits-token";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("quarkus.http.limits.max-connections", Integer.toString(MAX_CONNECTIONS),
                "quarkus.http.idle-timeout", "3s",
                "serval.api.auth-enabled", "true",
                "serval.api.token", TOKEN,
                "serval.ui.enabled", "false",
                "serval.http.body-timeout", "2s");
    }
}
