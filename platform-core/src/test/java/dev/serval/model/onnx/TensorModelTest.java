package dev.serval.model.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.model.TinyModels;
import dev.serval.request.WholeRequestIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The tensor kind on the tiny MLP and the one-input-per-datatype model of {@code scripts/make_tiny_models.py}. */
class TensorModelTest {

    private static TensorModel mlp;
    private static TensorModel dtypes;

    @BeforeAll
    static void load() throws Exception {
        mlp = TensorModel.load(TinyModels.file("tiny-mlp", "model.onnx"), OnnxOptions.none(), LoadOptions.defaults());
        dtypes = TensorModel.load(TinyModels.file("tiny-dtypes", "model.onnx"), OnnxOptions.none(), LoadOptions.defaults());
    }

    @AfterAll
    static void close() {
        mlp.close();
        dtypes.close();
    }

    @Test
    void theMlpGivesWhatNumpyComputes() throws Exception {
        JsonNode expected = TinyModels.expected("tiny-mlp");
        float[] input = flatten(expected.get("input"));
        float[] output = flatten(expected.get("output"));
        Tensors request = new Tensors(List.of(Tensor.of("input", input, 3, 4)));
        mlp.validate(request, 0);
        try (Predictor<Tensors, Tensors> predictor = mlp.newPredictor()) {
            Tensors answer = predictor.predict(request);
            assertEquals(1, answer.size());
            Tensor result = answer.get("output").orElseThrow();
            assertEquals(DataType.FP32, result.datatype());
            assertArrayEquals(new long[] {3, 2}, result.shape());
            assertArrayEquals(output, (float[]) result.data(), 1e-5f);
        }
    }

    @Test
    void sessionOptionsThatChangeNothingNumericallyGiveTheSameAnswer() throws Exception {
        JsonNode expected = TinyModels.expected("tiny-mlp");
        Tensors request = new Tensors(List.of(Tensor.of("input", flatten(expected.get("input")), 3, 4)));
        OnnxOptions engine = OnnxOptions.of(Map.of("optLevel", "BASIC_OPT", "executionMode", "PARALLEL",
                "interOpNumThreads", "2", "cpuArenaAllocator", "true"));
        try (TensorModel model = TensorModel.load(TinyModels.file("tiny-mlp", "model.onnx"), engine, LoadOptions.defaults());
                Predictor<Tensors, Tensors> predictor = model.newPredictor();
                Predictor<Tensors, Tensors> plain = mlp.newPredictor()) {
            assertEquals(mlp.signature(), model.signature());
            float[] answer = (float[]) predictor.predict(request).get("output").orElseThrow().data();
            assertArrayEquals((float[]) plain.predict(request).get("output").orElseThrow().data(), answer, 1e-6f);
            assertArrayEquals(flatten(expected.get("output")), answer, 1e-5f);
        }
    }

    @Test
    void aDynamicDimensionTakesAnySize() throws Exception {
        try (Predictor<Tensors, Tensors> predictor = mlp.newPredictor()) {
            for (int rows : new int[] {1, 5}) {
                Tensors request = new Tensors(List.of(Tensor.of("input", new float[rows * 4], rows, 4)));
                mlp.validate(request, 0);
                assertArrayEquals(new long[] {rows, 2}, predictor.predict(request).get("output").orElseThrow().shape());
            }
        }
    }

    @Test
    void theSignatureIsReadFromTheGraph() {
        assertEquals(new ModelSignature("onnxruntime_onnx",
                        List.of(new TensorSignature("input", "FP32", List.of(-1L, 4L))),
                        List.of(new TensorSignature("output", "FP32", List.of(-1L, 2L)))),
                mlp.signature());
        assertEquals(new ModelSignature("onnxruntime_onnx",
                        List.of(new TensorSignature("a", "FP64", List.of(-1L)), new TensorSignature("b", "INT32", List.of(-1L)),
                                new TensorSignature("c", "INT64", List.of(-1L)), new TensorSignature("d", "BOOL", List.of(-1L))),
                        List.of(new TensorSignature("a_out", "FP64", List.of(-1L)),
                                new TensorSignature("b_out", "INT32", List.of(-1L)),
                                new TensorSignature("c_out", "INT64", List.of(-1L)),
                                new TensorSignature("d_out", "BOOL", List.of(-1L)),
                                new TensorSignature("total", "FP64", List.of(-1L)))),
                dtypes.signature());
    }

