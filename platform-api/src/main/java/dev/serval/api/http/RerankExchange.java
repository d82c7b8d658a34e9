package dev.serval.api.http;

import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Inference;
import dev.serval.error.InvalidInput;
import dev.serval.model.ModelKind;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A rerank request through the pipeline, in Jina's and Cohere's dialect ({@code POST /v1/rerank}, {@code /v2/rerank}:
 * the body's {@code model} names the deployment) or TEI's ({@code POST /rerank} and {@code /tei/<deployment>/rerank}:
 * the path does). The deployment must serve a {@code text-rerank} model; the query and the documents go to it as its
 * OIP tensors ({@code query} BYTES [1], {@code documents} BYTES [n]) through {@code Deployment.infer}, so a rerank
 * request is admitted, batched (its pairs with other requests' pairs), timed and metered as every request is; the
 * answer's scores are sorted here ({@link RerankRoutes}).
 */
final class RerankExchange extends InferenceExchange<RerankRequest, Inference> {

    private final RerankRoutes rerank;
    private final Dialect dialect;
    /** The deployment the path names (TEI), or null when the body does (Jina, Cohere). */
    private final String pathName;
    private final boolean returnDocumentsByDefault;

    RerankExchange(RoutingContext context, InferenceRoutes routes, RerankRoutes rerank, Dialect dialect,
            String pathName, boolean returnDocumentsByDefault) {
        super(context, routes, dialect);
        this.rerank = rerank;
        this.dialect = dialect;
        this.pathName = pathName;
        this.returnDocumentsByDefault = returnDocumentsByDefault;
    }

    @Override
    ServedDeployment findOnHeaders() {
        return pathName == null ? null : route(pathName);
    }

    @Override
    RerankRequest decode(byte[] body, RuntimeException refusal) {
        if (pathName != null && served == null) {
            served = routeOrUnknown(pathName);
        }
        if (refusal != null) {
            throw refusal;
        }
        RequestBodies.checkContentType(context.request().getHeader(HttpHeaders.CONTENT_TYPE), false);
        RerankRequest request = dialect == Dialect.TEI ? rerank.decodeTei(body)
                : rerank.decodeCohere(body, returnDocumentsByDefault);
        if (served == null) {
            served = routeOrUnknown(request.model());
        }
        if (served.kind() != ModelKind.TEXT_RERANK) {
            throw new InvalidInput(dialect == Dialect.TEI ? "texts" : "model", "deployment '" + served.name()
                    + "' serves a " + (served.kind() == null ? "multiplexed" : served.kind().id()) + " model; rerank "
                    + "needs a text-rerank model (a cross-encoder)");
        }
        return request;
    }

    @Override
    CompletableFuture<Inference> infer(RerankRequest request, CallContext call) {
        Tensors inputs = new Tensors(List.of(Tensor.of("query", new String[] {request.query()}, 1),
                Tensor.of("documents", request.documents().toArray(new String[0]), request.documents().size())));
        return served.deployment().infer(new InferenceRequest(inputs, null, call));
    }

    @Override
    int inputs(RerankRequest request, Inference answer) {
        return request.documents().size();
    }

    @Override
    Answer encode(RerankRequest request, Inference answer) {
        return dialect == Dialect.TEI ? rerank.tei(request, answer)
                : rerank.cohere(request, answer, served.name(), requestId());
    }
}
