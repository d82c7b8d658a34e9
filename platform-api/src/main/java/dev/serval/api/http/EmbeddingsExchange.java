package dev.serval.api.http;

import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.model.Embedding;
import dev.serval.request.CallContext;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * An OpenAI embeddings request ({@code POST /v1/embeddings}) through the pipeline: the deployment is the one the
 * body's {@code model} names, which must serve a text-embedding model; its texts are embedded in one call
 * ({@code Deployment.embed}, which also holds {@code dimensions} to the model's own); the answer is OpenAI's JSON.
 * For {@code encoding_format} int8 and uint8 the serving model's quantisation ranges are applied to the float vectors
 * the deployment answers (the result cache holds floats); a model without them is refused before any inference.
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
        quantiser(request); // refuses int8 and uint8 before any inference when the serving model has no ranges
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
        return routes.embeddings().encode(request, answer, !request.encoding().ranged() ? null
                : quantiser(request).orElseThrow(() -> new NotReady("model '" + request.model() + "' has no serving "
                        + "replica to take quantisation ranges from")));
    }

    /**
     * int8 or uint8 by the quantisation ranges of the newest serving model (the one that answered, but for a rolling
     * update's overlap, as {@code dimensions} is judged), the first ranges for a vector cut to fewer; empty while nothing
     * serves or the encoding is another.
     *
     * @throws InvalidInput when that model declares no ranges, naming it and the descriptor field
     */
    private Optional<Function<float[], int[]>> quantiser(EmbeddingsRequest request) {
        if (!request.encoding().ranged()) {
            return Optional.empty();
        }
        boolean signed = request.encoding() == EmbeddingsRequest.Encoding.INT8;
        String format = signed ? "int8" : "uint8";
        return served.embeddings().newestModel(model -> model.quantizationRanges()
                .map(ranges -> ranges.encoder(signed))
                .orElseThrow(() -> new InvalidInput("encoding_format", "'encoding_format' '" + format
                        + "' needs quantisation ranges, which model '" + request.model() + "' does not declare (a "
                        + "model.yaml names them in 'quantization_ranges': a JSON file of [[per-dimension minimums], "
                        + "[per-dimension maximums]]); use 'binary', 'ubinary', 'float' or 'base64'")));
    }
}
