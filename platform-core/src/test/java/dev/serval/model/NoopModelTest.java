package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.request.WholeRequestIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.List;
import org.junit.jupiter.api.Test;

class NoopModelTest {

    private static final Tensors MIXED = new Tensors(List.of(
            Tensor.of("x", new float[] {1.5f, -2f}, 2),
            new Tensor("flags", DataType.BOOL, new long[] {1, 3}, new boolean[] {true, false, true}),
            Tensor.of("text", new String[] {"hello"}, 1)));

    @Test
    void echoesTheRequestsTensorsUnderTheirOwnNames() throws Exception {
        try (NoopModel model = new NoopModel(); Predictor<Tensors, Tensors> predictor = model.newPredictor()) {
            List<Tensors> inputs = model.io().inputs(MIXED);
            Tensors answer = model.io().outputs(List.of(predictor.predict(inputs.getFirst())));
            assertSame(MIXED, answer);
            assertEquals(List.of("x", "flags", "text"), answer.tensors().stream().map(Tensor::name).toList());
        }
    }

    @Test
    void runsItsProbeAndAnswersItUnchanged() throws Exception {
        try (NoopModel model = new NoopModel(); Predictor<Tensors, Tensors> predictor = model.newPredictor()) {
            Tensors probe = model.probeInput();
            model.validate(probe, 0);
            assertEquals(DataType.FP32, probe.tensors().getFirst().datatype());
            assertSame(probe, predictor.predict(probe));
        }
    }

    @Test
    void acceptsAnyTensorsAndDeclaresNone() {
        try (NoopModel model = new NoopModel()) {
            model.validate(MIXED, 7);
            assertEquals("serval_noop", model.signature().platform());
            assertTrue(model.signature().inputs().isEmpty());
            assertTrue(model.signature().outputs().isEmpty());
            assertSame(WholeRequestIO.instance(), model.io());
            assertFalse(model.batching().batched());
        }
    }
}
