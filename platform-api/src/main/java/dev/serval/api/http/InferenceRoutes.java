package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Deployment;
import dev.serval.model.Embedding;
import dev.serval.routing.Router;
import dev.serval.tensor.TensorIO;
import dev.serval.tensor.Tensors;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The two inference endpoints, {@code POST /v2/models/{name}/infer} (Open Inference Protocol) and
 * {@code POST /v1/embeddings} (OpenAI), served straight from Vert.x routes on the event loop. They are the hot path,
 * so they skip what a JAX-RS endpoint pays per request and does not need here: media-type negotiation and
 * per-request reader/writer lookup, the CDI request context, and context propagation around a Mutiny pipeline
 * (together a sixth of Serval's CPU and a quarter of its allocation on the no-op benchmark). Everything else (metadata,
 * health, management) stays in JAX-RS. Their OpenAPI description is in {@code META-INF/openapi.yaml}.
 *
 * <p>Each request: the body is read up to {@code serval.http.max-body-size} (413 beyond, without buffering more,
 * and without reading it when Content-Length says so), then {@link Submissions} decodes it, submits it to the
 * deployment and writes the answer, or the error in the endpoint's format ({@link ErrorResponses}). Other methods
 * get 405.
 */
@Singleton
public class InferenceRoutes {

    static final String INFER = "/v2/models/:name/infer";
    static final String EMBEDDINGS = "/v1/embeddings";

    private static final Logger LOG = Logger.getLogger(InferenceRoutes.class);

    private final Deployments deployments;
    private final RequestBodies bodies;
    private final ByteBudget budget;
    private final ObjectMapper mapper;
    private final OipRequestDecoder decoder;
    private final OipResponseEncoder encoder;
    private final OpenAiEmbeddings embeddings;

    InferenceRoutes(Deployments deployments, RequestBodies bodies, ByteBudget budget, ServalConfig config,
            ObjectMapper mapper) {
        this.deployments = deployments;
        this.bodies = bodies;
        this.budget = budget;
        this.mapper = mapper;
        Json json = new Json(mapper);
        RequestLimits limits = RequestLimits.of(config.http());
        this.decoder = new OipRequestDecoder(json, limits);
        this.encoder = new OipResponseEncoder(mapper.getFactory());
        this.embeddings = new OpenAiEmbeddings(json, mapper.getFactory(), limits);
    }

    void install(@Observes io.vertx.ext.web.Router router) {
        router.post(INFER).handler(context -> guarded(context, false, () -> {
            ServedDeployment target = deployments.find(context.pathParam("name")).orElse(null);
            withBody(context, false, target, body -> infer(context, target, body));
        }));
        router.post(EMBEDDINGS).handler(context -> guarded(context, true,
                () -> withBody(context, true, null, body -> embed(context, body))));
        router.route(INFER).handler(context -> methodNotAllowed(context, false));
        router.route(EMBEDDINGS).handler(context -> methodNotAllowed(context, true));
    }

    /** @param target the deployment the path named, as found on the headers; null when none has that name (404) */
    private void infer(RoutingContext context, ServedDeployment target, Body body) {
        HttpServerRequest http = context.request();
        String name = context.pathParam("name");
        ServedDeployment served = target != null ? target : deployments.get(name);
        String contentType = http.getHeader(HttpHeaders.CONTENT_TYPE);
        String headerLength = http.getHeader(OipResponseEncoder.HEADER_LENGTH);
        Submissions.submit(new RouteExchange(context, false), served, DeploymentMeters.Api.OIP, body.startNanos(),
                http.getHeader(Submissions.TIMEOUT_HEADER),
                () -> {
                    byte[] bytes = body.read();
                    RequestBodies.checkContentType(contentType, true);
                    return decoder.decode(bytes, headerLength);
                },
                OipRequest::timeoutMicros,
                request -> submit(served.deployment(), request),
                (request, call) -> encoder.encode(name, call.version(), request, call.outputs()));
    }

