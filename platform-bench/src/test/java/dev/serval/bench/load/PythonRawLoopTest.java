package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PythonRawLoopTest {

    @TempDir
    Path dir;

    /** An executable shell script standing in for a Python interpreter. */
    private Path fakeInterpreter(String name, String body) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Test
    void everyImportedPackageIsPinned() {
        assertEquals(List.of("onnxruntime==1.29.0", "tokenizers==" + PythonRawLoop.TOKENIZERS,
                "numpy==" + PythonRawLoop.NUMPY), PythonRawLoop.requirements("1.29.0"));
    }

    @Test
    void aCompleteVenvWithTheSameRequirementsIsReusedWithoutRunningAnything() throws IOException {
        Path venv = dir.resolve("venvs").resolve("onnxruntime-1.29.0");
        Files.createDirectories(venv.resolve("bin"));
        Path python = fakeInterpreter("python", "exit 0");
        Files.move(python, venv.resolve("bin").resolve("python"));
        Files.writeString(venv.resolve(PythonRawLoop.COMPLETE),
                String.join("\n", PythonRawLoop.requirements("1.29.0")) + "\n");

        PythonRawLoop.Venv result = PythonRawLoop.prepare("/nonexistent/python3", dir.resolve("venvs"), "1.29.0");

        assertTrue(result.ready());
        assertTrue(result.reused());
        assertEquals(venv.resolve("bin").resolve("python").toAbsolutePath(), result.python());
    }

    @Test
    void aMissingInterpreterIsReportedAsTheFailedStep() {
        PythonRawLoop.Venv result = PythonRawLoop.prepare("/nonexistent/python3", dir.resolve("venvs"), "1.29.0");

        assertFalse(result.ready());
        assertNull(result.python());
        assertTrue(result.failure().contains("/nonexistent/python3 -m venv"), result.failure());
        assertTrue(result.failure().contains("could not start"), result.failure());
    }

    @Test
    void aFailedPipInstallIsReportedWithTheTailOfItsOutputAndLeavesNoCompleteVenv() throws IOException {
        // "python3 -m venv DIR" makes DIR/bin/python, whose "-m pip install ..." fails like pip does offline
        Path interpreter = fakeInterpreter("python3", """
                mkdir -p "$3/bin"
                printf '#!/bin/sh\\necho "ERROR: No matching distribution found for onnxruntime==9.9.9"\\nexit 1\\n' > "$3/bin/python"
                chmod +x "$3/bin/python"
                echo "venv made"
                """);

        PythonRawLoop.Venv result = PythonRawLoop.prepare(interpreter.toString(), dir.resolve("venvs"), "9.9.9");

        assertFalse(result.ready());
        assertTrue(result.failure().contains("-m pip install"), result.failure());
        assertTrue(result.failure().contains("exit status 1"), result.failure());
        assertTrue(result.failure().contains("No matching distribution found for onnxruntime==9.9.9"),
                result.failure());
        assertFalse(Files.exists(dir.resolve("venvs").resolve("onnxruntime-9.9.9").resolve(PythonRawLoop.COMPLETE)));
    }

    @Test
    void theScriptIsWrittenFromTheClassPath() throws IOException {
        Path script = PythonRawLoop.writeScript(dir);

        assertTrue(Files.readString(script).contains("def main():"));
    }
}
