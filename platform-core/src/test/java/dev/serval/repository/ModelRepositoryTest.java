package dev.serval.repository;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.ModelDescriptor;
import dev.serval.model.ModelKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ModelRepository}: finding model versions, listing and installing them, and refusing, with a message naming
 * the model and the version, every name that is not a plain folder name or that the repository does not hold.
 */
class ModelRepositoryTest extends RepositoryCase {

    // --- finding models

    @Test
    void resolvesATextEmbeddingVersion() throws IOException {
        Path dir = version("minilm", "2", EMBEDDING, "model.onnx", "tokenizer.json");

        ModelVersion found = repository.resolve("minilm", "2");

        assertEquals("minilm", found.name());
        assertEquals("2", found.version());
        assertEquals(dir.toRealPath(), found.directory());
        assertEquals(new ModelDescriptor(ModelKind.TEXT_EMBEDDING, "model.onnx", "tokenizer.json", 128, List.of(),
                Map.of("interOpNumThreads", "1", "optLevel", "ALL_OPT"), "a test encoder"), found.descriptor());
        assertEquals(dir.toRealPath().resolve("model.onnx"), found.file());
        assertEquals(dir.toRealPath().resolve("tokenizer.json"), found.tokenizer());
        assertTrue(Files.isRegularFile(found.file()));
    }

    @Test
    void resolvesFilesNamedByTheDescriptorInSubfolders() throws IOException {
        Path dir = version("m", "1", """
                kind: text-embedding
                file: onnx/encoder.onnx
                tokenizer: ./tok/tokenizer.json
                """, "onnx/encoder.onnx", "tok/tokenizer.json");

        ModelVersion found = repository.resolve("m", "1");

        assertEquals(256, found.descriptor().maxLength(), "the default max_length");
        assertEquals(dir.toRealPath().resolve("onnx/encoder.onnx"), found.file());
        assertEquals("content of tok/tokenizer.json", Files.readString(found.tokenizer()));
    }

    @Test
    void resolvesANoopWithNothingButItsDescriptor() throws IOException {
        version("noop", "1", "kind: noop\n");

        ModelVersion found = repository.resolve("noop", "1");

        assertEquals(new ModelDescriptor(ModelKind.NOOP, "model.onnx", "tokenizer.json", 256, List.of(), Map.of(), ""),
                found.descriptor());
    }

    @Test
    void resolvesATensorModelWithoutATokenizer() throws IOException {
        version("t", "1", "kind: tensor\n", "model.onnx");
        assertEquals(ModelKind.TENSOR, repository.resolve("t", "1").descriptor().kind());
    }

    @Test
    void resolvesATextClassifierWithItsLabelsInOrder() throws IOException {
        version("sentiment", "1", "kind: text-classification\nlabels: [negative, neutral, positive]\n",
                "model.onnx", "tokenizer.json");
        assertEquals(List.of("negative", "neutral", "positive"),
                repository.resolve("sentiment", "1").descriptor().labels());
    }

    @Test
    void followsALinkToAFileInsideTheVersionFolder() throws IOException {
        Path dir = version("m", "1", "kind: tensor\n", "weights/real.onnx");
        Files.createSymbolicLink(dir.resolve("model.onnx"), Path.of("weights", "real.onnx"));

        assertEquals("content of weights/real.onnx", Files.readString(repository.resolve("m", "1").file()));
    }

    @Test
    void followsALinkedModelFolderThatStaysInsideTheRepository() throws IOException {
        Path real = version("minilm-v2", "1", "kind: noop\n");
        Files.createSymbolicLink(root.resolve("minilm"), root.resolve("minilm-v2"));

        assertEquals(real.toRealPath(), repository.resolve("minilm", "1").directory());
    }

    @Test
    void listsModelsAndVersionsSortedByName() throws IOException {
        version("zeta", "1", "kind: noop\n");
        version("alpha", "2", "kind: noop\n");
        version("alpha", "1", "kind: noop\n");
        version("alpha", "10", "kind: noop\n");
        Files.createDirectories(root.resolve("mid").resolve("1")); // a version without a descriptor is no version
        Files.createDirectories(root.resolve(".cache").resolve("1"));
        Files.writeString(root.resolve("README.md"), "not a model");

        Map<String, List<String>> models = repository.models();

        assertEquals(List.of("alpha", "mid", "zeta"), new ArrayList<>(models.keySet()));
        assertEquals(List.of("1", "10", "2"), models.get("alpha"));
        assertEquals(List.of(), models.get("mid"));
        assertEquals(List.of("1"), models.get("zeta"));
    }

    @Test
    void anEmptyRepositoryListsNothing() {
        assertEquals(Map.of(), repository.models());
    }

    @Test
    void doesNotListAModelFolderLinkedOutOfTheRepository() throws IOException {
        version("inside", "1", "kind: noop\n");
        Path elsewhere = Files.createDirectories(outside.resolve("secret").resolve("1"));
        Files.writeString(elsewhere.resolve(ModelRepository.DESCRIPTOR), "kind: noop\n");
        Files.createSymbolicLink(root.resolve("secret"), outside.resolve("secret"));
        Files.createSymbolicLink(root.resolve("inside").resolve("2"), elsewhere);

        assertEquals(Map.of("inside", List.of("1")), repository.models());
    }

