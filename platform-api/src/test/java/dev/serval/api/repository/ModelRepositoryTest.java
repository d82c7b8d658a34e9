package dev.serval.api.repository;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.Composite;
import dev.serval.model.ModelDescriptor;
import dev.serval.model.ModelKind;
import dev.serval.model.PipelineStep;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ModelRepository}: finding model versions and reading their descriptors, and refusing, with a message naming
 * the model, the version, the field and the problem, every name, path or link that would lead out of the repository.
 */
class ModelRepositoryTest {

    private static final String EMBEDDING = """
            kind: text-embedding
            max_length: 128
            engine:
              interOpNumThreads: 1
              optLevel: ALL_OPT
            description: a test encoder
            """;

    @TempDir
    Path temp;

    /** The repository root, inside {@link #temp}. */
    private Path root;

    /** A folder next to the repository, outside it. */
    private Path outside;

    private ModelRepository repository;

    @BeforeEach
    void createRepository() throws IOException {
        root = temp.resolve("repository");
        outside = Files.createDirectories(temp.resolve("outside"));
        repository = new ModelRepository(root);
    }

    /** Writes {@code <root>/<model>/<version>/model.yaml} with {@code descriptor} and the named files. */
    private Path version(String model, String version, String descriptor, String... files) throws IOException {
        Path dir = Files.createDirectories(root.resolve(model).resolve(version));
        Files.writeString(dir.resolve(ModelRepository.DESCRIPTOR), descriptor);
        for (String file : files) {
            Files.createDirectories(dir.resolve(file).getParent());
            Files.writeString(dir.resolve(file), "content of " + file);
        }
        return dir;
    }

    private IllegalArgumentException refused(String model, String version) {
        return assertThrows(IllegalArgumentException.class, () -> repository.resolve(model, version));
    }

