package dev.serval.model.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.ModelFiles;
import dev.serval.model.TinyModels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    void readsTheDeclaredInputsAndOutputsWithTheirTypesAndShapes() throws IOException {
        OnnxGraph.Interface graph = OnnxGraph.inputsAndOutputs(TinyModels.file("tiny-mlp", "model.onnx"));
        assertEquals(List.of(new OnnxGraph.Value("input", OnnxGraph.FLOAT, List.of(-1L, 4L), List.of("batch", ""), true)),
                graph.inputs());
        assertEquals(List.of(new OnnxGraph.Value("output", OnnxGraph.FLOAT, List.of(-1L, 2L), List.of("batch", ""), true)),
                graph.outputs());
        OnnxGraph.Interface dtypes = OnnxGraph.inputsAndOutputs(TinyModels.file("tiny-dtypes", "model.onnx"));
        assertEquals(List.of(OnnxGraph.DOUBLE, OnnxGraph.INT32, OnnxGraph.INT64, OnnxGraph.BOOL),
                dtypes.inputs().stream().map(OnnxGraph.Value::elementType).toList());
    }

    @Test
    void leavesOutInputsThatAreInitializers() throws IOException {
        OnnxGraph.Interface graph = OnnxGraph.inputsAndOutputs(TinyModels.file("tiny-uint8", "model.onnx"));
        assertEquals(List.of("x"), graph.inputs().stream().map(OnnxGraph.Value::name).toList());
        assertEquals("UINT8", graph.inputs().getFirst().elementTypeName());
    }

    @Test
    void refusesAFileThatIsNotAnOnnxModel() throws IOException {
        Path junk = Files.createTempFile("not-a-model", ".onnx");
        Files.write(junk, new byte[] {(byte) 0x3a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x0f, 1});
        assertThrows(IOException.class, () -> OnnxGraph.operatorTypes(junk));
        assertThrows(IOException.class, () -> OnnxGraph.inputsAndOutputs(junk));
    }
}
