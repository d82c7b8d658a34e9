package dev.serval.repository;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@link ModelRepository#resolve} keeps every read inside the repository: the files a descriptor names stay inside
 * their version folder, and a link that leads out of the repository (or into another model's folder) is refused.
 */
class RepositoryPathsTest extends RepositoryCase {

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
}