    private static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), () -> "expected <" + part + "> in: " + e.getMessage());
        }
    }

    private static final String WHERE = "model 'm' version '1': model.yaml: ";

    // --- finding models

    @Test
    void resolvesATextEmbeddingVersion() throws IOException {
        Path dir = version("minilm", "2", EMBEDDING, "model.onnx", "tokenizer.json");

        ModelRepository.ModelVersion found = repository.resolve("minilm", "2");

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

        ModelRepository.ModelVersion found = repository.resolve("m", "1");

        assertEquals(256, found.descriptor().maxLength(), "the default max_length");
        assertEquals(dir.toRealPath().resolve("onnx/encoder.onnx"), found.file());
        assertEquals("content of tok/tokenizer.json", Files.readString(found.tokenizer()));
    }

    @Test
    void resolvesANoopWithNothingButItsDescriptor() throws IOException {
        version("noop", "1", "kind: noop\n");

        ModelRepository.ModelVersion found = repository.resolve("noop", "1");

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

    // --- descriptors

    @ParameterizedTest
    @ValueSource(strings = {"- kind: noop\n", "noop\n", "", "# nothing\n"})
    void refusesADescriptorThatIsNotAMapping(String descriptor) throws IOException {
        version("m", "1", descriptor);
        assertEquals("model 'm' version '1': model.yaml must be a mapping with at least 'kind'",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesADescriptorThatIsNotYaml() throws IOException {
        version("m", "1", "kind: [noop\n");
        assertMessage(refused("m", "1"), "model 'm' version '1': model.yaml cannot be read: ");
    }

    @Test
    void refusesAnUnknownDescriptorField() throws IOException {
        version("m", "1", "kind: noop\nmax-length: 12\n");
        assertEquals(WHERE + "unknown field 'max-length'; known fields: "
                + "[class, description, engine, file, jar, kind, labels, max_length, output, steps, tokenizer]",
                refused("m", "1").getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"kind: embedding\n", "kind: Text-Embedding\n", "kind: [noop]\n", "kind:\n",
        "description: no kind\n"})
    void refusesABadKind(String descriptor) throws IOException {
        version("m", "1", descriptor);
        assertMessage(refused("m", "1"),
                WHERE + "field 'kind' must be one of text-embedding, text-classification, tensor, noop, pipeline, "
                        + "java, not ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "labels: []\n", "labels: [positive]\n"})
    void refusesATextClassifierWithFewerThanTwoLabels(String labels) throws IOException {
        version("m", "1", "kind: text-classification\n" + labels, "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "a text-classification model needs 'labels', at least two names in the order of its "
                + "logits", refused("m", "1").getMessage());
    }

    @Test
    void refusesLabelsThatAreNotAListOfNames() throws IOException {
        version("m", "1", "kind: text-classification\nlabels: positive\n", "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "field 'labels' must be a list of names", refused("m", "1").getMessage());
        version("m", "1", "kind: text-classification\nlabels: [a, '']\n", "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "field 'labels' must hold non-empty strings, not \"\"", refused("m", "1").getMessage());
    }

    @Test
    void refusesEngineOptionsThatAreNotSingleValues() throws IOException {
        version("m", "1", "kind: tensor\nengine: [a]\n", "model.onnx");
        assertEquals(WHERE + "field 'engine' must be a mapping of ONNX Runtime options",
                refused("m", "1").getMessage());
        version("m", "1", "kind: tensor\nengine:\n  optLevel: [a]\n", "model.onnx");
        assertEquals(WHERE + "engine option 'optLevel' must be a single value", refused("m", "1").getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "0", "-5", "long", "2.5", "'512'", "99999999999", "[256]"})
    void refusesABadMaxLength(String maxLength) throws IOException {
        version("m", "1", "kind: text-embedding\nmax_length: " + maxLength + "\n", "model.onnx", "tokenizer.json");
        assertMessage(refused("m", "1"), WHERE + "field 'max_length' must be a whole number >= 2, not ");
    }

    // --- paths named by the descriptor

    @Test
    void refusesAFileInTheParentFolder() throws IOException {
        Path dir = version("m", "1", "kind: tensor\nfile: ../outside.onnx\n");
        Files.writeString(dir.resolveSibling("outside.onnx"), "exists, but outside the version folder");
        assertEquals(WHERE + "field 'file' (../outside.onnx) must not contain '..': it would leave the model's folder",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesAnAbsoluteFile() throws IOException {
        version("m", "1", "kind: tensor\nfile: /etc/passwd\n");
        assertEquals(WHERE + "field 'file' (/etc/passwd) must be relative to the model's folder, not absolute",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesAFileThatClimbsOutThroughASubfolder() throws IOException {
        version("m", "1", "kind: tensor\nfile: sub/../../x\n", "sub/keep", "../x");
        assertEquals(WHERE + "field 'file' (sub/../../x) must not contain '..': it would leave the model's folder",
                refused("m", "1").getMessage());
    }

    @Test
    void checksTheTokenizerPathToo() throws IOException {
        version("m", "1", "kind: text-embedding\ntokenizer: ../../other/1/tokenizer.json\n", "model.onnx");
        assertMessage(refused("m", "1"),
                WHERE + "field 'tokenizer' (../../other/1/tokenizer.json) must not contain '..'");
        version("m", "1", "kind: text-embedding\ntokenizer: /tmp/tokenizer.json\n", "model.onnx");
        assertMessage(refused("m", "1"), WHERE + "field 'tokenizer' (/tmp/tokenizer.json) must be relative");
    }

    @Test
    void checksThePathsOfANoopToo() throws IOException {
        version("m", "1", "kind: noop\nfile: ../x.onnx\n");
        assertMessage(refused("m", "1"), WHERE + "field 'file' (../x.onnx) must not contain '..'");
    }

    @Test
    void refusesABlankOrNonTextFile() throws IOException {
        version("m", "1", "kind: tensor\nfile: ''\n");
        assertEquals(WHERE + "field 'file' must be a file name, not \"\"", refused("m", "1").getMessage());
        version("m", "1", "kind: tensor\nfile: [model.onnx]\n");
        assertEquals(WHERE + "field 'file' must be a file name, not [\"model.onnx\"]", refused("m", "1").getMessage());
    }

    @Test
    void refusesAFileThatDoesNotExist() throws IOException {
        Path dir = version("m", "1", "kind: text-embedding\n", "tokenizer.json");
        assertEquals(WHERE + "field 'file': model.onnx does not exist in " + dir.toRealPath(),
                refused("m", "1").getMessage());
    }

    @Test
    void refusesATokenizerThatDoesNotExist() throws IOException {
        Path dir = version("m", "1", "kind: text-classification\nlabels: [a, b]\ntokenizer: tok.json\n", "model.onnx");
        assertEquals(WHERE + "field 'tokenizer': tok.json does not exist in " + dir.toRealPath(),
                refused("m", "1").getMessage());
    }

    @Test
    void refusesAFileThatIsAFolder() throws IOException {
        Path dir = version("m", "1", "kind: tensor\n");
        Files.createDirectories(dir.resolve("model.onnx"));
        assertMessage(refused("m", "1"), WHERE + "field 'file': model.onnx does not exist in ");
    }

    // --- links out of the repository

    @Test
    void refusesAModelFolderLinkedOutOfTheRepository() throws IOException {
        Path elsewhere = Files.createDirectories(outside.resolve("m").resolve("1"));
        Files.writeString(elsewhere.resolve(ModelRepository.DESCRIPTOR), "kind: noop\n");
        Files.createSymbolicLink(root.resolve("m"), outside.resolve("m"));

        assertMessage(refused("m", "1"), "model 'm' leads out of the repository (a link to "
                + outside.toRealPath().resolve("m") + "); Serval reads models only inside " + root.toRealPath());
    }

    @Test
    void refusesAVersionFolderLinkedOutOfTheRepository() throws IOException {
        version("m", "1", "kind: noop\n");
        Path elsewhere = Files.createDirectories(outside.resolve("2"));
        Files.writeString(elsewhere.resolve(ModelRepository.DESCRIPTOR), "kind: noop\n");
        Files.createSymbolicLink(root.resolve("m").resolve("2"), elsewhere);

        assertMessage(refused("m", "2"), "model 'm' version '2' leads out of the repository (a link to "
                + elsewhere.toRealPath() + ")");
    }

    @Test
    void refusesAModelFileLinkedOutOfTheRepository() throws IOException {
        Path dir = version("m", "1", "kind: text-embedding\n", "tokenizer.json");
        Path secret = Files.writeString(outside.resolve("secret.onnx"), "not the repository's");
        Files.createSymbolicLink(dir.resolve("model.onnx"), secret);

        assertMessage(refused("m", "1"), "model 'm' version '1': model.yaml", "field 'file' (model.onnx)",
                "leads out of the repository (a link to " + secret.toRealPath() + ")");
    }

    @Test
    void refusesATokenizerLinkedOutOfTheRepository() throws IOException {
        Path dir = version("m", "1", "kind: text-embedding\n", "model.onnx");
        Files.createSymbolicLink(dir.resolve("tokenizer.json"), Path.of("/etc/passwd"));

        assertMessage(refused("m", "1"), "field 'tokenizer' (tokenizer.json)", "leads out of the repository");
    }

    @Test
    void refusesAFileReachedThroughASubfolderLinkedOutOfTheRepository() throws IOException {
        Path dir = version("m", "1", "kind: tensor\nfile: weights/model.onnx\n");
        Files.writeString(outside.resolve("model.onnx"), "not the repository's");
        Files.createSymbolicLink(dir.resolve("weights"), outside);

        assertMessage(refused("m", "1"), "field 'file' (weights/model.onnx)", "leads out of the repository");
    }

    @Test
    void refusesAFileLinkedToAnotherModelsFolder() throws IOException {
        Path other = version("other", "1", "kind: tensor\n", "model.onnx");
        Path dir = version("m", "1", "kind: tensor\n");
        Files.createSymbolicLink(dir.resolve("model.onnx"), other.resolve("model.onnx"));

        assertEquals(WHERE + "field 'file' (model.onnx) leads out of the model's folder",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesADanglingLink() throws IOException {
        Path dir = version("m", "1", "kind: tensor\n");
        Files.createSymbolicLink(dir.resolve("model.onnx"), outside.resolve("gone.onnx"));

        assertMessage(refused("m", "1"), "field 'file' (model.onnx)", "cannot be read");
    }

    @Test
    void readsAPipelineAndAJavaModel() throws IOException {
        version("chain", "1", "kind: pipeline\nsteps:\n  - deployment: echo\n  - deployment: mlp\n"
                + "    inputs: {x: input}\n");
        version("custom", "1", "kind: java\njar: lib/handler.jar\nclass: com.example.My$Handler\n", "lib/handler.jar");

        ModelDescriptor chain = repository.resolve("chain", "1").descriptor();
        ModelDescriptor custom = repository.resolve("custom", "1").descriptor();

        assertEquals(new Composite.Pipeline(List.of(
                new PipelineStep("echo", Map.of()),
                new PipelineStep("mlp", Map.of("x", "input")))), chain.composite());
        assertEquals(new Composite.JavaHandler("lib/handler.jar", "com.example.My$Handler"),
                custom.composite());
        assertEquals(root.resolve("custom").resolve("1").resolve("lib/handler.jar"),
                repository.resolve("custom", "1").file());
    }

    @Test
    void readsARoutedStep() throws IOException {
        version("routed", "1", "kind: pipeline\nsteps:\n  - deployment: lang\n"
                + "  - route: {on: label, cases: {en: clf-en, de: clf-de}, default: clf-any}\n    from: request\n");

        PipelineStep step = ((Composite.Pipeline) repository
                .resolve("routed", "1").descriptor().composite()).steps().get(1);

        assertEquals(new PipelineStep(null, new PipelineStep.Route("label",
                Map.of("en", "clf-en", "de", "clf-de"), "clf-any"), true, Map.of()), step);
        assertEquals(List.of("clf-de", "clf-en", "clf-any"), step.targets());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "kind: pipeline\nsteps:\n  - route: {on: l, cases: {a: b}}\n|the first step cannot route",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {}}\n|'cases' must map 1 to 64",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {x: ../b}}\n|case 'x' must name",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {cases: {x: b}}\n|'on' must name",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {x: b}, else: c}\n|unknown field 'else'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    route: {on: l, cases: {x: b}}\n|needs either",
        "kind: pipeline\nsteps:\n  - deployment: a\n    from: request\n|'from' is 'request'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    from: elsewhere\n|'from' is 'request'",
        "kind: pipeline\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: []\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: echo\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: [echo]\n|steps[0] must be a mapping",
        "kind: pipeline\nsteps:\n  - deployment: ../etc\n|'deployment' must name a deployment",
        "kind: pipeline\nsteps:\n  - deployment: a\n    inputs: {x: y}\n|the first step takes the request's tensors",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    inputs: {x: z, y: z}\n|maps two outputs to 'z'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    inputs: [x]\n|'inputs' must be a mapping",
        "kind: pipeline\nsteps:\n  - deployment: a\n    when: x\n|unknown field 'when'",
        "kind: noop\nsteps:\n  - deployment: a\n|field 'steps' is for a pipeline, not a noop model",
        "kind: tensor\njar: x.jar\n|field 'jar' is for a java model",
        "kind: java\nclass: a.B\n|a java model needs 'jar'",
        "kind: java\njar: handler.zip\nclass: a.B\n|a java model needs 'jar'",
        "kind: java\njar: ../handler.jar\nclass: a.B\n|must not contain '..'",
        "kind: java\njar: /tmp/handler.jar\nclass: a.B\n|must be relative",
        "kind: java\njar: handler.jar\n|a java model needs 'class'",
        "kind: java\njar: handler.jar\nclass: 'a.B; rm -rf'\n|a java model needs 'class'",
        "kind: java\njar: handler.jar\nclass: a.B\nfile: x.onnx\n|names its jar with 'jar', not 'file'",
        "kind: java\njar: handler.jar\nclass: a.B\nengine: {optLevel: NO_OPT}\n|runs no ONNX graph",
        "kind: java\njar: missing.jar\nclass: a.B\n|missing.jar does not exist"})
    void refusesPipelinesAndJavaModelsThatCannotWork(String descriptorAndMessage) throws IOException {
        String[] parts = descriptorAndMessage.split("\\|");
        version("m", "1", parts[0], "handler.jar");
        String message = refused("m", "1").getMessage();
        assertTrue(message.contains(parts[1]), message);
    }

    @Test
    void refusesAPipelineOfMoreThanSixteenSteps() throws IOException {
        version("m", "1", "kind: pipeline\nsteps:\n" + "  - deployment: a\n".repeat(17));
        assertTrue(refused("m", "1").getMessage().contains("a list of 1 to 16 steps"));
    }
}
