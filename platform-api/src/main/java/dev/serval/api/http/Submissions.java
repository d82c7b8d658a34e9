package dev.serval.api.http;

import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Outcome;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.predictor.Embedding;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The request path every inference endpoint shares, so that it is written once: decode and validate on the event
 * loop, submit to the deployment (never blocking), bring the result back to the request's own Vert.x context to
 * encode it there, and record exactly one outcome per request in the deployment's meters (including requests
 * refused before submission and requests whose client went away).
 */
final class Submissions {

    private Submissions() {
    }

    /**
     * @param decode turns the body into a request; throws {@code InvalidInput} or {@code ApiError} on bad input
     * @param texts  the texts of a decoded request
     * @param encode the HTTP response for the request and its embeddings (runs on the request's event loop)
     */
    static <R> Uni<Response> embed(ServedDeployment served, DeploymentMeters.Api api, long startNanos,
            Supplier<R> decode, Function<R, List<String>> texts, BiFunction<R, List<Embedding>, Response> encode) {
        DeploymentMeters meters = served.meters();
        R request;
        Uni<Response> response;
        try {
            request = decode.get();
            response = resumeHere(served.deployment().submit(texts.apply(request)))
                    .map(embeddings -> encode.apply(request, embeddings));
        } catch (RuntimeException e) {
            meters.record(api, Outcome.of(e), startNanos, 0);
            throw e;
        }
        int inputs = texts.apply(request).size();
        return response
                .onItemOrFailure().invoke((item, failure) -> meters.record(api,
                        failure == null ? Outcome.OK : Outcome.of(ErrorResponses.unwrap(failure)), startNanos, inputs))
                .onCancellation().invoke(() -> meters.record(api, Outcome.CANCELLED, startNanos, inputs));
    }

    /**
     * A Uni of {@code stage} whose item and failure are delivered on the calling thread's Vert.x context, so that
     * encoding the response runs on the request's event loop and never on a predictor thread.
     */
    static <T> Uni<T> resumeHere(CompletionStage<T> stage) {
        Context context = Vertx.currentContext();
        Uni<T> uni = Uni.createFrom().completionStage(stage);
        return context == null ? uni : uni.emitOn(task -> context.runOnContext(ignored -> task.run()));
    }
}
