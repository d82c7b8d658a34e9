package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.InferParameter;
import dev.serval.api.grpc.v2.InferTensorContents;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import dev.serval.api.grpc.v2.ModelMetadataRequest;
import dev.serval.api.grpc.v2.ModelMetadataResponse;
import dev.serval.api.grpc.v2.ModelReadyRequest;
import dev.serval.api.grpc.v2.RepositoryIndexRequest;
import dev.serval.api.grpc.v2.RepositoryIndexResponse;
import dev.serval.api.grpc.v2.RepositoryModelLoadRequest;
import dev.serval.api.grpc.v2.RepositoryModelUnloadRequest;
import dev.serval.api.grpc.v2.ServerLiveRequest;
import dev.serval.api.grpc.v2.ServerMetadataRequest;
import dev.serval.api.grpc.v2.ServerReadyRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Open Inference Protocol's gRPC service on the HTTP port, driven by a real grpc-java client over h2c: every RPC,
 * both tensor encodings, the REST limits, status codes for each refusal, deadlines and cancellation, the repository
 * extension behind the token, and {@code api="grpc"} meters.
 */
@QuarkusTest
@TestProfile(CompositionProfile.class)
class GrpcTest {

    private static final float[] INPUT = {0.5f, -1.0f, 2.0f, 0.25f};

    @TestHTTPResource("/")
    URL base;

    private ManagedChannel channel;
    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub;

