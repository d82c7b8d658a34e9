package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * After a restart, the state directory's last applied config is re-applied in place of the config file and the
 * properties: what the management API set survives the restart.
 */
@QuarkusTest
@TestProfile(StateDirectoryTest.Restarted.class)
class StateDirectoryTest {

    public static class Restarted implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            Path file = ConfigFileTest.write("other.yaml", "deployments:\n  - name: from-file\n    model: noop\n");
            Path state = ConfigFileTest.DIR.resolve("state");
            // What an earlier run of Serval wrote after a PUT /api/config.
            ConfigFileTest.write("state/applied-config.yaml", """
                    deployments:
                      - name: restored
                        model: noop
                        predictor_threads: 1
                        num_replicas: 2
                    """);
            return Map.of("serval.config-file", file.toString(), "serval.state-dir", state.toString());
        }
    }

    @Test
    void theLastAppliedConfigIsReappliedAfterARestart() {
        Serving.awaitReady();
        given().get("/api/deployments").then().statusCode(200)
                .body("deployments.name", contains("restored"))
                .body("deployments[0].replicas.running", equalTo(2));
    }
}
