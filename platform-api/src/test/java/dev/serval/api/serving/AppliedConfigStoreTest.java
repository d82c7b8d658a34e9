package dev.serval.api.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ConfigParser;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AppliedConfigStoreTest {

    @TempDir
    Path dir;

    static DeploymentSpec config(String name, int replicas) {
        return ConfigParser.deployment(name, new ObjectMapper().valueToTree(Map.of("model", "noop",
                "num_replicas", replicas)), "test");
    }

    @Test
    void writesWhatReadsBackAndCreatesTheDirectory() {
        Path state = dir.resolve("state");
        AppliedConfigStore store = new AppliedConfigStore(Optional.of(state));
        assertEquals(Optional.empty(), store.file(), "nothing applied yet");

        store.write(List.of(config("a", 2), config("b", 1)));

        Path file = store.file().orElseThrow();
        assertEquals(state.resolve(AppliedConfigStore.FILE), file);
        assertEquals(List.of(config("a", 2), config("b", 1)), ConfigParser.readFile(file));
    }

    @Test
    void replacesThePreviousConfigWholeAndLeavesNoPartialFile() throws IOException {
        AppliedConfigStore store = new AppliedConfigStore(Optional.of(dir));
        store.write(List.of(config("a", 2), config("b", 1)));

        store.write(List.of(config("c", 3)));

        assertEquals(List.of(config("c", 3)), ConfigParser.readFile(store.file().orElseThrow()));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(AppliedConfigStore.FILE), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void aFailedWriteKeepsThePreviousFile() throws IOException {
        AppliedConfigStore store = new AppliedConfigStore(Optional.of(dir));
        store.write(List.of(config("a", 2)));
        String before = Files.readString(store.file().orElseThrow());
        // A directory where the file's replacement must go: the rename cannot replace it.
        Path blocked = dir.resolve("blocked");
        Files.createDirectories(blocked.resolve(AppliedConfigStore.FILE).resolve("not-empty"));
        AppliedConfigStore failing = new AppliedConfigStore(Optional.of(blocked));

        UncheckedIOException failure = assertThrows(UncheckedIOException.class,
                () -> failing.write(List.of(config("b", 1))));

        assertTrue(failure.getMessage().contains(blocked.toString()), failure.getMessage());
        assertEquals(before, Files.readString(store.file().orElseThrow()));
        try (Stream<Path> files = Files.list(blocked)) {
            assertEquals(List.of(AppliedConfigStore.FILE), files.map(p -> p.getFileName().toString()).toList(),
                    "the temporary file is removed");
        }
    }

    @Test
    void withoutAStateDirectoryKeepsNothing() {
        AppliedConfigStore store = new AppliedConfigStore(Optional.empty());

        store.write(List.of(config("a", 1)));

        assertEquals(Optional.empty(), store.file());
    }
}
