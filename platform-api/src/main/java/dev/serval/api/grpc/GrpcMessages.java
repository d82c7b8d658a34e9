package dev.serval.api.grpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.DiscardUnknownFieldsParser;
import com.google.protobuf.Message;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import com.google.protobuf.WireFormat;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.http.RequestLimits;
import dev.serval.error.InvalidInput;
import io.grpc.MethodDescriptor;
import io.vertx.grpc.common.CodecException;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcServerRequest;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * How the gRPC service reads and writes its messages. Vert.x's adapter of a grpc-java method hands each message to
 * the generated marshaller as an {@code InputStream}, which copies it into a 4 KiB buffer of its own and copies every
 * {@code bytes} field out again (the raw tensor contents); a message that does not parse failed without a word (a
 * unary call was never answered). Here a message is parsed from its bytes, its {@code bytes} fields share them (they
 * are the call's own copy, kept by nobody else), and one that does not parse is a {@link CodecException} naming the
 * message type and what is wrong, which the service answers as INVALID_ARGUMENT. Answers are written from their
 * serialised bytes rather than through the marshaller's stream.
 *
 * <p>Parsing builds an object per entry of a repeated field or map: an empty {@code inputs} entry is 2 bytes on the
 * wire and an object of several dozen once parsed, so that 8 MiB of them would make hundreds of MiB, held while the
 * call waits, where the byte budget counts 8. So a {@code ModelInferRequest}'s counts are read off its wire bytes
 * first, without building anything, and bounded as {@link GrpcTensors} bounds them after parsing: inputs, outputs and
 * raw contents ({@code serval.http.max-tensors-per-request}), dimensions per shape ({@link RequestLimits#MAX_RANK}),
 * entries per {@code parameters} map ({@link #MAX_PARAMETERS}). Fields the proto does not name are dropped while
 * parsing rather than kept (protobuf keeps each in an object of its own).
 */
final class GrpcMessages {

    /** Entries one {@code parameters} map (of a request, an input or an output) may have. */
    static final int MAX_PARAMETERS = 64;

    private GrpcMessages() {
    }

    /** Checks a message's wire bytes before it is parsed. */
    @FunctionalInterface
    interface WireCheck {
        /** @throws InvalidInput naming what is over a limit */
        void check(byte[] payload) throws IOException;
    }

    /**
     * {@code method} (a generated protobuf method) as Vert.x serves it: requests read by {@link #decoder} (a
     * {@code ModelInferRequest}'s counts bounded by {@code limits} first), answers written with their serialised bytes.
     */
    @SuppressWarnings("unchecked")
    static <Q, R> ServiceMethod<Q, R> served(MethodDescriptor<Q, R> method, RequestLimits limits) {
        Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller<Q>) method.getRequestMarshaller())
                .getMessagePrototype();
        GrpcMessageEncoder<R> encoder = (GrpcMessageEncoder<R>) GrpcMessageEncoder.<MessageLite>encoder();
        WireCheck check = prototype instanceof ModelInferRequest ? payload -> inferCounts(payload, limits)
                : payload -> { };
        Parser<Message> parser = DiscardUnknownFieldsParser.wrap((Parser<Message>) prototype.getParserForType());
        return ServiceMethod.server(ServiceName.create(method.getServiceName()), method.getBareMethodName(), encoder,
                decoder((Parser<Q>) parser, prototype.getDescriptorForType().getFullName(), check));
    }

    /**
     * Parses a message of {@code type} from its bytes, once {@code check} passes, sharing them with its bytes fields.
     */
    static <T> GrpcMessageDecoder<T> decoder(Parser<T> parser, String type, WireCheck check) {
        return message -> {
            byte[] payload = message.payload().getBytes();
            try {
                check.check(payload);
                CodedInputStream input = CodedInputStream.newInstance(payload);
                input.enableAliasing(true);
                return parser.parseFrom(input);
            } catch (InvalidInput e) {
                throw new CodecException(e.getMessage(), e);
            } catch (IOException e) {
                throw new CodecException("the message is not a valid " + type + ": " + e.getMessage(), e);
            }
        };
    }

    // inference.ModelInferRequest's field numbers (grpc_predict_v2.proto)
    private static final int REQUEST_PARAMETERS = 4;
    private static final int REQUEST_INPUTS = 5;
    private static final int REQUEST_OUTPUTS = 6;
    private static final int REQUEST_RAW_INPUT_CONTENTS = 7;
    private static final int INPUT_SHAPE = 3;
    private static final int INPUT_PARAMETERS = 4;
    private static final int OUTPUT_PARAMETERS = 2;

    /**
     * Bounds a {@code ModelInferRequest}'s counts on its wire bytes, in one pass that builds nothing: a field of the
     * wrong wire type counts too (protobuf would keep it as an unknown field), and a malformed message is left to the
     * parser to name.
     *
     * @throws InvalidInput naming the count over its limit
     */
    static void inferCounts(byte[] payload, RequestLimits limits) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(payload);
        int inputs = 0;
        int outputs = 0;
        int raw = 0;
        int parameters = 0;
        for (int tag; (tag = in.readTag()) != 0; ) {
            switch (WireFormat.getTagFieldNumber(tag)) {
                case REQUEST_PARAMETERS -> parameters(++parameters, "parameters");
                case REQUEST_INPUTS -> {
                    limits.checkTensorCount(++inputs, "inputs", "inputs");
                    if (nested(in, tag)) {
                        input(in, inputs - 1);
                        continue;
                    }
                }
                case REQUEST_OUTPUTS -> {
                    limits.checkTensorCount(++outputs, "outputs", "outputs");
                    if (nested(in, tag)) {
                        output(in, outputs - 1);
                        continue;
                    }
                }
                case REQUEST_RAW_INPUT_CONTENTS -> limits.checkTensorCount(++raw, "raw_input_contents",
                        "raw_input_contents");
                default -> { }
            }
            in.skipField(tag);
        }
    }

    /** Whether {@code tag}'s field is length-delimited (a nested message, or a packed list, follows). */
    private static boolean nested(CodedInputStream in, int tag) {
        return WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
    }

    /** Reads a nested message's length and limits {@code in} to it; returns the old limit. */
    private static int enter(CodedInputStream in) throws IOException {
        return in.pushLimit(in.readRawVarint32());
    }

    private static void input(CodedInputStream in, int index) throws IOException {
        int outer = enter(in);
        int dimensions = 0;
        int parameters = 0;
        for (int tag; (tag = in.readTag()) != 0; ) {
            int field = WireFormat.getTagFieldNumber(tag);
            if (field == INPUT_SHAPE && nested(in, tag)) { // packed: count the varints
                int shape = enter(in);
                while (!in.isAtEnd()) {
                    in.readRawVarint64();
                    dimensions(++dimensions, index);
                }
                in.popLimit(shape);
                continue;
            }
            if (field == INPUT_SHAPE) {
                dimensions(++dimensions, index);
            } else if (field == INPUT_PARAMETERS) {
                parameters(++parameters, "inputs[" + index + "].parameters");
            }
            in.skipField(tag);
        }
        in.popLimit(outer);
    }

    private static void output(CodedInputStream in, int index) throws IOException {
        int outer = enter(in);
        int parameters = 0;
        for (int tag; (tag = in.readTag()) != 0; ) {
            if (WireFormat.getTagFieldNumber(tag) == OUTPUT_PARAMETERS) {
                parameters(++parameters, "outputs[" + index + "].parameters");
            }
            in.skipField(tag);
        }
        in.popLimit(outer);
    }

    private static void dimensions(int count, int input) {
        if (count > RequestLimits.MAX_RANK) {
            throw new InvalidInput("inputs[" + input + "].shape", "input " + input + " has a shape of more than "
                    + RequestLimits.MAX_RANK + " dimensions (" + count + " or more); at most " + RequestLimits.MAX_RANK
                    + " are allowed");
        }
    }

    private static void parameters(int count, String field) {
        if (count > MAX_PARAMETERS) {
            throw new InvalidInput(field, "'" + field + "' has more than " + MAX_PARAMETERS + " entries; at most "
                    + MAX_PARAMETERS + " parameters are allowed per map");
        }
    }

    /**
     * Calls {@code then} with a unary call's message once the client has sent all of it. When the client ended its
     * side but the message does not parse ({@link GrpcMessages} names what is wrong) or never came, the call is
     * INVALID_ARGUMENT; a call whose stream failed first (reset, connection closed) has nobody left to answer.
     */
    static <Q> void whenRead(GrpcServerRequest<Q, ?> call, Consumer<Q> then) {
        call.end().onSuccess(ended -> call.last().onComplete(read -> {
            if (read.succeeded()) {
                then.accept(read.result());
            } else {
                GrpcRefusals.fail(call.response(), new InvalidInput("message", read.cause() instanceof CodecException unreadable
                        ? unreadable.getMessage() : "the call ended without its request message"));
            }
        }));
    }
}
