package dev.serval.api.serving;

import static dev.serval.api.serving.AppliedConfigStoreTest.config;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The initial deployments come from the first source that exists: state file, then config file, then properties. */
class StartupConfigsTest {

    @TempDir
    Path dir;

    private final Supplier<List<DeploymentSpec>> properties = () -> List.of(config("from-properties", 1));

    private Path configFile() throws IOException {
        return Files.writeString(dir.resolve("serval.yaml"), "deployments:\n  - name: from-file\n    model: noop\n");
    }

    @Test
    void theLastAppliedConfigWinsOverTheConfigFileAndTheProperties() throws IOException {
        AppliedConfigStore state = new AppliedConfigStore(Optional.of(dir.resolve("state")));
        state.write(List.of(config("restored", 2)));

        List<DeploymentSpec> loaded = new StartupConfigs(state, Optional.of(configFile()), properties).load();

        assertEquals(List.of(config("restored", 2)), loaded);
    }

    @Test
    void theConfigFileWinsOverThePropertiesWhileNothingWasApplied() throws IOException {
        AppliedConfigStore state = new AppliedConfigStore(Optional.of(dir.resolve("state")));

        List<DeploymentSpec> loaded = new StartupConfigs(state, Optional.of(configFile()), properties).load();

        assertEquals(List.of("from-file"), loaded.stream().map(DeploymentSpec::name).toList());
    }

    @Test
    void thePropertiesDecideWithoutAFile() {
        AppliedConfigStore none = new AppliedConfigStore(Optional.empty());

        assertEquals(List.of(config("from-properties", 1)), new StartupConfigs(none, Optional.empty(), properties).load());
    }
}