    // --- install

    @Test
    void installWritesTheDescriptorAndFilesOnce() throws IOException {
        List<String> writes = new ArrayList<>();
        ModelRepository.FileSource source = (directory, fileName) -> {
            writes.add(fileName);
            if (!Files.exists(directory.resolve(fileName))) {
                Files.writeString(directory.resolve(fileName), "weights");
            }
        };
        Map<String, ModelRepository.FileSource> files = new LinkedHashMap<>();
        files.put("model.onnx", source);
        files.put("tokenizer.json", source);

        repository.install("bundled", "1", EMBEDDING, files);
        repository.install("bundled", "1", EMBEDDING, files);

        Path dir = root.toRealPath().resolve("bundled").resolve("1");
        assertEquals(EMBEDDING, Files.readString(dir.resolve(ModelRepository.DESCRIPTOR)));
        assertEquals("weights", Files.readString(dir.resolve("model.onnx")));
        try (Stream<Path> entries = Files.list(dir)) {
            assertEquals(List.of("model.onnx", "model.yaml", "tokenizer.json"),
                    entries.map(p -> p.getFileName().toString()).sorted().toList(), "no partial files left");
        }
        assertEquals(ModelKind.TEXT_EMBEDDING, repository.resolve("bundled", "1").descriptor().kind());
        assertEquals(Map.of("bundled", List.of("1")), repository.models());
    }

    @Test
    void installDoesNotOverwriteAnExistingDescriptor() throws IOException {
        Path dir = version("bundled", "1", "kind: noop\ndescription: edited by the operator\n");

        repository.install("bundled", "1", "kind: noop\ndescription: shipped\n", Map.of());

        assertEquals("kind: noop\ndescription: edited by the operator\n",
                Files.readString(dir.resolve(ModelRepository.DESCRIPTOR)));
    }

    @Test
    void installRefusesNamesThatAreNotPlain() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> repository.install("../escape", "1", "kind: noop\n", Map.of()));
        assertMessage(e, "model name '../escape' must be a plain name");
        e = assertThrows(IllegalArgumentException.class,
                () -> repository.install("m", "..", "kind: noop\n", Map.of()));
        assertMessage(e, "version '..' must be a plain name");
        assertTrue(Files.notExists(temp.resolve("escape")));
    }

    @Test
    void theRootIsCreatedIfMissing() throws IOException {
        Path nested = temp.resolve("a").resolve("b");
        ModelRepository created = new ModelRepository(nested);
        assertEquals(nested.toRealPath(), created.root());
        assertTrue(Files.isDirectory(nested));
    }

    // --- names

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"..", "../etc", "a/b", "/etc", ".", ".hidden", "a..b", "a\\b", "-m", " m", "m\n"})
    void refusesAModelNameThatIsNotPlain(String name) throws IOException {
        version("etc", "1", "kind: noop\n");
        IllegalArgumentException e = refused(name, "1");
        assertMessage(e, "model name '" + name + "' must be a plain name: letters, digits, '.', '_' and '-', "
                + "starting with a letter or digit, without '..'");
    }

    @Test
    void refusesANameEscapingToAModelNextToTheRepository() throws IOException {
        Path escaped = Files.createDirectories(outside.resolve("1"));
        Files.writeString(escaped.resolve(ModelRepository.DESCRIPTOR), "kind: noop\n");
        assertMessage(refused("../outside", "1"), "model name '../outside' must be a plain name");
        assertMessage(refused(outside.toString(), "1"), "must be a plain name");
    }

    @ParameterizedTest
    @ValueSource(strings = {"..", "../1", "1/..", "/1", "", "."})
    void refusesAVersionThatIsNotPlain(String version) throws IOException {
        version("m", "1", "kind: noop\n");
        assertMessage(refused("m", version), "version '" + version + "' must be a plain name");
    }

    @Test
    void refusesAMissingModelListingWhatTheRepositoryHolds() throws IOException {
        version("bert", "1", "kind: noop\n");
        version("alpha", "1", "kind: noop\n");
        assertEquals("model 'minilm' is not in the repository " + root.toRealPath() + "; it holds alpha, bert",
                refused("minilm", "1").getMessage());
    }

    @Test
    void refusesAModelOfAnEmptyRepositoryNamingTheRepository() throws IOException {
        assertEquals("model 'minilm' is not in the repository " + root.toRealPath(),
                refused("minilm", "1").getMessage());
    }

    @Test
    void refusesAMissingVersionListingTheVersions() throws IOException {
        version("m", "1", "kind: noop\n");
        version("m", "2", "kind: noop\n");
        assertEquals("model 'm' has no version '3' in the repository; it has [1, 2]", refused("m", "3").getMessage());
    }

    @Test
    void refusesAVersionFolderWithoutADescriptor() throws IOException {
        Files.createDirectories(root.resolve("m").resolve("1"));
        assertMessage(refused("m", "1"), "model 'm' version '1': model.yaml cannot be read");
    }
}
