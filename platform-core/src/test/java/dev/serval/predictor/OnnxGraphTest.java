package dev.serval.predictor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OnnxGraphTest {

    @Test
    void readsTheOperatorsOfTheQuantisedDefaultModel() throws IOException {
        Path model = ModelFiles.extract(getClass().getClassLoader(), "all-minilm-l6-v2-q.onnx", Path.of("target", "models"));
        Set<String> operators = OnnxGraph.operatorTypes(model);
        assertTrue(operators.contains("DynamicQuantizeLinear"), operators.toString());
        assertTrue(operators.contains("MatMulInteger"), operators.toString());
    }

    @Test
    void readsTheOperatorsOfTheTinyFp32Encoder() throws IOException {
        Path model = Path.of("src", "test", "resources", "models", "tiny-fp32-encoder", "model.onnx");
        assertEquals(Set.of("Add", "Gather", "MatMul", "Mod", "Tanh"), OnnxGraph.operatorTypes(model));
    }

    @Test
    void refusesAFileThatIsNotAnOnnxModel() throws IOException {
        Path junk = Files.createTempFile("not-a-model", ".onnx");
        Files.write(junk, new byte[] {(byte) 0x3a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x0f, 1});
        assertThrows(IOException.class, () -> OnnxGraph.operatorTypes(junk));
    }
}
