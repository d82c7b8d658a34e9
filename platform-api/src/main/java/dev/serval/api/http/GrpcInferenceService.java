package dev.serval.api.http;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.rpc.RetryInfo;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.InferParameter;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import dev.serval.api.grpc.v2.ModelMetadataResponse;
import dev.serval.api.grpc.v2.ModelReadyResponse;
import dev.serval.api.grpc.v2.ModelStreamInferResponse;
import dev.serval.api.grpc.v2.RepositoryIndexResponse;
import dev.serval.api.grpc.v2.RepositoryModelLoadRequest;
import dev.serval.api.grpc.v2.RepositoryModelLoadResponse;
import dev.serval.api.grpc.v2.RepositoryModelUnloadResponse;
import dev.serval.api.grpc.v2.ServerLiveResponse;
import dev.serval.api.grpc.v2.ServerMetadataResponse;
import dev.serval.api.grpc.v2.ServerReadyResponse;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.RequestMeters;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Inference;
import dev.serval.error.InvalidInput;
import dev.serval.error.Overloaded;
import dev.serval.error.UnknownDeployment;
import dev.serval.request.InferenceRequest;
import dev.serval.tensor.Tensors;
import io.grpc.MethodDescriptor;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.grpc.common.CodecException;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.InvalidMessageException;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The Open Inference Protocol's gRPC service ({@code inference.GRPCInferenceService}, src/main/proto) on the HTTP
 * port: HTTP/2 requests with a {@code application/grpc} content type go to a Vert.x gRPC server, everything else on to
 * the REST routes, so one port and one Service serve both.
 *
 * <p>{@code ModelInfer} takes the REST inference path: the same deployments (a multiplexed model pinned until its
 * answer is written), admission, deadlines ({@code grpc-timeout} or the deployment's {@code request_timeout}, the
 * shorter), the same input limits ({@link GrpcTensors}; the message size is {@code serval.http.max-body-size}),
 * cancellation when the client cancels, request ids ({@code x-request-id} metadata, passed on to what a pipeline or
 * handler calls), and request meters with {@code api="grpc"}. Errors are gRPC statuses: INVALID_ARGUMENT, NOT_FOUND,
 * RESOURCE_EXHAUSTED (with a {@code google.rpc.RetryInfo} and {@code retry-after-ms}), UNAVAILABLE, DEADLINE_EXCEEDED,
 * INTERNAL, UNAUTHENTICATED. The other RPCs answer what their REST counterparts answer; the repository extension needs
 * the management token ({@code authorization: Bearer <token>} metadata) as {@code /v2/repository} does. A call's
 * bytes count in the byte budget until it is answered or gone, a unary call's request must end within
 * {@code serval.http.body-timeout}, and each connection's calls and bytes are bounded ({@link GrpcBytesInTransit},
 * {@link GrpcConnectionShare}).
 *
 * <p>Threads: every handler runs on the event loop of its connection and never blocks; the repository RPCs, which
 * change deployments, run on a worker thread.
 */
@Singleton
public class GrpcInferenceService {

    private static final Logger LOG = Logger.getLogger(GrpcInferenceService.class);
    private static final String GRPC = "application/grpc";
    private static final Pattern TIMEOUT = Pattern.compile("(\\d{1,8})([HMSmun])");
    /** The trailer where gRPC clients find a status's details (a {@code google.rpc.Status}, base64). */
    private static final String STATUS_DETAILS = "grpc-status-details-bin";
    /** The path of the one streaming RPC; every other is unary. */
    private static final String STREAM_INFER = "/" + GRPCInferenceServiceGrpc.getModelStreamInferMethod()
            .getFullMethodName();

    private final DeploymentRegistry deployments;
    private final InferenceResource metadata;
    private final RepositoryResource repository;
    private final ApiToken token;
    private final ByteBudget budget;
    private final Http2StreamLimit streamLimit;
    private final GrpcConnectionShare.Table connections;
    private final RequestLimits limits;
    private final long maxMessageSize;
    private final java.time.Duration bodyTimeout;
    private final String version;
    private final Optional<Integer> separatePort;
    private final String host;
    /** The HTTP port's connection limits, given to the separate port's server ({@code serval.grpc.port}). */
    private final java.time.Duration idleTimeout;
    private final OptionalLong maxStreams;
    /** The Vert.x the gRPC server runs on (timers, blocking work): Quarkus's, or its own on a separate port. */
    private volatile Vertx vertx;

