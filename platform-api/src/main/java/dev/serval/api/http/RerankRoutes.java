package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ServalConfig;
import dev.serval.deployment.Inference;
import dev.serval.tensor.Tensor;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Reranking in Jina's and Cohere's shape, {@code POST /v1/rerank} and {@code /v2/rerank} (what LangChain4j's Jina
 * scoring model, LlamaIndex's and LangChain's Jina and Cohere rerankers, and Cohere's SDK with a {@code base_url}
 * call), and the codecs of TEI's {@code /rerank} ({@link TeiRoutes} installs that route). Requests run through
 * {@link RerankExchange}; the answer lists the documents best first: {@code index} (the document's place in the
 * request), {@code relevance_score} (the sigmoid of the cross-encoder's logit, what sentence-transformers' CrossEncoder
 * answers for a one-label model), {@code document} when asked, and the tokens the model read in {@code usage}.
 *
 * <p>Thread-safe: stateless.
 */
@Singleton
public class RerankRoutes {

    static final String V1 = "/v1/rerank";
    static final String V2 = "/v2/rerank";

    private final InferenceRoutes inference;
    private final Json json;
    private final JsonFactory factory;
    private final int maxTexts;

    RerankRoutes(InferenceRoutes inference, ServalConfig config, ObjectMapper mapper) {
        this.inference = inference;
        this.json = new Json(mapper);
        this.factory = mapper.getFactory();
        this.maxTexts = RequestLimits.of(config.http()).maxTexts();
    }

    void install(@Observes Router router) {
        router.post(V1).handler(context -> run(context, Dialect.RERANK, null, true));
        router.post(V2).handler(context -> run(context, Dialect.RERANK, null, false));
        router.route(V1).handler(context -> InferenceRoutes.methodNotAllowed(context, inference, Dialect.RERANK));
        router.route(V2).handler(context -> InferenceRoutes.methodNotAllowed(context, inference, Dialect.RERANK));
    }

    /** Runs a rerank request; {@code deployment} is the path's (TEI) or null (the body's {@code model}). */
    void run(RoutingContext context, Dialect dialect, String deployment, boolean returnDocumentsByDefault) {
        new RerankExchange(context, inference, this, dialect, deployment, returnDocumentsByDefault).run();
    }

    RerankRequest decodeCohere(byte[] body, boolean returnDocumentsByDefault) {
        return RerankRequest.cohere(json.readObject(body, 0, body.length), maxTexts, returnDocumentsByDefault);
    }

    RerankRequest decodeTei(byte[] body) {
        return RerankRequest.tei(json.readObject(body, 0, body.length), maxTexts);
    }

    /**
     * The Jina/Cohere answer: {@code id}, {@code model}, {@code results} best first (at most {@code top_n}),
     * {@code usage} ({@code total_tokens}, Jina's) and {@code meta} (Cohere's, one search unit).
     */
    Answer cohere(RerankRequest request, Inference answer, String model, String requestId) {
        float[] scores = floats(answer, "scores");
        int[] order = RankOrder.best(scores, request.topN());
        Answer.Bytes out = new Answer.Bytes(128 + order.length * 64);
        try (JsonGenerator gen = factory.createGenerator(out)) {
            gen.writeStartObject();
            if (requestId != null) {
                gen.writeStringField("id", requestId);
            }
            gen.writeStringField("model", model);
            gen.writeArrayFieldStart("results");
            for (int index : order) {
                gen.writeStartObject();
                gen.writeNumberField("index", index);
                gen.writeNumberField("relevance_score", scores[index]);
                if (request.returnDocuments()) {
                    gen.writeObjectFieldStart("document");
                    gen.writeStringField("text", request.documents().get(index));
                    gen.writeEndObject();
                }
                gen.writeEndObject();
            }
            gen.writeEndArray();
            long tokens = tokens(answer);
            gen.writeObjectFieldStart("usage");
            gen.writeNumberField("total_tokens", tokens);
            gen.writeNumberField("prompt_tokens", tokens);
            gen.writeEndObject();
            gen.writeObjectFieldStart("meta");
            gen.writeObjectFieldStart("api_version");
            gen.writeStringField("version", "2");
            gen.writeEndObject();
            gen.writeObjectFieldStart("billed_units");
            gen.writeNumberField("search_units", 1);
            gen.writeEndObject();
            gen.writeEndObject();
            gen.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    /** TEI's answer: {@code [{"index", "score", "text"?}]}, every text best first; raw scores are the logits. */
    Answer tei(RerankRequest request, Inference answer) {
        float[] scores = floats(answer, request.rawScores() ? "logits" : "scores");
        int[] order = RankOrder.best(scores, request.topN());
        Answer.Bytes out = new Answer.Bytes(16 + order.length * 48);
        try (JsonGenerator gen = factory.createGenerator(out)) {
            gen.writeStartArray();
            for (int index : order) {
                gen.writeStartObject();
                gen.writeNumberField("index", index);
                gen.writeNumberField("score", scores[index]);
                if (request.returnDocuments()) {
                    gen.writeStringField("text", request.documents().get(index));
                }
                gen.writeEndObject();
            }
            gen.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    private static float[] floats(Inference answer, String output) {
        return (float[]) tensor(answer, output).data();
    }

    private static long tokens(Inference answer) {
        long total = 0;
        for (int count : (int[]) tensor(answer, "tokens").data()) {
            total += count;
        }
        return total;
    }

    private static Tensor tensor(Inference answer, String output) {
        return answer.outputs().get(output).orElseThrow(() -> new IllegalStateException("the text-rerank model "
                + "answered no '" + output + "' output"));
    }
}