    @Test
    void everyDatatypeRoundTrips() throws Exception {
        JsonNode expected = TinyModels.expected("tiny-dtypes");
        Tensors request = dtypesRequest(expected.get("inputs"));
        dtypes.validate(request, 0);
        JsonNode outputs = expected.get("outputs");
        try (Predictor<Tensors, Tensors> predictor = dtypes.newPredictor()) {
            Tensors answer = predictor.predict(request);
            assertEquals(List.of("a_out", "b_out", "c_out", "d_out", "total"),
                    answer.tensors().stream().map(Tensor::name).toList(), "every output, in graph order");
            assertEquals(new Tensor("a_out", DataType.FP64, new long[] {3}, doubles(outputs.get("a_out"))),
                    answer.get("a_out").orElseThrow());
            assertEquals(new Tensor("b_out", DataType.INT32, new long[] {3}, ints(outputs.get("b_out"))),
                    answer.get("b_out").orElseThrow());
            assertEquals(new Tensor("c_out", DataType.INT64, new long[] {3}, longs(outputs.get("c_out"))),
                    answer.get("c_out").orElseThrow());
            assertEquals(new Tensor("d_out", DataType.BOOL, new long[] {3}, booleans(outputs.get("d_out"))),
                    answer.get("d_out").orElseThrow());
            assertEquals(new Tensor("total", DataType.FP64, new long[] {3}, doubles(outputs.get("total"))),
                    answer.get("total").orElseThrow());
        }
    }

    @Test
    void refusesAnUnknownInput() {
        Tensors request = new Tensors(List.of(Tensor.of("input", new float[4], 1, 4), Tensor.of("extra", new float[1], 1)));
        assertRefused(() -> mlp.validate(request, 0), "inputs[1].name", "unknown input 'extra'; this model takes 'input'");
    }

    @Test
    void refusesAMissingInput() {
        JsonNode inputs = TinyModels.expected("tiny-dtypes").get("inputs");
        List<Tensor> tensors = new ArrayList<>(dtypesRequest(inputs).tensors());
        tensors.remove(2);
        assertRefused(() -> dtypes.validate(new Tensors(tensors), 0), "inputs",
                "missing input 'c'; this model takes 'a', 'b', 'c', 'd'");
    }

    @Test
    void refusesAnotherDatatype() {
        Tensors request = new Tensors(List.of(new Tensor("input", DataType.FP64, new long[] {1, 4}, new double[4])));
        assertRefused(() -> mlp.validate(request, 0), "inputs[0].datatype",
                "input 'input' has datatype FP64; this model takes FP32");
    }

    @Test
    void refusesAnotherRank() {
        Tensors request = new Tensors(List.of(Tensor.of("input", new float[4], 4)));
        assertRefused(() -> mlp.validate(request, 0), "inputs[0].shape",
                "input 'input' has shape [4] (1 dimension); this model takes [-1, 4] (2 dimensions)");
    }

    @Test
    void refusesAnotherSizeOfAFixedDimension() {
        Tensors request = new Tensors(List.of(Tensor.of("input", new float[6], 2, 3)));
        assertRefused(() -> mlp.validate(request, 0), "inputs[0].shape",
                "input 'input' has shape [2, 3]; dimension 1 must be 4 (this model takes [-1, 4])");
    }

    @Test
    void refusesDifferentSizesForOneSymbolicDimension() {
        JsonNode inputs = TinyModels.expected("tiny-dtypes").get("inputs");
        List<Tensor> tensors = new ArrayList<>(dtypesRequest(inputs).tensors());
        tensors.set(1, new Tensor("b", DataType.INT32, new long[] {2}, new int[] {1, 2}));
        assertRefused(() -> dtypes.validate(new Tensors(tensors), 0), "inputs[1].shape",
                "input 'b' has shape [2]; dimension 0 ('n') is 2 but 3 in input 'a'");
    }

