package dev.serval.api.http;

import dev.serval.deployment.Deployment;
import dev.serval.error.Overloaded;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.TextTokenizer;
import dev.serval.request.CallContext;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Hugging Face TEI embedding request ({@code POST /embed}, {@code /embed_all}, {@code /similarity}, and their
 * {@code /tei/<deployment>/} forms) through the pipeline: the deployment is the one the path names (the root paths name
 * {@code serval.tei.deployment}), found on the headers, which must serve a text-embedding model; the texts are embedded
 * in one call ({@code Deployment.embed}; {@code Deployment.embedTokens} for {@code /embed_all}); the answer is TEI's
 * JSON ({@link TeiRoutes}).
 *
 * <p>An {@code /embed_all} answer is every token's vector: its texts are bounded by count
 * ({@code serval.tei.max-embed-all-inputs}), and its bytes are taken from the byte budget
 * ({@code serval.http.max-buffered-bytes}) before it is computed, as many as it can hold at most
 * ({@link TeiRoutes#tokenAnswerBound}), topped up to the exact count when the answer comes if that bound was not
 * known (a model that has never served), and given back when the request ends. Threads: {@link #reserved} is taken on
 * the event loop, topped up where the answer is encoded, released on the event loop at the end: an atomic.
 */
final class TeiExchange extends PathExchange<TeiRequest, List<Embedding>> {

    private final TeiRoutes tei;
    private final Task task;
    /** Bytes of the byte budget this request holds for its {@code /embed_all} answer. */
    private final AtomicLong reserved = new AtomicLong();

    /**
     * What the route asks for: embeddings, token embeddings, similarities, or (the deployment's own URL) what the
     * body's shape says.
     */
    enum Task { EMBED, EMBED_ALL, SIMILARITY, ANY }

    TeiExchange(RoutingContext context, TeiRoutes tei, String name, Task task) {
        super(context, tei.inference(), Dialect.TEI, name);
        this.tei = tei;
        this.task = task;
    }

    @Override
    TeiRequest decode(byte[] body, RuntimeException refusal) {
        acceptBody(refusal, false);
        TeiRequest request = tei.decode(body, task);
        Deployment<?, ?> deployment = served.embeddings(); // refuses models of other kinds
        if (task == Task.EMBED_ALL) {
            long width = deployment.signature().map(s -> s.outputs().getFirst().shape().get(1)).orElse(0L);
            int maxLength = deployment.newestModel(Model::tokenizer).flatMap(t -> t).map(TextTokenizer::maxLength)
                    .orElse(served.config().model().maxLength());
            ByteBudget budget = routes.budget();
            context.addEndHandler(ignored -> {
                long held = reserved.getAndSet(-1);
                if (held > 0) {
                    budget.release(held);
                }
            });
            reserve(TeiRoutes.tokenAnswerBound(request.texts(), maxLength, width));
        }
        return request;
    }

    /**
     * Takes {@code bytes} more of the byte budget for the answer, held in {@link #reserved} until the request ends
     * (then -1: what is taken after the end is given back at once).
     *
     * @throws Overloaded when they do not fit (503 + Retry-After)
     */
    private void reserve(long bytes) {
        if (bytes <= 0) {
            return;
        }
        ByteBudget budget = routes.budget();
        long taken = budget.reserve(bytes);
        long before = reserved.getAndUpdate(held -> held < 0 ? held : held + taken);
        if (before < 0) {
            budget.release(taken); // the request ended meanwhile
        }
        if (taken < bytes) {
            throw budget.full();
        }
    }

    @Override
    CompletableFuture<List<Embedding>> infer(TeiRequest request, CallContext call) {
        if (task == Task.EMBED_ALL) {
            return served.embeddings().embedTokens(request.texts(), call);
        }
        return served.embeddings().embed(request.texts(), request.dimensions(), call);
    }

    @Override
    int inputs(TeiRequest request, List<Embedding> answer) {
        return request.texts().size();
    }

    @Override
    Answer encode(TeiRequest request, List<Embedding> answer) {
        if (task == Task.EMBED_ALL) {
            long held = reserved.get();
            if (held >= 0) {
                reserve(TeiRoutes.tokenAnswerBytes(answer) - held); // beyond the bound only when it was not known
            }
            return tei.tokenEmbeddings(answer);
        }
        return request.similarity() ? tei.similarities(answer) : tei.embeddings(answer, request.normalize());
    }
}
