package dev.serval.api.http;

import dev.serval.model.Embedding;
import dev.serval.request.CallContext;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An OpenAI embeddings request ({@code POST /v1/embeddings}) through the pipeline: the deployment is the one the
 * body's {@code model} names, which must serve a text-embedding model; its texts are embedded in one call
 * ({@code Deployment.embed}, which also holds {@code dimensions} to the model's own); the answer is OpenAI's JSON.
 */
final class EmbeddingsExchange extends InferenceExchange<EmbeddingsRequest, List<Embedding>> {

    EmbeddingsExchange(RoutingContext context, InferenceRoutes routes) {
        super(context, routes, Dialect.OPENAI);
    }

    @Override
    EmbeddingsRequest decode(byte[] body, RuntimeException refusal) {
        if (refusal != null) {
            throw refusal;
        }
        RequestBodies.checkContentType(context.request().getHeader(HttpHeaders.CONTENT_TYPE), false);
        EmbeddingsRequest request = routes.embeddings().decode(body);
        served = routeOrUnknown(request.model());
        served.embeddings(); // refuses models of other kinds
        return request;
    }

    @Override
    CompletableFuture<List<Embedding>> infer(EmbeddingsRequest request, CallContext call) {
        return served.embeddings().embed(request.texts(), request.dimensions(), call);
    }

    @Override
    int inputs(EmbeddingsRequest request, List<Embedding> answer) {
        return request.texts().size();
    }

    @Override
    Answer encode(EmbeddingsRequest request, List<Embedding> answer) {
        return routes.embeddings().encode(request, answer);
    }
}
