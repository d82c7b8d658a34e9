package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Deployment;
import dev.serval.predictor.Embedding;
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
    private final ObjectMapper mapper;
    private final OipRequestDecoder decoder;
    private final OipResponseEncoder encoder;
    private final OpenAiEmbeddings embeddings;

    InferenceRoutes(Deployments deployments, RequestBodies bodies, ObjectMapper mapper) {
        this.deployments = deployments;
        this.bodies = bodies;
        this.mapper = mapper;
        Json json = new Json(mapper);
        this.decoder = new OipRequestDecoder(json);
        this.encoder = new OipResponseEncoder(mapper.getFactory());
        this.embeddings = new OpenAiEmbeddings(json, mapper.getFactory());
    }

    void install(@Observes io.vertx.ext.web.Router router) {
        router.post(INFER).handler(context -> withBody(context, false, body -> infer(context, body)));
        router.post(EMBEDDINGS).handler(context -> withBody(context, true, body -> embed(context, body)));
        router.route(INFER).handler(context -> methodNotAllowed(context, false));
        router.route(EMBEDDINGS).handler(context -> methodNotAllowed(context, true));
    }

    private void infer(RoutingContext context, Body body) {
        HttpServerRequest http = context.request();
        String name = context.pathParam("name");
        ServedDeployment served = deployments.get(name);
        String contentType = http.getHeader(HttpHeaders.CONTENT_TYPE);
        String headerLength = http.getHeader(OipResponseEncoder.HEADER_LENGTH);
        Submissions.submit(new RouteExchange(context, false), served, DeploymentMeters.Api.OIP, body.startNanos(),
                http.getHeader(Submissions.TIMEOUT_HEADER),
                () -> {
                    RequestBodies.checkContentType(contentType, true);
                    return decoder.decode(body.read(bodies), headerLength);
                },
                OipRequest::timeoutMicros,
                request -> submit(served.deployment(), request),
                (request, call) -> encoder.encode(name, call.version(), request, call.outputs()));
    }

    private void embed(RoutingContext context, Body body) {
        HttpServerRequest http = context.request();
        RequestBodies.checkContentType(http.getHeader(HttpHeaders.CONTENT_TYPE), false);
        EmbeddingsRequest request = embeddings.decode(body.read(bodies));
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
     * @param bytes    the body, or null when it is over the limit
     * @param oversize the size of a body over the limit (as declared, or as read until its end)
     */
    private record Body(byte[] bytes, long oversize, long startNanos) {

        /** The body; throws the 413 when it is over the limit, so that the endpoint meters it like other bad input. */
        byte[] read(RequestBodies bodies) {
            if (bytes == null) {
                throw bodies.tooLarge(oversize);
            }
            return bytes;
        }
    }

    /**
     * Reads the body up to the limit, then hands it to {@code then}, which answers; a body over the limit is not
     * buffered (nor read at all when its Content-Length says so) and reaches {@code then} as a 413 to throw. Anything
     * {@code then} throws is answered in the endpoint's error format.
     */
    private void withBody(RoutingContext context, boolean openAi, Consumer<Body> then) {
        long start = System.nanoTime();
        HttpServerRequest http = context.request();
        long limit = bodies.maxBodySize();
        long declared = RequestBodies.declaredLength(http);
        if (declared > limit) {
            accept(context, openAi, then, new Body(null, declared, start));
            return;
        }
        // Sized by Content-Length up to 64 KiB: a client that declares a large body and sends nothing holds little.
        Buffer buffer = Buffer.buffer((int) Math.min(Math.max(declared, 1024), 64 * 1024));
        long[] received = {0};
        http.handler(chunk -> {
            received[0] += chunk.length();
            if (received[0] <= limit) {
                buffer.appendBuffer(chunk);
            }
        });
        http.endHandler(ignored -> accept(context, openAi, then, received[0] > limit
                ? new Body(null, received[0], start) : new Body(buffer.getBytes(), 0, start)));
    }

    private void accept(RoutingContext context, boolean openAi, Consumer<Body> then, Body body) {
        try {
            then.accept(body);
        } catch (RuntimeException e) {
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
            context.response().closeHandler(ignored -> action.run());
        }
    }
}