    private void embed(RoutingContext context, Body body) {
        HttpServerRequest http = context.request();
        byte[] bytes = body.read();
        RequestBodies.checkContentType(http.getHeader(HttpHeaders.CONTENT_TYPE), false);
        EmbeddingsRequest request = embeddings.decode(bytes);
        ServedDeployment served = deployments.get(request.model());
        Submissions.submit(new RouteExchange(context, true), served, DeploymentMeters.Api.OPENAI, body.startNanos(),
                http.getHeader(Submissions.TIMEOUT_HEADER),
                () -> OpenAiEmbeddings.checkDimensions(served, request),
                ignored -> -1,
                accepted -> {
                    CompletableFuture<List<Embedding>> result = served.embeddings().submit(accepted.texts());
                    return new Submissions.Submitted<>(result, accepted.texts().size(), result);
                },
                (accepted, result) -> embeddings.encode(accepted, result.join()));
    }

    /** What the encoder needs of a submitted OIP request once its result is in. */
    private record Call<I, O>(Deployment<I, O> deployment, CompletableFuture<List<O>> result) {

        /** The output tensors, mapped by the model of the replica that answered (its labels, its output names). */
        Tensors outputs() {
            return deployment.io(result).outputs(result.join());
        }

        /** The version of the replica that answered (the deployment's, if the request never reached one). */
        String version() {
            return Router.servedVersion(result).orElse(deployment.spec().version());
        }
    }

    /**
     * Maps the request's tensors to the model's inputs (its kind decides how) and submits them. Requested outputs are
     * checked here when every serving replica runs one model; while a rolling update has two serving, the encoder
     * checks them against the outputs of the version that answered.
     */
    private static <I, O> Submissions.Submitted<Call<?, ?>> submit(Deployment<I, O> deployment, OipRequest request) {
        TensorIO<I, O> io = deployment.io();
        if (request.outputs() != null) {
            deployment.uniformSignature()
                    .ifPresent(signature -> OipResponseEncoder.checkRequestedOutputs(request, signature));
        }
        List<I> inputs = io.inputs(request.inputs());
        CompletableFuture<List<O>> result = deployment.submit(inputs);
        return new Submissions.Submitted<>(result, inputs.size(), new Call<>(deployment, result));
    }

    /**
     * A request body, and when its request arrived.
     *
     * @param bytes   the body, or null when the request was refused before it was read whole
     * @param refusal why it was refused (413 over the size limit, 503 over the byte budget, {@code Overloaded} when the
     *                deployment's queue was full on arrival), or null
     */
    private record Body(byte[] bytes, RuntimeException refusal, long startNanos) {

        /** The body; throws the refusal instead, so that the endpoint meters it like other bad input. */
        byte[] read() {
            if (refusal != null) {
                throw refusal;
            }
            return bytes;
        }
    }

    /**
     * Reads the body, then hands it to {@code then}, which answers. Refused on the headers alone, without reading the
     * body, when its Content-Length is over {@code serval.http.max-body-size}, when the server already holds
     * {@code serval.http.max-buffered-bytes} of requests, or when {@code target} (the deployment the path names, if
     * any) has a full queue: the refusal reaches {@code then} as a body to throw, and costs about what a no-op
     * request costs. While reading, every chunk is reserved in the byte budget (released when the answer is sent or
     * the connection closes); a body that outgrows the size limit or the budget stops being buffered and is refused
     * at its end.
     */
    private void withBody(RoutingContext context, boolean openAi, ServedDeployment target, Consumer<Body> then) {
        long start = System.nanoTime();
        HttpServerRequest http = context.request();
        long limit = bodies.maxBodySize();
        long declared = RequestBodies.declaredLength(http);
        RuntimeException early = null;
        if (declared > limit) {
            early = bodies.tooLarge(declared);
        } else if (budget.exhausted()) {
            early = budget.full();
        } else if (target != null) {
            try {
                target.deployment().checkAccepting();
            } catch (RuntimeException e) {
                early = e;
            }
        }
        if (early != null) {
            if (declared > DISCARD_LIMIT || declared < 0) {
                // Reading on only to discard a large or unbounded body wastes more than a new connection costs.
                context.response().putHeader(HttpHeaders.CONNECTION, "close");
            }
            http.handler(ignored -> { });
            accept(context, openAi, then, new Body(null, early, start));
            return;
        }
        Reading reading = new Reading(limit, declared);
        context.addEndHandler(ignored -> budget.release(reading.reserved));
        http.handler(reading);
        http.endHandler(ignored -> accept(context, openAi, then, reading.body(start)));
    }