    GrpcInferenceService(DeploymentRegistry deployments, InferenceResource metadata, RepositoryResource repository,
            ApiToken token, ByteBudget budget, Http2StreamLimit streamLimit, ServalConfig config,
            @ConfigProperty(name = "quarkus.http.host", defaultValue = "0.0.0.0") String host,
            @ConfigProperty(name = "quarkus.http.idle-timeout", defaultValue = "30M") java.time.Duration idleTimeout,
            @ConfigProperty(name = "quarkus.http.limits.max-concurrent-streams") OptionalLong maxStreams,
            @ConfigProperty(name = "quarkus.application.version", defaultValue = "unknown") String version) {
        this.deployments = deployments;
        this.metadata = metadata;
        this.repository = repository;
        this.token = token;
        this.budget = budget;
        this.streamLimit = streamLimit;
        this.connections = new GrpcConnectionShare.Table(config.grpc().maxCallsPerConnection(),
                config.grpc().maxBytesPerConnection().asLongValue());
        this.limits = RequestLimits.of(config.http());
        this.maxMessageSize = config.http().maxBodySize().asLongValue();
        this.bodyTimeout = config.http().bodyTimeout();
        this.version = version;
        this.separatePort = config.grpc().port();
        this.host = host;
        this.idleTimeout = idleTimeout;
        this.maxStreams = maxStreams;
    }

