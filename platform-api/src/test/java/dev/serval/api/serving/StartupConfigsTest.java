package dev.serval.api.serving;

import static dev.serval.api.serving.AppliedConfigStoreTest.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.api.config.InvalidConfig;
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
    void partialFilesThatAKilledWriteLeftAreRemovedAtStart() throws IOException {
        Path stateDir = Files.createDirectories(dir.resolve("state"));
        AppliedConfigStore state = new AppliedConfigStore(Optional.of(stateDir));
        state.write(List.of(config("restored", 2)));
        Path partial = Files.writeString(stateDir.resolve(AppliedConfigStore.FILE + "123456.partial"), "deployments:\n  - na");
        Path unrelated = Files.writeString(stateDir.resolve("notes.txt"), "kept");

        assertEquals(List.of(config("restored", 2)), new StartupConfigs(state, Optional.empty(), properties).load());

        assertFalse(Files.exists(partial), "the partial file of an interrupted write is gone");
        assertTrue(Files.exists(unrelated), "nothing else is touched");
    }

    @Test
    void aLastAppliedConfigThatCannotBeReadStopsTheStartSayingWhichFileAndWhatToDo() throws IOException {
        Path stateDir = Files.createDirectories(dir.resolve("state"));
        Files.writeString(stateDir.resolve(AppliedConfigStore.FILE), "deployments: [ {name: x, model: noop");
        AppliedConfigStore state = new AppliedConfigStore(Optional.of(stateDir));

        InvalidConfig refused = assertThrows(InvalidConfig.class,
                () -> new StartupConfigs(state, Optional.of(configFile()), properties).load());

        String message = refused.getMessage();
        assertTrue(message.startsWith(stateDir.resolve(AppliedConfigStore.FILE) + ":1: "), "which file: " + message);
        assertTrue(message.contains("not valid YAML or JSON"), "why: " + message);
        assertTrue(message.contains("the last applied config"), "what it is: " + message);
        assertTrue(message.contains("delete it to start from the config file " + dir.resolve("serval.yaml")), message);
    }

    @Test
    void thePropertiesDecideWithoutAFile() {
        AppliedConfigStore none = new AppliedConfigStore(Optional.empty());

        assertEquals(List.of(config("from-properties", 1)), new StartupConfigs(none, Optional.empty(), properties).load());
    }

    @Test
    void theSourceNamedForAnInitialDeploymentIsWhereItCameFrom() throws IOException {
        AppliedConfigStore none = new AppliedConfigStore(Optional.empty());
        assertEquals("serval.deployments.bert", new StartupConfigs(none, Optional.empty(), properties).source("bert"));
        Path file = configFile();
        assertEquals(file.toString(), new StartupConfigs(none, Optional.of(file), properties).source("bert"));
        assertEquals(Path.of("").toAbsolutePath().resolve("serval.yaml").toString(),
                new StartupConfigs(none, Optional.of(Path.of("serval.yaml")), properties).source("bert"),
                "a relative file is the working directory's");
        AppliedConfigStore state = new AppliedConfigStore(Optional.of(dir.resolve("state")));
        state.write(List.of(config("restored", 2)));
        assertEquals(dir.resolve("state").resolve(AppliedConfigStore.FILE).toAbsolutePath().toString(),
                new StartupConfigs(state, Optional.of(file), properties).source("restored"));
    }
}