    @BeforeEach
    void connect() {
        Serving.awaitReady();
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext().build();
        stub = GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private static ModelInferRequest.InferInputTensor.Builder input(String name, String datatype, long... shape) {
        ModelInferRequest.InferInputTensor.Builder input = ModelInferRequest.InferInputTensor.newBuilder()
                .setName(name).setDatatype(datatype);
        for (long dim : shape) {
            input.addShape(dim);
        }
        return input;
    }

    private static ModelInferRequest typedMlp() {
        InferTensorContents.Builder contents = InferTensorContents.newBuilder();
        for (float value : INPUT) {
            contents.addFp32Contents(value);
        }
        return ModelInferRequest.newBuilder().setModelName("mlp").setId("req-1")
                .addInputs(input("input", "FP32", 1, 4).setContents(contents)).build();
    }

    private static float[] restMlp() {
        return Serving.floats(given().contentType("application/json").body("{\"inputs\":[{\"name\":\"input\","
                + "\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[0.5,-1.0,2.0,0.25]}]}")
                .post("/v2/models/mlp/infer").then().statusCode(200).extract().jsonPath()
                .<Number>getList("outputs[0].data"));
    }

    private static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    /**
     * More calls than a connection may have streams open at once (quarkus.http.limits.max-concurrent-streams, 128),
     * one after another on one channel: each call's end frees its stream, so none is ever refused. (The count of open
     * streams once missed the ends of gRPC calls, and every call past the 128th was refused.)
     */
    @Test
    void callsOneAfterAnotherOnOneConnectionAreNeverRefusedForStreams() {
        for (int i = 0; i < 300; i++) {
            assertTrue(stub.serverLive(ServerLiveRequest.getDefaultInstance()).getLive(), "call " + i);
            stub.modelInfer(typedMlp());
        }
    }

    @Test
    void serverAndModelMetadataAndHealth() {
        assertTrue(stub.serverLive(ServerLiveRequest.getDefaultInstance()).getLive());
        assertTrue(stub.serverReady(ServerReadyRequest.getDefaultInstance()).getReady());
        assertEquals("serval", stub.serverMetadata(ServerMetadataRequest.getDefaultInstance()).getName());
        assertTrue(stub.modelReady(ModelReadyRequest.newBuilder().setName("mlp").build()).getReady());

        ModelMetadataResponse mlp = stub.modelMetadata(ModelMetadataRequest.newBuilder().setName("mlp").build());

        assertEquals("input", mlp.getInputs(0).getName());
        assertEquals("FP32", mlp.getInputs(0).getDatatype());
        assertEquals(List.of(-1L, 4L), mlp.getInputs(0).getShapeList());
        assertEquals(List.of("1"), mlp.getVersionsList());
        assertEquals(Status.Code.NOT_FOUND, code(() -> stub.modelMetadata(ModelMetadataRequest.newBuilder()
                .setName("nope").build())));
        assertEquals(Status.Code.NOT_FOUND, code(() -> stub.modelReady(ModelReadyRequest.newBuilder()
                .setName("nope").build())));
    }

    @Test
    void inferenceWithTypedAndRawContentsAnswersAsRestDoes() {
        float[] rest = restMlp();

        ModelInferResponse typed = stub.modelInfer(typedMlp());

        assertEquals("mlp", typed.getModelName());
        assertEquals("1", typed.getModelVersion());
        assertEquals("req-1", typed.getId());
        assertEquals(List.of(1L, 2L), typed.getOutputs(0).getShapeList());
        assertEquals(rest[0], typed.getOutputs(0).getContents().getFp32Contents(0), 1e-6);
        assertEquals(rest[1], typed.getOutputs(0).getContents().getFp32Contents(1), 1e-6);

        ByteBuffer raw = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        for (float value : INPUT) {
            raw.putFloat(value);
        }
        ModelInferResponse binary = stub.modelInfer(ModelInferRequest.newBuilder().setModelName("mlp")
                .addInputs(input("input", "FP32", 1, 4)).addRawInputContents(ByteString.copyFrom(raw.array()))
                .build());

        assertEquals(1, binary.getRawOutputContentsCount(), "raw in, raw out");
        ByteBuffer answer = binary.getRawOutputContents(0).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        assertArrayEquals(rest, new float[] {answer.getFloat(), answer.getFloat()}, 1e-6f);

        // Text as raw BYTES (4-byte little-endian lengths), to the default MiniLM.
        byte[] text = "hello grpc".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer texts = ByteBuffer.allocate(4 + text.length).order(ByteOrder.LITTLE_ENDIAN).putInt(text.length)
                .put(text);
        ModelInferResponse embedded = stub.modelInfer(ModelInferRequest.newBuilder().setModelName(Serving.MODEL)
                .addInputs(input("text", "BYTES", 1)).addRawInputContents(ByteString.copyFrom(texts.array())).build());
        assertEquals(List.of(1L, 384L), embedded.getOutputs(0).getShapeList());
        assertEquals(384 * 4, embedded.getRawOutputContents(0).size());

        String metrics = given().get("/q/metrics").asString();
        assertTrue(metrics.contains("serval_requests_total{api=\"grpc\",deployment=\"mlp\",outcome=\"ok\"}"), "meters");
    }

    @Test
    void hostileAndWrongRequestsAreInvalidArgumentsNamingTheProblem() {
        assertEquals(Status.Code.NOT_FOUND, code(() -> stub.modelInfer(typedMlp().toBuilder().setModelName("nope")
                .build())));
        StatusRuntimeException shape = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                ModelInferRequest.newBuilder().setModelName("mlp").addInputs(input("input", "FP32",
                        1 << 20, 1 << 20, 1 << 20)).addRawInputContents(ByteString.copyFrom(new byte[16])).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, shape.getStatus().getCode());
        assertTrue(shape.getStatus().getDescription().contains("max-tensor-elements"), shape.getStatus().toString());
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> stub.modelInfer(ModelInferRequest.newBuilder()
                .setModelName("mlp").addInputs(input("input", "FP32", 1, 4))
                .addRawInputContents(ByteString.copyFrom(new byte[15])).build())));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> stub.modelInfer(ModelInferRequest.newBuilder()
                .setModelName("mlp").addInputs(input("input", "FP16", 1, 4)).build())));
        StatusRuntimeException count = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                ModelInferRequest.newBuilder().setModelName(Serving.MODEL).addInputs(input("text", "BYTES", 1))
                        .addRawInputContents(ByteString.copyFrom(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff,
                                0x7f})).build()));
        assertTrue(count.getStatus().getDescription().contains("declares 2147483647 bytes"),
                count.getStatus().toString());
        ModelInferRequest.Builder many = ModelInferRequest.newBuilder().setModelName("mlp");
        for (int i = 0; i < 65; i++) {
            many.addInputs(input("x" + i, "FP32", 0));
        }
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> stub.modelInfer(many.build())));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> stub.modelInfer(typedMlp().toBuilder()
                .addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder().setName("nope")).build())));
        // A message over serval.http.max-body-size (8 MiB) is refused before it is parsed.
        StatusRuntimeException huge = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                ModelInferRequest.newBuilder().setModelName("mlp").addInputs(input("input", "FP32", 1, 4))
                        .addRawInputContents(ByteString.copyFrom(new byte[9 << 20])).build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, huge.getStatus().getCode(), huge.getStatus().toString());
        assertTrue(huge.getStatus().getDescription().contains("serval.http.max-body-size"), huge.getStatus().toString());
        // Triton's per-request timeout (parameters["timeout"], microseconds) must be a non-negative integer.
        StatusRuntimeException negative = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(typedMlp()
                .toBuilder().putParameters("timeout", InferParameter.newBuilder().setInt64Param(-5).build()).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, negative.getStatus().getCode());
        assertTrue(negative.getStatus().getDescription().contains("parameters.timeout"), negative.getStatus().toString());
        StatusRuntimeException text = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(typedMlp()
                .toBuilder().putParameters("timeout", InferParameter.newBuilder().setStringParam("soon").build())
                .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, text.getStatus().getCode());
        assertTrue(text.getStatus().getDescription().contains("parameters.timeout"), text.getStatus().toString());
        assertEquals(2, stub.modelInfer(typedMlp().toBuilder().putParameters("timeout", InferParameter.newBuilder()
                        .setUint64Param(-1L).build()).build()).getOutputs(0).getContents().getFp32ContentsCount(),
                "a uint64 timeout of 2^64 - 1 microseconds is no limit, not a negative one");
        assertEquals(2, stub.modelInfer(typedMlp()).getOutputs(0).getContents().getFp32ContentsCount(),
                "the server goes on serving");
        given().get("/v2/health/live").then().statusCode(200);
    }

    /** Bytes as they are: a call's message sent and read without protobuf. */
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static MethodDescriptor<byte[], byte[]> raw(String method, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type).setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES).setFullMethodName("inference.GRPCInferenceService/" + method).build();
    }

    /** How a call of {@code method} ends when the client sends {@code messages} (any bytes) and half-closes. */
    private Status rawCall(String method, byte[]... messages) throws Exception {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<byte[], byte[]> call = channel.newCall(raw(method, MethodDescriptor.MethodType.UNARY),
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        for (byte[] message : messages) {
            call.sendMessage(message);
        }
        call.halfClose();
        return closed.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aMessageThatDoesNotParseOrNeverComesIsAnInvalidArgumentNotAHang() throws Exception {
        // model_name (field 1, length-delimited) declared 100 bytes long, 3 sent: the message ends inside a field.
        byte[] truncated = {0x0a, 100, 'm', 'l', 'p'};
        Status status = rawCall("ModelInfer", truncated);
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status.toString());
        assertTrue(status.getDescription().contains("inference.ModelInferRequest"), status.toString());
        // A field number 0 and a wire type 7 exist in no protobuf message.
        status = rawCall("ModelInfer", new byte[] {0x07, 0x01});
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status.toString());
        status = rawCall("ModelInfer");
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status.toString());
        assertTrue(status.getDescription().contains("without"), status.toString());
        status = rawCall("ServerLive", truncated);
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status.toString());
        assertTrue(status.getDescription().contains("inference.ServerLiveRequest"), status.toString());
        status = rawCall("RepositoryIndex", truncated);
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode(), status.toString());

        // In a stream, a message that does not parse is answered inline and the stream goes on.
        List<byte[]> answers = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<byte[], byte[]> stream = channel.newCall(raw("ModelStreamInfer",
                MethodDescriptor.MethodType.BIDI_STREAMING), CallOptions.DEFAULT.withDeadlineAfter(20,
                        TimeUnit.SECONDS));
        stream.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                answers.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        stream.request(10);
        stream.sendMessage(truncated);
        stream.sendMessage(typedMlp().toBuilder().setId("good").build().toByteArray());
        stream.halfClose();
        assertEquals(Status.Code.OK, closed.get(30, TimeUnit.SECONDS).getCode());
        assertEquals(2, answers.size());
        List<dev.serval.api.grpc.v2.ModelStreamInferResponse> parsed = new java.util.ArrayList<>();
        for (byte[] answer : answers) {
            parsed.add(dev.serval.api.grpc.v2.ModelStreamInferResponse.parseFrom(answer));
        }
        assertTrue(parsed.stream().anyMatch(answer -> answer.getErrorMessage().startsWith("[INVALID_ARGUMENT]")
                && answer.getErrorMessage().contains("inference.ModelInferRequest")), parsed.toString());
        assertTrue(parsed.stream().anyMatch(answer -> answer.getErrorMessage().isEmpty()
                && answer.getInferResponse().getId().equals("good")), parsed.toString());

        assertEquals(2, stub.modelInfer(typedMlp()).getOutputs(0).getContents().getFp32ContentsCount(),
                "the server goes on serving");
    }

    /**
     * A compressed message's size says nothing of what it inflates to: 32 MiB of zeros (four times
     * serval.http.max-body-size) gzip to 32 KiB, and the gRPC layer would inflate every such message whole before
     * anything could check it. Compressed messages are refused, UNIMPLEMENTED as the gRPC spec has it for an encoding
     * the server does not take, before they are inflated.
     */
    @Test
    void aCompressedMessageIsRefusedBeforeItIsInflated() {
        ModelInferRequest bomb = ModelInferRequest.newBuilder().setModelName("mlp").addInputs(input("input", "FP32",
                1, 8 << 20)).addRawInputContents(ByteString.copyFrom(new byte[32 << 20])).build();
        StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
                () -> stub.withCompression("gzip").modelInfer(bomb));
        assertEquals(Status.Code.UNIMPLEMENTED, refused.getStatus().getCode(), refused.getStatus().toString());
        assertTrue(refused.getStatus().getDescription().contains("compressed"), refused.getStatus().toString());
        StatusRuntimeException small = assertThrows(StatusRuntimeException.class,
                () -> stub.withCompression("gzip").modelInfer(typedMlp()));
        assertEquals(Status.Code.UNIMPLEMENTED, small.getStatus().getCode(), small.getStatus().toString());
        assertEquals(2, stub.modelInfer(typedMlp()).getOutputs(0).getContents().getFp32ContentsCount(),
                "uncompressed calls are served");
    }

    /**
     * A client that sends on a stream and never reads the answers must not make the server hold them all: once the
     * answers it could not send fill the stream's write queue, the server stops reading the stream (HTTP/2 flow
     * control then holds the client back). Without that, the server read all 200,000 requests here and queued their
     * answers in memory.
     */
    @Test
    void aStreamWhoseClientReadsNoAnswerIsNoLongerRead() throws Exception {
        java.util.concurrent.Semaphore ready = new java.util.concurrent.Semaphore(0);
        ClientCall<byte[], byte[]> stream = channel.newCall(raw("ModelStreamInfer",
                MethodDescriptor.MethodType.BIDI_STREAMING), CallOptions.DEFAULT.withDeadlineAfter(120,
                        TimeUnit.SECONDS));
        stream.start(new ClientCall.Listener<>() {
            @Override
            public void onReady() {
                ready.release();
            }
        }, new Metadata()); // and never request(): no answer is read
        byte[] request = ModelInferRequest.newBuilder().setModelName("nope").setId("unread").build().toByteArray();
        int sent = 0;
        try {
            while (sent < 200_000) {
                if (stream.isReady()) {
                    stream.sendMessage(request);
                    sent++;
                } else if (!ready.tryAcquire(3, TimeUnit.SECONDS)) {
                    break; // the server stopped reading
                }
            }
        } finally {
            stream.cancel("done", null);
        }
        assertTrue(sent < 200_000, "the server read all " + sent + " requests of a client that reads no answer");
        assertEquals(2, stub.modelInfer(typedMlp()).getOutputs(0).getContents().getFp32ContentsCount(),
                "the server goes on serving");
    }

    @Test
    void aFullQueueIsResourceExhaustedWithRetryInfoAndTheDeadlineEndsTheStep() throws Exception {
        ManagementAdmin.put("jam", "{\"model\":\"hangs\",\"max_ongoing_requests\":1,\"max_queued_requests\":0,"
                + "\"predictor_threads\":1,\"graceful_shutdown_timeout\":\"1s\"}");
        // A long request_timeout: the cancel below must end its call, not the deployment's deadline.
        ManagementAdmin.put("patient", "{\"model\":\"patient\",\"request_timeout\":\"120s\"}");
        ManagementAdmin.put("waits", "{\"model\":\"waits\"}");
        Serving.awaitModelReady("jam");
        Serving.awaitModelReady("waits");
        try {
            var async = GRPCInferenceServiceGrpc.newFutureStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
            var held = async.modelInfer(typedMlp().toBuilder().setModelName("jam").build());
            Serving.await("the jam's slot to be taken", () -> given().get("/q/metrics"),
                    r -> r.asString().lines().anyMatch(l -> l.startsWith("serval_replica_in_flight{deployment=\"jam\"")
                            && l.endsWith(" 1.0")));

            StatusRuntimeException full = assertThrows(StatusRuntimeException.class,
                    () -> stub.modelInfer(typedMlp().toBuilder().setModelName("jam").build()));

            assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getStatus().getCode());
            Metadata trailers = full.getTrailers();
            assertTrue(trailers.containsKey(Metadata.Key.of("retry-after-ms", Metadata.ASCII_STRING_MARSHALLER)));
            com.google.rpc.Status details = io.grpc.protobuf.StatusProto.fromThrowable(full);
            assertTrue(details != null && details.getDetails(0).is(com.google.rpc.RetryInfo.class),
                    "a google.rpc.RetryInfo for the client's back-off");
            held.cancel(true);

            // grpc-timeout is the request's deadline: the pipeline's step (which returns only once abandoned) ends.
            assertEquals(Status.Code.DEADLINE_EXCEEDED, code(() -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                    .modelInfer(typedMlp().toBuilder().setModelName("waits").build())));
            Serving.await("the step's request to end", () -> given().get("/q/metrics"),
                    r -> r.asString().lines().anyMatch(l -> l.startsWith(
                            "serval_replica_in_flight{deployment=\"patient\"") && l.endsWith(" 0.0")));
            // So is Triton's per-request timeout (tritonclient's infer(..., timeout=µs)), when it is the shorter:
            // the server ends the call, with the stub's own deadline 30 s away.
            StatusRuntimeException expired = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                    typedMlp().toBuilder().setModelName("waits").putParameters("timeout", InferParameter.newBuilder()
                            .setInt64Param(300_000).build()).build()));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, expired.getStatus().getCode());
            assertTrue(expired.getStatus().getDescription().contains("deadline of 300 ms"),
                    expired.getStatus().toString());
            Serving.await("the step's request to end", () -> given().get("/q/metrics"),
                    r -> r.asString().lines().anyMatch(l -> l.startsWith(
                            "serval_replica_in_flight{deployment=\"patient\"") && l.endsWith(" 0.0")));

            // A client that cancels its call ends its request (the handler returns only once abandoned).
            // Its deadline (2 minutes) is far past the 30 s this waits: only the cancel can end it in time.
            var cancelled = GRPCInferenceServiceGrpc.newFutureStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                    .modelInfer(typedMlp().toBuilder().setModelName("patient").build());
            Serving.await("the call to run", () -> given().get("/q/metrics"),
                    r -> r.asString().lines().anyMatch(l -> l.startsWith(
                            "serval_replica_in_flight{deployment=\"patient\"") && l.endsWith(" 1.0")));
            cancelled.cancel(true);
            Serving.await("the cancelled request to end", () -> given().get("/q/metrics"),
                    r -> r.asString().lines().anyMatch(l -> l.startsWith(
                            "serval_replica_in_flight{deployment=\"patient\"") && l.endsWith(" 0.0")));
        } finally {
            ManagementAdmin.delete("jam");
        }
    }

    @Test
    void aStreamAnswersEachRequestAsItFinishesAndReportsFailuresInline() throws Exception {
        List<dev.serval.api.grpc.v2.ModelStreamInferResponse> answers =
                java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        var requests = GRPCInferenceServiceGrpc.newStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .modelStreamInfer(new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(dev.serval.api.grpc.v2.ModelStreamInferResponse answer) {
                        answers.add(answer);
                    }

                    @Override
                    public void onError(Throwable failure) {
                        done.completeExceptionally(failure);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        requests.onNext(typedMlp().toBuilder().setId("a").build());
        requests.onNext(typedMlp().toBuilder().setId("b").setModelName("nope").build());
        requests.onNext(typedMlp().toBuilder().setId("c").build());
        requests.onCompleted();

        done.get(30, TimeUnit.SECONDS);

        assertEquals(3, answers.size());
        float[] rest = restMlp();
        for (var answer : answers) {
            String id = answer.getInferResponse().getId();
            if (id.equals("b")) {
                assertTrue(answer.getErrorMessage().contains("[NOT_FOUND]"), answer.getErrorMessage());
            } else {
                assertEquals("", answer.getErrorMessage());
                assertEquals(rest[0], answer.getInferResponse().getOutputs(0).getContents().getFp32Contents(0), 1e-6);
            }
        }
        assertEquals(java.util.Set.of("a", "b", "c"), answers.stream().map(a -> a.getInferResponse().getId())
                .collect(java.util.stream.Collectors.toSet()));
    }

    @Test
    void theRepositoryExtensionNeedsTheToken() {
        assertEquals(Status.Code.UNAUTHENTICATED, code(() -> stub.repositoryIndex(
                RepositoryIndexRequest.getDefaultInstance())));
        Metadata token = new Metadata();
        token.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + ManagementProfile.TOKEN);
        var admin = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(token));

        RepositoryIndexResponse index = admin.repositoryIndex(RepositoryIndexRequest.newBuilder().setReady(true)
                .build());
        assertTrue(index.getModelsList().stream().allMatch(m -> m.getState().equals("READY")));
        assertTrue(index.getModelsList().stream().anyMatch(m -> m.getName().equals(Serving.MODEL)));

        admin.repositoryModelLoad(RepositoryModelLoadRequest.newBuilder().setModelName("tiny-dtypes").build());
        Serving.awaitModelReady("tiny-dtypes");
        admin.repositoryModelUnload(RepositoryModelUnloadRequest.newBuilder().setModelName("tiny-dtypes").build());
        assertEquals(Status.Code.NOT_FOUND, code(() -> stub.modelReady(ModelReadyRequest.newBuilder()
                .setName("tiny-dtypes").build())));
    }

    /** The management API with the token, for set-up. */
    private static final class ManagementAdmin {
        static void put(String name, String body) {
            int status = given().header("Authorization", "Bearer " + ManagementProfile.TOKEN)
                    .contentType("application/json").body(body).put("/api/deployments/" + name).statusCode();
            assertTrue(status == 200 || status == 201, name + ": " + status);
        }

        static void delete(String name) {
            given().header("Authorization", "Bearer " + ManagementProfile.TOKEN).delete("/api/deployments/" + name);
        }
    }
}
