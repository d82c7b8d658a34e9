package dev.serval.api.http;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.grpc.MethodDescriptor;
import io.vertx.grpc.common.CodecException;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;

/**
 * How the gRPC service reads and writes its messages. Vert.x's adapter of a grpc-java method hands each message to
 * the generated marshaller as an {@code InputStream}, which copies it into a 4 KiB buffer of its own and copies every
 * {@code bytes} field out again (the raw tensor contents); a message that does not parse failed without a word (a
 * unary call was never answered). Here a message is parsed from its bytes, its {@code bytes} fields share them (they
 * are the call's own copy, kept by nobody else), and one that does not parse is a {@link CodecException} naming the
 * message type and what is wrong, which the service answers as INVALID_ARGUMENT. Answers are written from their
 * serialised bytes rather than through the marshaller's stream.
 */
final class GrpcMessages {

    private GrpcMessages() {
    }

    /**
     * {@code method} (a generated protobuf method) as Vert.x serves it: requests read by {@link #decoder}, answers
     * written with their serialised bytes.
     */
    @SuppressWarnings("unchecked")
    static <Q, R> ServiceMethod<Q, R> served(MethodDescriptor<Q, R> method) {
        Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller<Q>) method.getRequestMarshaller())
                .getMessagePrototype();
        GrpcMessageEncoder<R> encoder = (GrpcMessageEncoder<R>) GrpcMessageEncoder.<MessageLite>encoder();
        return ServiceMethod.server(ServiceName.create(method.getServiceName()), method.getBareMethodName(), encoder,
                decoder((Parser<Q>) prototype.getParserForType(), prototype.getDescriptorForType().getFullName()));
    }

    /** Parses a message of {@code type} from its bytes, sharing them with its {@code bytes} fields. */
    static <T> GrpcMessageDecoder<T> decoder(Parser<T> parser, String type) {
        return message -> {
            try {
                CodedInputStream input = CodedInputStream.newInstance(message.payload().getBytes());
                input.enableAliasing(true);
                return parser.parseFrom(input);
            } catch (InvalidProtocolBufferException e) {
                throw new CodecException("the message is not a valid " + type + ": " + e.getMessage(), e);
            }
        };
    }
}
