package dev.serval.api.grpc;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ModelMetadataResponse;
import dev.serval.api.grpc.v2.ModelReadyResponse;
import dev.serval.api.grpc.v2.RepositoryIndexResponse;
import dev.serval.api.grpc.v2.RepositoryModelLoadRequest;
import dev.serval.api.grpc.v2.RepositoryModelLoadResponse;
import dev.serval.api.grpc.v2.RepositoryModelUnloadResponse;
import dev.serval.api.grpc.v2.ServerLiveResponse;
import dev.serval.api.grpc.v2.ServerMetadataResponse;
import dev.serval.api.grpc.v2.ServerReadyResponse;
import dev.serval.api.http.ApiError;
import dev.serval.api.http.ApiToken;
import dev.serval.api.http.ByteBudget;
import dev.serval.api.http.ErrorResponses;
import dev.serval.api.http.Http2StreamLimit;
import dev.serval.api.http.IndexEntry;
import dev.serval.api.http.InferenceResource;
import dev.serval.api.http.JsonNodes;
import dev.serval.api.http.ModelMetadata;
import dev.serval.api.http.RepositoryResource;
import dev.serval.api.http.RequestDeadlines;
import dev.serval.api.http.RequestIds;
import dev.serval.api.http.RequestLimits;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.error.InvalidInput;
import dev.serval.model.TensorSignature;
import io.grpc.MethodDescriptor;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The Open Inference Protocol's gRPC service ({@code inference.GRPCInferenceService}, src/main/proto) on the HTTP
 * port: HTTP/2 requests with a {@code application/grpc} content type go to a Vert.x gRPC server, everything else on to
 * the REST routes, so one port and one Service serve both.
 *
 * <p>{@code ModelInfer} and {@code ModelStreamInfer} ({@link ModelInferCalls}) take REST's inference call
 * ({@code InferenceCall}): the same deployments, admission, deadlines, input limits ({@link GrpcTensors}; the message
 * size is {@code serval.http.max-body-size}), cancellation, request ids ({@code x-request-id} metadata) and request
 * meters (with {@code api="grpc"}). Errors are the statuses of the one error table ({@link GrpcRefusals}). The other
 * RPCs answer what their REST counterparts answer; the repository extension needs
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
    /** The path of the one streaming RPC; every other is unary. */
    private static final String STREAM_INFER = "/" + GRPCInferenceServiceGrpc.getModelStreamInferMethod()
            .getFullMethodName();

    private final DeploymentRegistry deployments;
    private final InferenceResource metadata;
    private final RepositoryResource repository;
    private final ApiToken token;
    private final ByteBudget budget;
    private final GrpcRefusals refusals;
    private final Http2StreamLimit streamLimit;
    private final GrpcConnectionShare.Table connections;
    private final RequestLimits limits;
    private final long maxMessageSize;
    private final Duration bodyTimeout;
    private final String version;
    private final Optional<Integer> separatePort;
    private final String host;
    /** The HTTP port's connection limits, given to the separate port's server ({@code serval.grpc.port}). */
    private final Duration idleTimeout;
    private final OptionalLong maxStreams;
    /** The Vert.x the gRPC server runs on (timers, blocking work): Quarkus's, or its own on a separate port. */
    private volatile Vertx vertx;

    GrpcInferenceService(DeploymentRegistry deployments, InferenceResource metadata, RepositoryResource repository,
            ApiToken token, ByteBudget budget, Http2StreamLimit streamLimit, ServalConfig config,
            @ConfigProperty(name = "quarkus.http.host", defaultValue = "0.0.0.0") String host,
            @ConfigProperty(name = "quarkus.http.idle-timeout", defaultValue = "30M") Duration idleTimeout,
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
        this.refusals = new GrpcRefusals(budget, connections, maxMessageSize, bodyTimeout.toMillis());
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
            if (request.version() != HttpVersion.HTTP_2 || type == null || !type.startsWith(GrpcRefusals.GRPC)) {
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
            refusals.refuse(request, GrpcBytesInTransit.Refusal.OVER_BUDGET);
            return;
        }
        GrpcConnectionShare share = connections.of(request.connection());
        if (!share.open()) {
            refusals.refuse(request, GrpcBytesInTransit.Refusal.CONNECTION_CALLS);
            return;
        }
        boolean unary = !request.path().equals(STREAM_INFER);
        GrpcBytesInTransit call = new GrpcBytesInTransit(request, budget, share, RequestDeadlines.onThisLoop(vertx),
                bodyTimeout.toMillis(), unary, maxMessageSize, refusals::refuse);
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

    void stop(@Observes ShutdownEvent event) {
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
        unary(server, GRPCInferenceServiceGrpc.getModelReadyMethod(), request -> CompletableFuture.completedFuture(
                ModelReadyResponse.newBuilder().setReady(metadata.ready(request.getName())).build()));
        unary(server, GRPCInferenceServiceGrpc.getModelMetadataMethod(),
                request -> metadata.model(request.getName()).thenApply(GrpcInferenceService::modelMetadata));
        ModelInferCalls inference = new ModelInferCalls(deployments, limits, vertx);
        server.callHandler(GrpcMessages.served(GRPCInferenceServiceGrpc.getModelInferMethod(), limits),
                inference::infer);
        server.callHandler(GrpcMessages.served(GRPCInferenceServiceGrpc.getModelStreamInferMethod(), limits),
                inference::stream);
        managed(server, GRPCInferenceServiceGrpc.getRepositoryIndexMethod(), request -> {
            RepositoryIndexResponse.Builder index = RepositoryIndexResponse.newBuilder();
            for (IndexEntry entry : repository.index()) {
                if (!request.getReady() || "READY".equals(entry.state())) {
                    index.addModels(RepositoryIndexResponse.ModelIndex.newBuilder().setName(entry.name())
                            .setVersion(entry.version()).setState(entry.state()).setReason(entry.reason()));
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
        server.callHandler(GrpcMessages.served(method, limits), request -> GrpcMessages.whenRead(request, message -> {
            Context context = Vertx.currentContext();
            CompletionStage<R> answer;
            try {
                answer = call.apply(message);
            } catch (Throwable e) {
                GrpcRefusals.fail(request.response(), e);
                return;
            }
            answer.whenComplete((value, failure) -> context.runOnContext(ignored -> {
                if (failure != null) {
                    GrpcRefusals.fail(request.response(), ErrorResponses.unwrap(failure));
                } else {
                    request.response().end(value);
                }
            }));
        }));
    }

    /** A repository RPC: the management token first, then {@code call} on a worker thread (it changes deployments). */
    private <Q, R> void managed(GrpcServer server, MethodDescriptor<Q, R> method, Function<Q, R> call) {
        server.callHandler(GrpcMessages.served(method, limits), request -> {
            String authorization = request.headers().get(HttpHeaders.AUTHORIZATION);
            GrpcMessages.whenRead(request, message -> {
                if (!token.accepts(authorization)) {
                    GrpcRefusals.fail(request.response(), new ApiError(401, authorization == null
                            ? "this call needs the management token: authorization: Bearer <token> metadata"
                            : "the management token is wrong"));
                    return;
                }
                Context context = Vertx.currentContext();
                vertx.<R>executeBlocking(() -> call.apply(message), false).onComplete(done -> context.runOnContext(
                        ignored -> {
                            if (done.failed()) {
                                GrpcRefusals.fail(request.response(), ErrorResponses.unwrap(done.cause()));
                            } else {
                                request.response().end(done.result());
                            }
                        }));
            });
        });
    }

    /** A load request's parameters as the REST load's body: {@code {"parameters": {...}}}, each a deployment field. */
    private static byte[] loadBody(RepositoryModelLoadRequest request) {
        ObjectNode parameters = JsonNodes.object();
        request.getParametersMap().forEach((name, value) -> {
            switch (value.getParameterChoiceCase()) {
                case BOOL_PARAM -> parameters.put(name, value.getBoolParam());
                case INT64_PARAM -> parameters.put(name, value.getInt64Param());
                case STRING_PARAM -> parameters.put(name, value.getStringParam());
                default -> throw new InvalidInput("parameters." + name, "parameter '" + name
                        + "' must be a bool, int64 or string deployment field");
            }
        });
        ObjectNode body = JsonNodes.object();
        body.set("parameters", parameters);
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static ModelMetadataResponse modelMetadata(ModelMetadata model) {
        ModelMetadataResponse.Builder response = ModelMetadataResponse.newBuilder().setName(model.name())
                .setPlatform(model.platform() == null ? "" : model.platform());
        if (model.versions() != null) {
            response.addAllVersions(model.versions());
        }
        if (model.inputs() != null) {
            model.inputs().forEach(tensor -> response.addInputs(tensorMetadata(tensor)));
        }
        if (model.outputs() != null) {
            model.outputs().forEach(tensor -> response.addOutputs(tensorMetadata(tensor)));
        }
        return response.build();
    }

    private static ModelMetadataResponse.TensorMetadata tensorMetadata(TensorSignature tensor) {
        return ModelMetadataResponse.TensorMetadata.newBuilder().setName(tensor.name())
                .setDatatype(tensor.datatype()).addAllShape(tensor.shape()).build();
    }
}
