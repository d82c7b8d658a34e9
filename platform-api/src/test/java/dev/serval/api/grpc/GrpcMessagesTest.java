package dev.serval.api.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.InferParameter;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.http.RequestLimits;
import io.vertx.core.buffer.Buffer;
import io.vertx.grpc.common.CodecException;
import io.vertx.grpc.common.GrpcMessage;
import io.vertx.grpc.common.GrpcMessageDecoder;
import org.junit.jupiter.api.Test;

/**
 * A ModelInferRequest's counts (inputs, outputs, raw contents, parameters, dimensions) are bounded on its wire bytes,
 * before protobuf builds an object per entry: an empty {@code inputs} entry is 2 bytes on the wire and an object of
 * several dozen once parsed, so an 8 MiB message of them parses into hundreds of MiB held while the call waits.
 */
class GrpcMessagesTest {

    private static final GrpcMessageDecoder<ModelInferRequest> INFER = GrpcMessages.served(
            GRPCInferenceServiceGrpc.getModelInferMethod(), RequestLimits.defaults()).decoder();

    /** {@code count} copies of a field of {@code tag} with an empty value: {@code tag, 0}. */
    private static byte[] empties(int tag, int count) {
        byte[] wire = new byte[2 * count];
        for (int i = 0; i < wire.length; i += 2) {
            wire[i] = (byte) tag;
        }
        return wire;
    }

    private static GrpcMessage message(byte[] payload) {
        return GrpcMessage.message("identity", Buffer.buffer(payload));
    }

    /** The suspicion of issue 37, measured: parsed, empty inputs take many times their wire size. */
    @Test
    void emptyInputsTakeManyTimesTheirWireSizeOnceParsed() throws InvalidProtocolBufferException {
        byte[] wire = empties(0x2a, 1 << 19); // inputs (field 5) {}, 1 MiB
        ModelInferRequest.parseFrom(new byte[] {0x2a, 0}); // warm
        long before = GrpcTensorsTest.allocated();
        ModelInferRequest parsed = ModelInferRequest.parseFrom(wire);
        long taken = GrpcTensorsTest.allocated() - before;
        assertEquals(1 << 19, parsed.getInputsCount());
        assertTrue(taken > 10L * wire.length, "parsing " + wire.length + " bytes allocated " + taken);
    }

    @Test
    void tooManyInputsAreRefusedBeforeTheyAreParsed() {
        byte[] wire = empties(0x2a, 4 << 20); // 8 MiB: 4,194,304 empty inputs
        GrpcMessage message = message(wire);
        INFER.decode(message(new byte[] {0x2a, 0})); // warm
        long before = GrpcTensorsTest.allocated();
        CodecException refused = assertThrows(CodecException.class, () -> INFER.decode(message));
        long taken = GrpcTensorsTest.allocated() - before;
        assertTrue(refused.getMessage().contains("serval.http.max-tensors-per-request"), refused.getMessage());
        // Its bytes are copied once (the call's own copy); nothing is built from them.
        assertTrue(taken < 2L * wire.length, "decoding " + wire.length + " bytes allocated " + taken);
    }

    @Test
    void tooManyOutputsRawContentsParametersOrDimensionsAreRefusedNamingTheLimit() {
        assertTrue(refusal(empties(0x32, 65)).contains("serval.http.max-tensors-per-request"), "outputs");
        assertTrue(refusal(empties(0x3a, 65)).contains("serval.http.max-tensors-per-request"), "raw contents");
        assertTrue(refusal(empties(0x22, 65)).contains("parameters"), "parameters");
        ModelInferRequest.InferInputTensor.Builder deep = ModelInferRequest.InferInputTensor.newBuilder().setName("x");
        for (int d = 0; d < 33; d++) {
            deep.addShape(1);
        }
        assertTrue(refusal(ModelInferRequest.newBuilder().addInputs(deep).build().toByteArray()).contains("33"),
                "rank");
        ModelInferRequest.InferInputTensor.Builder parameters = ModelInferRequest.InferInputTensor.newBuilder();
        for (int p = 0; p < 65; p++) {
            parameters.putParameters("p" + p, InferParameter.newBuilder().setBoolParam(true).build());
        }
        assertTrue(refusal(ModelInferRequest.newBuilder().addInputs(parameters).build().toByteArray())
                .contains("parameters"), "an input's parameters");
        ModelInferRequest.InferRequestedOutputTensor.Builder output = ModelInferRequest.InferRequestedOutputTensor
                .newBuilder();
        for (int p = 0; p < 65; p++) {
            output.putParameters("p" + p, InferParameter.newBuilder().setBoolParam(true).build());
        }
        assertTrue(refusal(ModelInferRequest.newBuilder().addOutputs(output).build().toByteArray())
                .contains("parameters"), "an output's parameters");
    }

    @Test
    void requestsWithinTheLimitsParseAsBefore() {
        ModelInferRequest.Builder request = ModelInferRequest.newBuilder().setModelName("m").setId("i")
                .putParameters("timeout", InferParameter.newBuilder().setInt64Param(5).build());
        for (int i = 0; i < 64; i++) {
            request.addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("x" + i).setDatatype("FP32")
                    .addShape(1).addShape(4)).addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder()
                    .setName("y" + i));
        }
        assertEquals(request.build(), INFER.decode(message(request.build().toByteArray())));
    }

    private static String refusal(byte[] wire) {
        return assertThrows(CodecException.class, () -> INFER.decode(message(wire))).getMessage();
    }
}