    /** Bodies up to this size are read to their end and discarded after an early refusal, keeping the connection. */
    private static final long DISCARD_LIMIT = 64 * 1024;

    /** One body being read: buffers it while it fits the size limit and the byte budget. Event loop only. */
    private final class Reading implements io.vertx.core.Handler<Buffer> {
        private final long limit;
        private final Buffer buffer;
        private long received;
        private long reserved;
        private boolean overBudget;

        Reading(long limit, long declared) {
            this.limit = limit;
            // Sized by Content-Length up to 64 KiB: a client that declares a large body and sends nothing holds little.
            this.buffer = Buffer.buffer((int) Math.min(Math.max(declared, 1024), 64 * 1024));
        }

        @Override
        public void handle(Buffer chunk) {
            received += chunk.length();
            if (received > limit || overBudget) {
                return;
            }
            long taken = budget.reserve(chunk.length());
            reserved += taken;
            if (taken < chunk.length()) {
                overBudget = true;
                return;
            }
            buffer.appendBuffer(chunk);
        }

        Body body(long start) {
            if (received > limit) {
                return new Body(null, bodies.tooLarge(received), start);
            }
            if (overBudget) {
                return new Body(null, budget.full(), start);
            }
            return new Body(buffer.getBytes(), null, start);
        }
    }

    /** Runs a route's handler; anything it throws is answered in the endpoint's format, so the exchange never hangs. */
    private void guarded(RoutingContext context, boolean openAi, Runnable handler) {
        try {
            handler.run();
        } catch (Throwable e) {
            fail(context, openAi, e);
        }
    }

    private void accept(RoutingContext context, boolean openAi, Consumer<Body> then, Body body) {
        try {
            then.accept(body);
        } catch (Throwable e) {
            fail(context, openAi, e);
        }
    }

    private void methodNotAllowed(RoutingContext context, boolean openAi) {
        context.response().putHeader(HttpHeaders.ALLOW, "POST");
        fail(context, openAi, new ApiError(405, "method " + context.request().method() + " is not allowed on "
                + context.request().path() + "; use POST"));
    }

    private void fail(RoutingContext context, boolean openAi, Throwable failure) {
        ErrorResponses.Failure error = openAi ? ErrorResponses.Failure.openAi(failure)
                : ErrorResponses.Failure.oip(failure);
        byte[] body;
        try {
            body = mapper.writeValueAsBytes(error.body());
        } catch (JsonProcessingException e) {
            LOG.error("could not encode an error answer", e);
            body = "{\"error\":\"internal server error\"}".getBytes(StandardCharsets.UTF_8);
        }
        send(context.response(), new Answer(error.status(), Answer.JSON, body, error.retryAfter()));
    }

    private static void send(HttpServerResponse response, Answer answer) {
        if (response.ended() || response.closed()) {
            return;
        }
        response.setStatusCode(answer.status()).putHeader(HttpHeaders.CONTENT_TYPE, answer.contentType());
        answer.headers().forEach(response::putHeader);
        response.end(Buffer.buffer(Unpooled.wrappedBuffer(answer.body()))); // wraps: Buffer.buffer(byte[]) copies
    }

    /** One request's HTTP exchange, as {@link Submissions} sees it. */
    private final class RouteExchange implements Submissions.Exchange {

        private final RoutingContext context;
        private final boolean openAi;

        RouteExchange(RoutingContext context, boolean openAi) {
            this.context = context;
            this.openAi = openAi;
        }

        @Override
        public void send(Answer answer) {
            InferenceRoutes.send(context.response(), answer);
        }

        @Override
        public void fail(Throwable failure) {
            InferenceRoutes.this.fail(context, openAi, failure);
        }

        @Override
        public void onClientGone(Runnable action) {
            // Through the routing context's end handlers, which also release the request's byte budget: setting the
            // response's close handler directly would replace theirs.
            context.addEndHandler(ended -> {
                if (ended.failed()) {
                    action.run();
                }
            });
        }
    }
}