    @Test
    void runsItsProbeAloneThroughTheWholeRequestMapping() throws Exception {
        assertSame(WholeRequestIO.instance(), mlp.io());
        assertFalse(mlp.batching().batched());
        assertEquals("a tensor request runs as one inference", mlp.batching().reason());
        Tensors probe = dtypes.probeInput();
        dtypes.validate(probe, 0);
        try (Predictor<Tensors, Tensors> predictor = dtypes.newPredictor()) {
            Tensor notFalse = predictor.predict(probe).get("d_out").orElseThrow();
            assertArrayEquals(new boolean[] {true}, (boolean[]) notFalse.data());
        }
    }

    @Test
    void refusesAGraphWithADatatypeSerValDoesNotCarry() {
        IOException error = assertThrows(IOException.class,
                () -> TensorModel.load(TinyModels.file("tiny-uint8", "model.onnx"), OnnxOptions.none(), LoadOptions.defaults()));
        assertTrue(error.getMessage().endsWith(
                "input 'x' is UINT8; the tensor kind carries FLOAT, DOUBLE, INT32, INT64 and BOOL"), error.getMessage());
    }

    private static void assertRefused(Executable validation, String field, String message) {
        InvalidInput error = assertThrows(InvalidInput.class, validation);
        assertEquals(message, error.getMessage());
        assertEquals(field, error.field());
    }

    private static Tensors dtypesRequest(JsonNode inputs) {
        return new Tensors(List.of(
                new Tensor("a", DataType.FP64, new long[] {3}, doubles(inputs.get("a"))),
                new Tensor("b", DataType.INT32, new long[] {3}, ints(inputs.get("b"))),
                new Tensor("c", DataType.INT64, new long[] {3}, longs(inputs.get("c"))),
                new Tensor("d", DataType.BOOL, new long[] {3}, booleans(inputs.get("d")))));
    }

    private static float[] flatten(JsonNode rows) {
        List<Float> values = new ArrayList<>();
        rows.forEach(row -> row.forEach(value -> values.add((float) value.asDouble())));
        float[] flat = new float[values.size()];
        for (int i = 0; i < flat.length; i++) {
            flat[i] = values.get(i);
        }
        return flat;
    }

    private static double[] doubles(JsonNode array) {
        double[] values = new double[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asDouble();
        }
        return values;
    }

    private static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asInt();
        }
        return values;
    }

    private static long[] longs(JsonNode array) {
        long[] values = new long[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asLong();
        }
        return values;
    }

    private static boolean[] booleans(JsonNode array) {
        boolean[] values = new boolean[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asBoolean();
        }
        return values;
    }

    /**
     * An input the graph's signature takes but one of its nodes cannot run (5 values reshaped to [4]): ONNX Runtime's
     * refusal is the client's error, an {@link InvalidInput} naming what ONNX Runtime said, not a model failure that
     * would count against the replica's health.
     */
    @Test
    void anInputOnlyANodeOfTheGraphRefusesIsInvalidInputNotAModelFailure() throws Exception {
        try (TensorModel reshape = TensorModel.load(TinyModels.file("tiny-reshape", "model.onnx"), OnnxOptions.none(), LoadOptions.defaults());
                Predictor<Tensors, Tensors> predictor = reshape.newPredictor()) {
            Tensors fits = reshapeRequest(new float[] {1, 2, 3, 4}, 4);
            reshape.validate(fits, 0);
            assertArrayEquals(new long[] {4}, predictor.predict(fits).get("y").orElseThrow().shape());

            Tensors five = reshapeRequest(new float[] {1, 2, 3, 4, 5}, 4);
            reshape.validate(five, 0); // the signature ([batch, n] and [rank]) takes it
            InvalidInput refused = assertThrows(InvalidInput.class, () -> predictor.predict(five));
            assertTrue(refused.getMessage().startsWith("the model cannot run this input: "), refused.getMessage());
            assertTrue(refused.getMessage().contains("Reshape"), refused.getMessage());

            assertArrayEquals(new long[] {4}, predictor.predict(fits).get("y").orElseThrow().shape(),
                    "the predictor still serves");
        }
    }

    private static Tensors reshapeRequest(float[] values, long... target) {
        return new Tensors(List.of(Tensor.of("x", values, 1, values.length),
                new Tensor("shape", DataType.INT64, new long[] {target.length}, target.clone())));
    }
}