    void install(@Observes Router router, Vertx quarkusVertx) {
        if (separatePort.isPresent()) {
            // A Vert.x of its own: Quarkus instruments every HTTP server its Vert.x creates, and a second one would
            // clash with the HTTP port's meters. Two event loops; closed with the application.
            vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(4));
            int port = separatePort.get();
            GrpcServer server = server(vertx);
            // The HTTP port's connection limits, which Quarkus applies to its own server only.
            HttpServerOptions options = new HttpServerOptions().setPort(port).setHost(host)
                    .setHttp2ClearTextEnabled(true).setIdleTimeout((int) idleTimeout.toSeconds())
                    .setIdleTimeoutUnit(TimeUnit.SECONDS);
            maxStreams.ifPresent(streams -> options.getInitialSettings().setMaxConcurrentStreams(streams));
            vertx.createHttpServer(options)
                    .requestHandler(request -> {
                        if (streamLimit.refusedForFloods(request.connection(), request.response())) {
                            return;
                        }
                        request.headers().set(RequestIds.HEADER, requestId(request.getHeader(RequestIds.HEADER)));
                        handle(server, request, null);
                    })
                    .listen()
                    .onSuccess(listening -> LOG.infof("gRPC (OIP GRPCInferenceService) on %s:%d", host,
                            listening.actualPort()))
                    .onFailure(e -> LOG.errorf("gRPC could not listen on %s:%d: %s", host, port, e.getMessage()));
            return;
        }
        vertx = quarkusVertx;
        GrpcServer server = server(vertx);
        // Right after RequestIds (which sets the response's x-request-id), before every other route.
        router.route().order(Integer.MIN_VALUE + 1).handler(context -> {
            HttpServerRequest request = context.request();
            String type = request.getHeader(HttpHeaders.CONTENT_TYPE);
            if (request.version() != HttpVersion.HTTP_2 || type == null || !type.startsWith(GRPC)) {
                context.next();
                return;
            }
            request.headers().set(RequestIds.HEADER, context.response().headers().get(RequestIds.HEADER));
            handle(server, request, context);
        });
    }

    /**
     * Hands a call to the gRPC server with its bytes counted in the budget and its connection's share as they arrive
     * ({@link GrpcBytesInTransit}); refused at once, on its headers, when the budget is already spent (as REST requests
     * are) or its connection has its limit of calls open.
     */
    private void handle(GrpcServer server, HttpServerRequest request, RoutingContext context) {
        if (budget.exhausted()) {
            refuse(request, GrpcBytesInTransit.Refusal.OVER_BUDGET);
            return;
        }
        GrpcConnectionShare share = connections.of(request.connection());
        if (!share.open()) {
            refuse(request, GrpcBytesInTransit.Refusal.CONNECTION_CALLS);
            return;
        }
        boolean unary = !request.path().equals(STREAM_INFER);
        GrpcBytesInTransit call = new GrpcBytesInTransit(request, budget, share, RequestDeadlines.onThisLoop(vertx),
                bodyTimeout.toMillis(), unary, maxMessageSize, this::refuse);
        if (context != null) {
            // The routing context owns the response's end and close handlers; setting them here would silence the
            // end handlers of the routes before (the HTTP/2 stream limit's count of open streams).
            context.addEndHandler(ignored -> call.giveBack());
        } else {
            request.response().closeHandler(ignored -> call.giveBack());
            request.response().endHandler(ignored -> call.giveBack());
        }
        call.handTo(server);
    }

    void stop(@Observes io.quarkus.runtime.ShutdownEvent event) {
        if (separatePort.isPresent() && vertx != null) {
            vertx.close();
        }
    }

    /** The gRPC server of every RPC, on {@code vertx}. */
    private GrpcServer server(Vertx vertx) {
        GrpcServer server = GrpcServer.server(vertx, new GrpcServerOptions().setMaxMessageSize(maxMessageSize));
        unary(server, GRPCInferenceServiceGrpc.getServerLiveMethod(), request -> CompletableFuture.completedFuture(
                ServerLiveResponse.newBuilder().setLive(deployments.live()).build()));
        unary(server, GRPCInferenceServiceGrpc.getServerReadyMethod(), request -> CompletableFuture.completedFuture(
                ServerReadyResponse.newBuilder().setReady(deployments.allReady()).build()));
        unary(server, GRPCInferenceServiceGrpc.getServerMetadataMethod(), request -> CompletableFuture.completedFuture(
                ServerMetadataResponse.newBuilder().setName("serval").setVersion(version)
                        .addExtensions("model_repository").build()));
        unary(server, GRPCInferenceServiceGrpc.getModelReadyMethod(), request -> {
            Response ready = metadata.modelReady(request.getName());
            return CompletableFuture.completedFuture(ModelReadyResponse.newBuilder()
                    .setReady(ready.getStatus() == 200).build());
        });
        unary(server, GRPCInferenceServiceGrpc.getModelMetadataMethod(),
                request -> metadata.model(request.getName()).thenApply(GrpcInferenceService::modelMetadata));
        server.callHandler(GrpcMessages.served(GRPCInferenceServiceGrpc.getModelInferMethod(), limits), this::infer);
        server.callHandler(GrpcMessages.served(GRPCInferenceServiceGrpc.getModelStreamInferMethod(), limits),
                this::stream);
        managed(server, GRPCInferenceServiceGrpc.getRepositoryIndexMethod(), request -> {
            RepositoryIndexResponse.Builder index = RepositoryIndexResponse.newBuilder();
            for (Map<String, Object> entry : repository.index()) {
                if (!request.getReady() || "READY".equals(entry.get("state"))) {
                    index.addModels(RepositoryIndexResponse.ModelIndex.newBuilder()
                            .setName(String.valueOf(entry.get("name"))).setVersion(String.valueOf(entry.get("version")))
                            .setState(String.valueOf(entry.get("state"))).setReason(String.valueOf(entry.get("reason"))));
                }
            }
            return index.build();
        });
        managed(server, GRPCInferenceServiceGrpc.getRepositoryModelLoadMethod(), request -> {
            repository.load(request.getModelName(), loadBody(request));
            return RepositoryModelLoadResponse.getDefaultInstance();
        });
        managed(server, GRPCInferenceServiceGrpc.getRepositoryModelUnloadMethod(), request -> {
            repository.unload(request.getModelName());
            return RepositoryModelUnloadResponse.getDefaultInstance();
        });
        return server;
    }

    /** The client's {@code x-request-id} when sane, else a new one (what {@link RequestIds} does on the HTTP port). */
    private static String requestId(String given) {
        return given != null && RequestIds.isSane(given) ? given : RequestIds.newId();
    }

    /** Registers a unary RPC answered by {@code call} (on the event loop; it may complete later on any thread). */
    private <Q, R> void unary(GrpcServer server, MethodDescriptor<Q, R> method, Function<Q, CompletionStage<R>> call) {
        server.callHandler(GrpcMessages.served(method, limits), request -> whenRead(request, message -> {
            Context context = Vertx.currentContext();
            CompletionStage<R> answer;
            try {
                answer = call.apply(message);
            } catch (Throwable e) {
                fail(request.response(), e);
                return;
            }
            answer.whenComplete((value, failure) -> context.runOnContext(ignored -> {
                if (failure != null) {
                    fail(request.response(), ErrorResponses.unwrap(failure));
                } else {
                    request.response().end(value);
                }
            }));
        }));
    }

    /**
     * Calls {@code then} with a unary call's message once the client has sent all of it. When the client ended its
     * side but the message does not parse ({@link GrpcMessages} names what is wrong) or never came, the call is
     * INVALID_ARGUMENT; a call whose stream failed first (reset, connection closed) has nobody left to answer.
     */
    private static <Q> void whenRead(GrpcServerRequest<Q, ?> call, Consumer<Q> then) {
        call.end().onSuccess(ended -> call.last().onComplete(read -> {
            if (read.succeeded()) {
                then.accept(read.result());
            } else {
                fail(call.response(), new InvalidInput("message", read.cause() instanceof CodecException unreadable
                        ? unreadable.getMessage() : "the call ended without its request message"));
            }
        }));
    }

    /** A repository RPC: the management token first, then {@code call} on a worker thread (it changes deployments). */
    private <Q, R> void managed(GrpcServer server, MethodDescriptor<Q, R> method, Function<Q, R> call) {
        server.callHandler(GrpcMessages.served(method, limits), request -> {
            String authorization = request.headers().get(HttpHeaders.AUTHORIZATION);
            whenRead(request, message -> {
                if (!token.accepts(authorization)) {
                    fail(request.response(), new ApiError(401, authorization == null
                            ? "this call needs the management token: authorization: Bearer <token> metadata"
                            : "the management token is wrong"));
                    return;
                }
                Context context = Vertx.currentContext();
                vertx.<R>executeBlocking(() -> call.apply(message), false).onComplete(done -> context.runOnContext(
                        ignored -> {
                            if (done.failed()) {
                                fail(request.response(), ErrorResponses.unwrap(done.cause()));
                            } else {
                                request.response().end(done.result());
                            }
                        }));
            });
        });
    }

    /** A load request's parameters as the REST load's body: {@code {"parameters": {...}}}, each a deployment field. */
    private static byte[] loadBody(RepositoryModelLoadRequest request) {
        com.fasterxml.jackson.databind.node.ObjectNode parameters = JsonNodes.object();
        request.getParametersMap().forEach((name, value) -> {
            switch (value.getParameterChoiceCase()) {
                case BOOL_PARAM -> parameters.put(name, value.getBoolParam());
                case INT64_PARAM -> parameters.put(name, value.getInt64Param());
                case STRING_PARAM -> parameters.put(name, value.getStringParam());
                default -> throw new InvalidInput("parameters." + name, "parameter '" + name
                        + "' must be a bool, int64 or string deployment field");
            }
        });
        com.fasterxml.jackson.databind.node.ObjectNode body = JsonNodes.object();
        body.set("parameters", parameters);
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static ModelMetadataResponse modelMetadata(Map<String, Object> model) {
        ModelMetadataResponse.Builder response = ModelMetadataResponse.newBuilder()
                .setName(String.valueOf(model.get("name")))
                .setPlatform(String.valueOf(model.getOrDefault("platform", "")));
        if (model.get("versions") instanceof List<?> versions) {
            versions.forEach(v -> response.addVersions(String.valueOf(v)));
        }
        if (model.get("inputs") instanceof List<?> inputs) {
            inputs.forEach(tensor -> response.addInputs(tensorMetadata(tensor)));
        }
        if (model.get("outputs") instanceof List<?> outputs) {
            outputs.forEach(tensor -> response.addOutputs(tensorMetadata(tensor)));
        }
        return response.build();
    }

    private static ModelMetadataResponse.TensorMetadata tensorMetadata(Object tensor) {
        Map<?, ?> fields = (Map<?, ?>) tensor;
        ModelMetadataResponse.TensorMetadata.Builder metadata = ModelMetadataResponse.TensorMetadata.newBuilder()
                .setName(String.valueOf(fields.get("name"))).setDatatype(String.valueOf(fields.get("datatype")));
        if (fields.get("shape") instanceof List<?> shape) {
            shape.forEach(dim -> metadata.addShape(((Number) dim).longValue()));
        }
        return metadata.build();
    }

    // --- ModelInfer ------------------------------------------------------------------------------------------------

    private void infer(GrpcServerRequest<ModelInferRequest, ModelInferResponse> call) {
        Metadata metadata = Metadata.of(call);
        whenRead(call, message -> {
            CompletableFuture<ModelInferResponse> answer = run(message, metadata, Vertx.currentContext());
            // A client that cancels resets its stream, which Vert.x reports as a gRPC error (CANCELLED) on the request;
            // a connection that breaks, as an exception: either way the request leaves the queue or its run ends.
            call.errorHandler(error -> answer.cancel(false));
            call.exceptionHandler(e -> answer.cancel(false));
            answer.whenComplete((response, failure) -> {
                if (failure == null) {
                    FlushOnce.around(call.connection(), () -> call.response().end(response));
                } else if (!(failure instanceof CancellationException)) {
                    fail(call.response(), failure);
                }
            });
        });
    }

    /** What a {@code ModelInfer} call's metadata says about its requests. */
    private record Metadata(String requestId, String timeout, String modelId) {
        static Metadata of(GrpcServerRequest<?, ?> call) {
            return new Metadata(call.headers().get(RequestIds.HEADER), call.headers().get("grpc-timeout"),
                    call.headers().get(DeploymentRegistry.MODEL_ID_HEADER));
        }
    }

    /**
     * Runs one inference request through the call every transport shares ({@link InferenceCall}), on {@code context}'s
     * event loop. Its message's bytes count in the budget (its decoded inputs take about as much) while the call holds
     * them: a unary call's until it ends, a stream's message's until its answer ({@link GrpcBytesInTransit}).
     *
     * @return completed on {@code context} with the answer, or exceptionally with the request's failure (the
     *     refusal, the deadline, the model's failure), once its meters are recorded and a multiplexed model's pin
     *     released. Cancelling it cancels the request (it leaves the queue, or its run ends).
     */
    private CompletableFuture<ModelInferResponse> run(ModelInferRequest message, Metadata metadata, Context context) {
        long start = System.nanoTime();
        CompletableFuture<ModelInferResponse> answer = new CompletableFuture<>();
        ServedDeployment served;
        try {
            served = deployments.route(message.getModelName(), metadata.modelId());
            if (served == null) {
                throw new UnknownDeployment(message.getModelName());
            }
        } catch (Throwable e) {
            answer.completeExceptionally(e);
            return answer;
        }
        List<String> outputs = message.getOutputsCount() == 0 ? null : message.getOutputsList().stream()
                .map(ModelInferRequest.InferRequestedOutputTensor::getName).toList();
        InferenceCall<Inference, ModelInferResponse> call = new InferenceCall<>(served, RequestMeters.Api.GRPC, start,
                new Unary(served, message, outputs, message.getRawInputContentsCount() > 0, answer));
        Tensors inputs;
        long budget;
        try {
            inputs = GrpcTensors.inputs(message, limits);
            budget = Math.min(served.requestTimeout().toMillis(), Math.min(timeoutMillis(metadata.timeout()),
                    timeoutParameterMillis(message)));
        } catch (Throwable e) {
            call.refuse(e);
            return answer;
        }
        call.start(metadata.requestId(), budget,
                callContext -> served.deployment().infer(new InferenceRequest(inputs, outputs, callContext)),
                RequestDeadlines.onThisLoop(vertx), context);
        answer.whenComplete((ignored, failure) -> {
            if (failure instanceof CancellationException) {
                call.cancel(); // the caller's cancel
            }
        });
        return answer;
    }

    /**
     * A {@code ModelInfer} answer: built where the engine completed the request (the requested outputs, read from the
     * version that answered: a rolling update may have two), handed over on the event loop by completing
     * {@code answer}.
     */
    private record Unary(ServedDeployment served, ModelInferRequest message, List<String> outputs, boolean raw,
            CompletableFuture<ModelInferResponse> answer) implements InferenceCall.Transport<Inference, ModelInferResponse> {

        @Override
        public ModelInferResponse encode(Inference inference) {
            return GrpcTensors.response(served.name(), message.getId(), inference, outputs, raw);
        }

        @Override
        public int inputs(Inference inference) {
            return inference.inputs();
        }

        @Override
        public void answer(ModelInferResponse encoded) {
            answer.complete(encoded);
        }

        @Override
        public void fail(Throwable failure) {
            answer.completeExceptionally(failure);
        }
    }

    /** HTTP/2's ENHANCE_YOUR_CALM error code, for a stream refused at the edge after its answers started. */
    private static final long ENHANCE_YOUR_CALM = 0xb;

    /** The most requests one {@code ModelStreamInfer} stream may have running; past it, its reading pauses. */
    static final int MAX_STREAM_IN_FLIGHT = 64;

    /**
     * Triton's bidirectional {@code ModelStreamInfer}: every request of the stream runs as a {@code ModelInfer} would,
     * and each answer is written as it finishes (not in request order; its {@code id} tells which), a request's
     * failure as a response with {@code error_message} (the stream goes on). At most {@value #MAX_STREAM_IN_FLIGHT}
     * requests of a stream run at once: past that the stream stops reading (HTTP/2 flow control holds the client
     * back); it also stops while its answers wait for a client that does not read them. The stream ends once the
     * client ended it and every answer is written; a client that cancels it cancels every request it has running.
     * Event loop only.
     */
    private void stream(GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> call) {
        Stream stream = new Stream(call);
        Metadata metadata = Metadata.of(call);
        Context context = Vertx.currentContext();
        GrpcBytesInTransit transit = GrpcBytesInTransit.handing();
        call.handler(message -> {
            GrpcBytesInTransit.Held held = transit.take();
            CompletableFuture<ModelInferResponse> answer = run(message, metadata, context);
            answer.whenComplete((response, failure) -> held.release());
            stream.started(message, answer);
        });
        call.invalidMessageHandler(invalid -> {
            transit.take().release();
            stream.invalid(invalid);
        });
        call.endHandler(ignored -> stream.clientEnded());
        call.errorHandler(ignored -> stream.cancel());
        call.exceptionHandler(ignored -> stream.cancel());
    }

    /** One {@code ModelStreamInfer} stream's requests, running and done; its event loop only. */
    private static final class Stream {

        private final GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> call;
        private final java.util.Set<CompletableFuture<ModelInferResponse>> running = new java.util.HashSet<>();
        private boolean clientEnded;
        private boolean cancelled;
        /** Whether reading is paused until the answers waiting to be written drain (the client is not reading). */
        private boolean answersWaiting;

        Stream(GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> call) {
            this.call = call;
        }

        void started(ModelInferRequest message, CompletableFuture<ModelInferResponse> answer) {
            running.add(answer);
            if (running.size() == MAX_STREAM_IN_FLIGHT) {
                call.pause();
            }
            answer.whenComplete((response, failure) -> answered(message, answer, response, failure));
        }

        private void answered(ModelInferRequest message, CompletableFuture<ModelInferResponse> answer,
                ModelInferResponse response, Throwable failure) {
            running.remove(answer);
            if (cancelled) {
                return;
            }
            write(response != null
                    ? ModelStreamInferResponse.newBuilder().setInferResponse(response).build()
                    : ModelStreamInferResponse.newBuilder()
                            .setErrorMessage("[" + ErrorResponses.grpcStatus(failure).name() + "] "
                                    + ErrorResponses.message(failure))
                            .setInferResponse(ModelInferResponse.newBuilder().setId(message.getId())
                                    .setModelName(message.getModelName())).build());
            if (running.size() == MAX_STREAM_IN_FLIGHT - 1 && !answersWaiting) {
                call.resume();
            }
            endIfDone();
        }

        /**
         * Writes an answer; when the answers the client has not taken yet fill the stream's write queue (HTTP/2 flow
         * control: the client does not read), stops reading the stream until they drain, so that a client that only
         * sends cannot make the server hold answers without bound.
         */
        private void write(ModelStreamInferResponse answer) {
            call.response().write(answer);
            if (!answersWaiting && call.response().writeQueueFull()) {
                answersWaiting = true;
                call.pause();
                call.response().drainHandler(drained -> {
                    answersWaiting = false;
                    if (!cancelled && running.size() < MAX_STREAM_IN_FLIGHT) {
                        call.resume();
                    }
                });
            }
        }

        void clientEnded() {
            clientEnded = true;
            endIfDone();
        }

        private void endIfDone() {
            if (clientEnded && running.isEmpty()) {
                call.response().end();
            }
        }

        /**
         * A message that does not parse: answered inline as INVALID_ARGUMENT, and the stream goes on. (A message over
         * the size limit never gets here: {@link GrpcBytesInTransit} refuses it on its length.)
         */
        void invalid(InvalidMessageException invalid) {
            if (cancelled) {
                return;
            }
            String problem = invalid.getCause() instanceof CodecException unreadable ? unreadable.getMessage()
                    : "a message of the stream could not be read";
            write(ModelStreamInferResponse.newBuilder()
                    .setErrorMessage("[" + GrpcStatus.INVALID_ARGUMENT.name() + "] " + problem).build());
        }

        void cancel() {
            cancelled = true;
            List.copyOf(running).forEach(answer -> answer.cancel(false));
        }
    }

    /** {@code grpc-timeout} in milliseconds (rounded up), or {@link Long#MAX_VALUE} without one. */
    static long timeoutMillis(String header) {
        if (header == null) {
            return Long.MAX_VALUE;
        }
        var match = TIMEOUT.matcher(header.trim());
        if (!match.matches()) {
            throw new InvalidInput("grpc-timeout", "grpc-timeout '" + header + "' is not 1 to 8 digits and a unit "
                    + "(H, M, S, m, u, n)");
        }
        long value = Long.parseLong(match.group(1));
        return switch (match.group(2).charAt(0)) {
            case 'H' -> value * 3_600_000;
            case 'M' -> value * 60_000;
            case 'S' -> value * 1000;
            case 'm' -> value;
            case 'u' -> (value + 999) / 1000;
            default -> (value + 999_999) / 1_000_000;
        };
    }

    /**
     * The request's {@code parameters["timeout"]} (Triton's per-request timeout, as tritonclient's
     * {@code infer(..., timeout=)} sends it: microseconds, int64 or uint64) in milliseconds rounded up, or
     * {@link Long#MAX_VALUE} without one (or a uint64 past 2^63 microseconds).
     *
     * @throws InvalidInput when it is negative or not an integer
     */
    static long timeoutParameterMillis(ModelInferRequest message) {
        InferParameter timeout = message.getParametersMap().get("timeout");
        if (timeout == null) {
            return Long.MAX_VALUE;
        }
        long micros = switch (timeout.getParameterChoiceCase()) {
            case INT64_PARAM -> timeout.getInt64Param();
            case UINT64_PARAM -> timeout.getUint64Param() < 0 ? Long.MAX_VALUE : timeout.getUint64Param();
            default -> throw new InvalidInput("parameters.timeout", "parameters.timeout must be an int64 or uint64 "
                    + "number of microseconds, not a " + timeout.getParameterChoiceCase().name().toLowerCase(
                            java.util.Locale.ROOT));
        };
        if (micros < 0) {
            throw new InvalidInput("parameters.timeout", "parameters.timeout must be a non-negative number of "
                    + "microseconds, not " + micros);
        }
        return micros == Long.MAX_VALUE ? Long.MAX_VALUE : Math.ceilDiv(micros, 1000);
    }

    // --- errors ----------------------------------------------------------------------------------------------------

    /** Ends the call with the status {@code failure} maps to, its message, and for an overload the retry delay. */
    private static void fail(GrpcServerResponse<?, ?> response, Throwable failure) {
        GrpcStatus status = ErrorResponses.grpcStatus(failure);
        String message = ErrorResponses.message(failure);
        response.status(status).statusMessage(message);
        Long retryMillis = failure instanceof Overloaded overloaded ? Long.valueOf(overloaded.retryAfter().toMillis())
                : status == GrpcStatus.UNAVAILABLE ? Long.valueOf(1000) : null;
        if (retryMillis != null) {
            response.trailers().set(STATUS_DETAILS, retryDetails(status, message, retryMillis));
            response.trailers().set(ErrorResponses.RETRY_AFTER_MS, Long.toString(retryMillis));
        }
        if (status == GrpcStatus.INTERNAL) {
            LOG.debugf("gRPC call failed: %s", failure.toString());
        }
        response.end();
    }

    /** {@code grpc-status-details-bin}: a {@code google.rpc.Status} with a {@code RetryInfo} of {@code retryMillis}. */
    private static String retryDetails(GrpcStatus status, String message, long retryMillis) {
        com.google.rpc.Status details = com.google.rpc.Status.newBuilder().setCode(status.code).setMessage(message)
                .addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(Duration.newBuilder()
                        .setSeconds(retryMillis / 1000).setNanos((int) (retryMillis % 1000) * 1_000_000)).build()))
                .build();
        return Base64.getEncoder().withoutPadding().encodeToString(details.toByteArray());
    }

    /**
     * Refuses a call at the edge, before the gRPC layer has its message ({@link GrpcBytesInTransit}): its bytes do not
     * fit the server's budget (UNAVAILABLE with a retry delay, as {@link #fail} writes it; REST answers 503 +
     * Retry-After), its connection has {@code serval.grpc.max-calls-per-connection} calls open or its bytes do not fit
     * the connection's {@code serval.grpc.max-bytes-per-connection} (RESOURCE_EXHAUSTED), a message is longer than
     * {@code serval.http.max-body-size} (RESOURCE_EXHAUSTED), a message stalled past {@code serval.http.body-timeout}
     * or a unary call did not end its stream within it (DEADLINE_EXCEEDED; REST answers 408), or a message is
     * compressed (UNIMPLEMENTED with {@code grpc-accept-encoding: identity}, as the gRPC spec answers an encoding the
     * server does not take). A stream whose answers already started is reset instead (ENHANCE_YOUR_CALM, which clients
     * report as RESOURCE_EXHAUSTED).
     */
    private void refuse(HttpServerRequest request, GrpcBytesInTransit.Refusal refusal) {
        HttpServerResponse response = request.response();
        if (response.ended() || response.closed()) {
            return;
        }
        if (response.headWritten()) {
            response.reset(ENHANCE_YOUR_CALM);
            return;
        }
        response.putHeader(HttpHeaders.CONTENT_TYPE, GRPC);
        switch (refusal) {
            case OVER_BUDGET -> {
                String message = budget.full().getMessage();
                response.putHeader("grpc-status", Integer.toString(GrpcStatus.UNAVAILABLE.code))
                        .putHeader("grpc-message", percentEncoded(message))
                        .putHeader(STATUS_DETAILS, retryDetails(GrpcStatus.UNAVAILABLE, message, 1000))
                        .putHeader(ErrorResponses.RETRY_AFTER_MS, "1000");
            }
            case CONNECTION_CALLS -> response.putHeader("grpc-status",
                            Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("this connection has " + connections.maxCalls()
                            + " gRPC calls open, its limit (serval.grpc.max-calls-per-connection); wait for one to "
                            + "end, or open another connection"));
            case CONNECTION_BYTES -> response.putHeader("grpc-status",
                            Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("the call's bytes do not fit its connection's "
                            + "share: one connection's gRPC calls may hold at most " + connections.maxBytes()
                            + " bytes of requests (serval.grpc.max-bytes-per-connection); wait for its calls to end, "
                            + "or open another connection"));
            case TOO_LARGE -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("a message is longer than serval.http.max-body-size ("
                            + maxMessageSize + " bytes)"));
            case STALLED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.DEADLINE_EXCEEDED.code))
                    .putHeader("grpc-message", percentEncoded("a message did not all arrive within "
                            + "serval.http.body-timeout (" + bodyTimeout.toMillis() + " ms): of a unary call's "
                            + "headers, or of a stream message's first bytes"));
            case UNENDED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.DEADLINE_EXCEEDED.code))
                    .putHeader("grpc-message", percentEncoded("the call's message arrived, but the client did not end "
                            + "its stream (half-close) within serval.http.body-timeout (" + bodyTimeout.toMillis()
                            + " ms) of the call's headers; a unary call is answered once its client ends its stream"));
            case COMPRESSED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.UNIMPLEMENTED.code))
                    .putHeader("grpc-message", percentEncoded("compressed messages are not accepted (grpc-encoding "
                            + "identity only): what a message inflates to cannot be bounded before it is inflated; "
                            + "send it uncompressed"))
                    .putHeader("grpc-accept-encoding", "identity");
        }
        response.end();
    }

    /** {@code grpc-message}'s encoding: printable ASCII but {@code %} as is, everything else percent-encoded (UTF-8). */
    static String percentEncoded(String message) {
        StringBuilder encoded = new StringBuilder(message.length());
        for (byte b : message.getBytes(StandardCharsets.UTF_8)) {
            if (b >= 0x20 && b <= 0x7e && b != '%') {
                encoded.append((char) b);
            } else {
                encoded.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return encoded.toString();
    }
}
