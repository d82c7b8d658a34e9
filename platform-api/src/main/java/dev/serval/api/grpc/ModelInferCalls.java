package dev.serval.api.grpc;

import dev.serval.api.grpc.v2.InferParameter;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import dev.serval.api.grpc.v2.ModelStreamInferResponse;
import dev.serval.api.http.ErrorResponses;
import dev.serval.api.http.FlushOnce;
import dev.serval.api.http.InferenceCall;
import dev.serval.api.http.RequestDeadlines;
import dev.serval.api.http.RequestIds;
import dev.serval.api.http.RequestLimits;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.RequestMeters;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Inference;
import dev.serval.error.InvalidInput;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.tensor.Tensors;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.grpc.common.CodecException;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.InvalidMessageException;
import io.vertx.grpc.server.GrpcServerRequest;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * The OIP inference RPCs, {@code ModelInfer} and {@code ModelStreamInfer}: each request decoded from its message
 * ({@link GrpcTensors}) with its deployment (a multiplexed model by its {@code model-id} metadata) and its time budget
 * ({@code grpc-timeout}, {@code parameters["timeout"]} or the deployment's {@code request_timeout}, the shortest), then
 * run through the call every transport shares ({@link InferenceCall}); the answer's message is built where the engine
 * completed it. Event loop only, but for that build.
 */
final class ModelInferCalls {

    private static final Pattern TIMEOUT = Pattern.compile("(\\d{1,8})([HMSmun])");

    private final DeploymentRegistry deployments;
    private final RequestLimits limits;
    /** The Vert.x the calls run on: its event loops' deadline wheels. */
    private final Vertx vertx;

    ModelInferCalls(DeploymentRegistry deployments, RequestLimits limits, Vertx vertx) {
        this.deployments = deployments;
        this.limits = limits;
        this.vertx = vertx;
    }

    /**
     * {@code ModelInfer}: one request, run once its client has sent the message and ended its side; answered with
     * the response, or ended with the status of its failure; cancelled when the client cancels or goes away.
     */
    void infer(GrpcServerRequest<ModelInferRequest, ModelInferResponse> call) {
        Metadata metadata = Metadata.of(call);
        GrpcMessages.whenRead(call, message -> {
            CompletableFuture<ModelInferResponse> answer = run(message, metadata, Vertx.currentContext());
            // A client that cancels resets its stream, which Vert.x reports as a gRPC error (CANCELLED) on the request;
            // a connection that breaks, as an exception: either way the request leaves the queue or its run ends.
            call.errorHandler(error -> answer.cancel(false));
            call.exceptionHandler(e -> answer.cancel(false));
            answer.whenComplete((response, failure) -> {
                if (failure == null) {
                    FlushOnce.around(call.connection(), () -> call.response().end(response));
                } else if (!(failure instanceof CancellationException)) {
                    GrpcRefusals.fail(call.response(), failure);
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
                throw deployments.unknown(message.getModelName());
            }
        } catch (Throwable e) {
            answer.completeExceptionally(e);
            return answer;
        }
        List<String> outputs = message.getOutputsCount() == 0 ? null : message.getOutputsList().stream()
                .map(ModelInferRequest.InferRequestedOutputTensor::getName).toList();
        Tensors inputs;
        long budget;
        try {
            inputs = GrpcTensors.inputs(message, limits);
            budget = Math.min(served.requestTimeout().toMillis(), Math.min(timeoutMillis(metadata.timeout()),
                    timeoutParameterMillis(message)));
        } catch (Throwable e) {
            InferenceCall.recordRefused(served, RequestMeters.Api.GRPC, start, e);
            answer.completeExceptionally(e);
            return answer;
        }
        InferenceCall<Inference, ModelInferResponse> call = new InferenceCall<>(served, RequestMeters.Api.GRPC, start,
                new Unary(served, message, inputs, outputs, message.getRawInputContentsCount() > 0, answer));
        call.start(metadata.requestId(), budget, RequestDeadlines.onThisLoop(vertx), context);
        answer.whenComplete((ignored, failure) -> {
            if (failure instanceof CancellationException) {
                call.cancel(); // the caller's cancel
            }
        });
        return answer;
    }

    /**
     * A {@code ModelInfer} request as a transport of the shared call: its decoded inputs handed to the deployment;
     * its answer built where the engine completed it (the requested outputs, read from the version that answered: a
     * rolling update may have two) and handed over on the event loop by completing {@code answer}.
     */
    private record Unary(ServedDeployment served, ModelInferRequest message, Tensors inputs, List<String> outputs,
            boolean raw, CompletableFuture<ModelInferResponse> answer)
            implements InferenceCall.Transport<Inference, ModelInferResponse> {

        @Override
        public CompletableFuture<Inference> infer(CallContext context) {
            return served.deployment().infer(new InferenceRequest(inputs, outputs, context));
        }

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
    void stream(GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> call) {
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
        private final Set<CompletableFuture<ModelInferResponse>> running = new HashSet<>();
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
                            Locale.ROOT));
        };
        if (micros < 0) {
            throw new InvalidInput("parameters.timeout", "parameters.timeout must be a non-negative number of "
                    + "microseconds, not " + micros);
        }
        return micros == Long.MAX_VALUE ? Long.MAX_VALUE : Math.ceilDiv(micros, 1000);
    }
}
