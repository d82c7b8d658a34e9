package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.serving.DeploymentRegistry;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import org.jboss.logging.Logger;

/**
 * The two inference endpoints, {@code POST /v2/models/{name}/infer} (Open Inference Protocol) and
 * {@code POST /v1/embeddings} (OpenAI), served straight from Vert.x routes on the event loop. They are the hot path,
 * so they skip what a JAX-RS endpoint pays per request and does not need here: media-type negotiation and
 * per-request reader/writer lookup, the CDI request context, and context propagation around a Mutiny pipeline
 * (together a sixth of Serval's CPU and a quarter of its allocation on the no-op benchmark). Everything else (metadata,
 * health, management) stays in JAX-RS. Their OpenAPI description is in {@code META-INF/openapi.yaml}.
 *
 * <p>Each request runs through the request pipeline, one {@link InferenceExchange} per request ({@link OipExchange},
 * {@link EmbeddingsExchange}), which answers it, or with the error in the endpoint's format ({@link ErrorResponses}).
 * This class holds what every exchange shares (stateless codecs, the body limits and budget, the registry) and writes
 * answers. Other methods get 405.
 */
@Singleton
public class InferenceRoutes {

    static final String INFER = "/v2/models/:name/infer";
    static final String EMBEDDINGS = "/v1/embeddings";

    private static final Logger LOG = Logger.getLogger(InferenceRoutes.class);

    private final DeploymentRegistry deployments;
    private final RequestBodies bodies;
    private final ByteBudget budget;
    private final ObjectMapper mapper;
    private final OipRequestDecoder decoder;
    private final OipResponseEncoder encoder;
    private final OpenAiEmbeddings embeddings;
    private final java.time.Duration bodyTimeout;
    private final long minBodyRate;

    InferenceRoutes(DeploymentRegistry deployments, RequestBodies bodies, ByteBudget budget, ServalConfig config,
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
        this.bodyTimeout = config.http().bodyTimeout();
        if (bodyTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("serval.http.body-timeout must be at least 1ms, was " + bodyTimeout);
        }
        this.minBodyRate = config.http().minBodyRate().asLongValue();
        if (minBodyRate < 1) {
            throw new IllegalArgumentException("serval.http.min-body-rate must be at least 1 byte a second, was "
                    + minBodyRate);
        }
    }

    void install(@Observes io.vertx.ext.web.Router router) {
        router.post(INFER).handler(context -> new OipExchange(context, this).run());
        router.post(EMBEDDINGS).handler(context -> new EmbeddingsExchange(context, this).run());
        router.route(INFER).handler(context -> methodNotAllowed(context, this, Dialect.OIP));
        router.route(EMBEDDINGS).handler(context -> methodNotAllowed(context, this, Dialect.OPENAI));
    }

    DeploymentRegistry deployments() {
        return deployments;
    }

    RequestBodies bodies() {
        return bodies;
    }

    ByteBudget budget() {
        return budget;
    }

    /** How long a request's body may take to arrive ({@code serval.http.body-timeout}). */
    java.time.Duration bodyTimeout() {
        return bodyTimeout;
    }

    /** The slowest a request body may come on average past {@link #bodyTimeout}, in bytes a second
     * ({@code serval.http.min-body-rate}). */
    long minBodyRate() {
        return minBodyRate;
    }

    OipRequestDecoder oipDecoder() {
        return decoder;
    }

    OipResponseEncoder oipEncoder() {
        return encoder;
    }

    OpenAiEmbeddings embeddings() {
        return embeddings;
    }

    static void methodNotAllowed(RoutingContext context, InferenceRoutes routes, Dialect dialect) {
        context.response().putHeader(HttpHeaders.ALLOW, "POST");
        routes.fail(context, dialect, new ApiError(405, "method " + context.request().method() + " is not allowed on "
                + context.request().path() + "; use POST"));
    }

    /** Sends the error answer for {@code failure} in the endpoint's format. */
    void fail(RoutingContext context, Dialect dialect, Throwable failure) {
        ErrorResponses.Failure error = ErrorResponses.Failure.of(dialect, failure);
        byte[] body;
        try {
            body = mapper.writeValueAsBytes(error.body());
        } catch (JsonProcessingException e) {
            LOG.error("could not encode an error answer", e);
            body = "{\"error\":\"internal server error\"}".getBytes(StandardCharsets.UTF_8);
        }
        send(context.response(), new Answer(error.status(), Answer.JSON, body, error.retryAfter()));
    }

    /** Writes {@code answer}, unless the response was already sent or its connection closed. */
    static void send(HttpServerResponse response, Answer answer) {
        if (response.ended() || response.closed()) {
            return;
        }
        response.setStatusCode(answer.status()).putHeader(HttpHeaders.CONTENT_TYPE, answer.contentType());
        answer.headers().forEach(response::putHeader);
        // Wraps the encoder's array: Buffer.buffer(byte[]) would copy it.
        response.end(Buffer.buffer(Unpooled.wrappedBuffer(answer.body(), 0, answer.length())));
    }
}
