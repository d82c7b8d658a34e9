package dev.serval.api.http;

import dev.serval.api.serving.ServedDeployment;
import dev.serval.model.Embedding;
import dev.serval.request.CallContext;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A Hugging Face TEI embedding request ({@code POST /embed}, {@code /similarity}, and their {@code /tei/<deployment>/}
 * forms) through the pipeline: the deployment is the one the path names (the root paths name
 * {@code serval.tei.deployment}), found on the headers, which must serve a text-embedding model; the texts are embedded
 * in one call ({@code Deployment.embed}); the answer is TEI's JSON ({@link TeiRoutes}).
 */
final class TeiExchange extends InferenceExchange<TeiRequest, List<Embedding>> {

    private final TeiRoutes tei;
    private final String name;
    private final Task task;

    /** What the route asks for: embeddings, similarities, or (the deployment's own URL) what the body's shape says. */
    enum Task { EMBED, SIMILARITY, ANY }

    TeiExchange(RoutingContext context, TeiRoutes tei, String name, Task task) {
        super(context, tei.inference(), Dialect.TEI);
        this.tei = tei;
        this.name = name;
        this.task = task;
    }

    @Override
    ServedDeployment findOnHeaders() {
        return route(name);
    }

    @Override
    TeiRequest decode(byte[] body, RuntimeException refusal) {
        if (served == null) {
            served = routeOrUnknown(name);
        }
        if (refusal != null) {
            throw refusal;
        }
        RequestBodies.checkContentType(context.request().getHeader(HttpHeaders.CONTENT_TYPE), false);
        TeiRequest request = tei.decode(body, task);
        served.embeddings(); // refuses models of other kinds
        return request;
    }

    @Override
    CompletableFuture<List<Embedding>> infer(TeiRequest request, CallContext call) {
        return served.embeddings().embed(request.texts(), request.dimensions(), call);
    }

    @Override
    int inputs(TeiRequest request, List<Embedding> answer) {
        return request.texts().size();
    }

    @Override
    Answer encode(TeiRequest request, List<Embedding> answer) {
        return request.similarity() ? tei.similarities(answer) : tei.embeddings(answer, request.normalize());
    }
}
