package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.serving.RepositoryModelSource;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.spec.DeploymentSpec;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Hugging Face text-embeddings-inference's HTTP API, so that TEI's clients (huggingface_hub's {@code InferenceClient},
 * LlamaIndex's and LangChain's TEI embeddings, Milvus, LiteLLM) work unchanged against Serval, for every deployment at
 * once. TEI serves one model and has no model field, so each route is served twice: at the root ({@code /embed},
 * {@code /embed_all}, {@code /similarity}, {@code /info}, {@code /health}) for the deployment {@code serval.tei.deployment} names, and under
 * {@code /tei/<deployment>/} for any deployment, where {@code POST /tei/<deployment>} itself is the URL
 * {@code InferenceClient(model=URL)} posts to. Request and answer shapes are TEI's ({@link TeiRequest}); errors are
 * TEI's {@code {"error", "error_type"}} with its statuses ({@link ErrorResponses.Failure#tei}); requests go through
 * the one request pipeline ({@link TeiExchange}: body limits, byte budget, admission, deadlines, meters with
 * {@code api="tei"}).
 *
 * <p>Thread-safe: stateless but for each thread's number buffers ({@link NumberArrays}).
 */
@Singleton
public class TeiRoutes {

    static final String PREFIX = "/tei/";
    private static final Set<String> ROOT_PATHS = Set.of("/embed", "/embed_all", "/similarity", "/rerank", "/predict",
            "/tokenize", "/decode", "/info", "/health");
    /**
     * What one float of an {@code /embed_all} answer holds in memory at most: its 4 bytes in the model's output and
     * its JSON text (at most 15 characters and a comma, {@link NumberArrays}).
     */
    static final int TOKEN_FLOAT_BYTES = 4 + 16;

    private final InferenceRoutes inference;
    private final RerankRoutes rerank;
    private final RepositoryModelSource repository;
    private final ObjectMapper mapper;
    private final JsonFactory factory;
    private final Json json;
    private final ThreadLocal<NumberArrays> numbers = NumberArrays.perThread();
    private final String rootDeployment;
    private final int maxTexts;
    private final int maxEmbedAllTexts;
    private final String version;

    TeiRoutes(InferenceRoutes inference, RerankRoutes rerank, RepositoryModelSource repository, ServalConfig config,
            ObjectMapper mapper,
            @ConfigProperty(name = "quarkus.application.version", defaultValue = "unknown") String version) {
        this.inference = inference;
        this.rerank = rerank;
        this.repository = repository;
        this.mapper = mapper;
        this.factory = mapper.getFactory();
        this.json = new Json(mapper);
        this.rootDeployment = config.tei().deployment();
        this.maxTexts = RequestLimits.of(config.http()).maxTexts();
        this.maxEmbedAllTexts = config.tei().maxEmbedAllInputs();
        if (maxEmbedAllTexts < 1) {
            throw new IllegalArgumentException("serval.tei.max-embed-all-inputs must be at least 1, was "
                    + maxEmbedAllTexts);
        }
        this.version = version;
    }

    /** Whether {@code path} is one of TEI's routes, whose errors are answered in TEI's format. */
    static boolean isTeiPath(String path) {
        return path.startsWith(PREFIX) || path.equals("/tei") || ROOT_PATHS.contains(path);
    }

    void install(@Observes Router router) {
        // Each POST route at the root for serval.tei.deployment and under /tei/<deployment>/ for any deployment.
        Map<String, BiConsumer<RoutingContext, String>> posts = new LinkedHashMap<>();
        posts.put("embed", (context, name) -> embed(context, name, TeiExchange.Task.EMBED));
        posts.put("embed_all", (context, name) -> embed(context, name, TeiExchange.Task.EMBED_ALL));
        posts.put("similarity", (context, name) -> embed(context, name, TeiExchange.Task.SIMILARITY));
        posts.put("rerank", (context, name) -> rerank.run(context, Dialect.TEI, name, false));
        posts.put("predict", (context, name) -> new PredictExchange(context, this, name, false).run());
        posts.put("tokenize", (context, name) -> new TokensExchange(context, this, name, false).run());
        posts.put("decode", (context, name) -> new TokensExchange(context, this, name, true).run());
        posts.forEach((route, handler) -> {
            router.post("/" + route).handler(context -> handler.accept(context, rootDeployment));
            router.post("/tei/:name/" + route).handler(context -> handler.accept(context, context.pathParam("name")));
        });
        router.post("/tei/:name").handler(context -> any(context, context.pathParam("name")));
        router.get("/info").handler(context -> info(context, rootDeployment));
        router.get("/health").handler(context -> health(context, rootDeployment));
        router.get("/tei/:name/info").handler(context -> info(context, context.pathParam("name")));
        router.get("/tei/:name/health").handler(context -> health(context, context.pathParam("name")));
        List<String> refused = new ArrayList<>(List.of("/tei/:name"));
        posts.keySet().forEach(route -> refused.addAll(List.of("/" + route, "/tei/:name/" + route)));
        for (String path : refused) {
            router.route(path).handler(context -> InferenceRoutes.methodNotAllowed(context, inference, Dialect.TEI));
        }
    }

    InferenceRoutes inference() {
        return inference;
    }

    /**
     * {@code POST /tei/<deployment>}, the URL {@code InferenceClient} posts every task to: answered as TEI answers its
     * own root route, by the model's kind: a text-rerank model reranks, a text-classification model classifies (the
     * body {@code text_classification} sends), any other embeds (or refuses, naming why).
     */
    private void any(RoutingContext context, String name) {
        ServedDeployment served = inference.deployments().plain(name);
        if (served != null && served.kind() == ModelKind.TEXT_RERANK) {
            rerank.run(context, Dialect.TEI, name, false);
        } else if (served != null && served.kind() == ModelKind.TEXT_CLASSIFICATION) {
            new PredictExchange(context, this, name, true).run();
        } else {
            embed(context, name, TeiExchange.Task.ANY);
        }
    }

    private void embed(RoutingContext context, String name, TeiExchange.Task task) {
        new TeiExchange(context, this, name, task).run();
    }

    /**
     * Decodes a request for {@code task}; {@link TeiExchange.Task#ANY} (the deployment's own URL, to which
     * {@code InferenceClient} posts every task) is a similarity request when its {@code inputs} is an object, as
     * {@code sentence_similarity} sends it, else an embed request.
     */
    TeiRequest decode(byte[] body, TeiExchange.Task task) {
        JsonNode request = json.readObject(body, 0, body.length);
        if (task == TeiExchange.Task.EMBED_ALL) {
            return TeiRequest.embedAll(request, maxEmbedAllTexts);
        }
        boolean similarity = task == TeiExchange.Task.SIMILARITY
                || task == TeiExchange.Task.ANY && request.path("inputs").isObject();
        return similarity ? TeiRequest.similarity(request, maxTexts) : TeiRequest.embed(request, maxTexts);
    }

    /** A predict request: TEI's {@code /predict} body, or {@code InferenceClient}'s ({@code hub}). */
    PredictRequest decodePredict(byte[] body, boolean hub) {
        JsonNode request = json.readObject(body, 0, body.length);
        return hub ? PredictRequest.hub(request) : PredictRequest.tei(request, maxTexts);
    }

    JsonFactory factory() {
        return factory;
    }

    Json json() {
        return json;
    }

    /** {@code serval.http.max-texts-per-request}. */
    int maxTexts() {
        return maxTexts;
    }

    /**
     * TEI's embed answer: one array of floats per input, in input order; each L2-normalised, or as pooled before its
     * normalisation ({@code normalize} false).
     */
    Answer embeddings(List<Embedding> embeddings, boolean normalize) {
        int dimension = embeddings.getFirst().vector().length;
        Answer.Bytes out = new Answer.Bytes(16 + embeddings.size() * dimension * 14);
        NumberArrays numbers = this.numbers.get();
        try (JsonGenerator gen = factory.createGenerator(out)) {
            gen.writeStartArray();
            for (Embedding embedding : embeddings) {
                numbers.write(gen, normalize ? embedding.vector() : embedding.unnormalised());
            }
            gen.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    /**
     * TEI's embed_all answer: for each input, in order, one array of floats per token the model read ([CLS] and [SEP]
     * included), each the encoder's last hidden state for that token, unpooled and unnormalised.
     */
    Answer tokenEmbeddings(List<Embedding> embeddings) {
        long floats = tokenAnswerBytes(embeddings) / TOKEN_FLOAT_BYTES;
        Answer.Bytes out = new Answer.Bytes((int) Math.min(Integer.MAX_VALUE - 16, 16 + floats * 14));
        NumberArrays numbers = this.numbers.get();
        try (JsonGenerator gen = factory.createGenerator(out)) {
            gen.writeStartArray();
            for (Embedding embedding : embeddings) {
                var tokens = embedding.tokenVectors();
                gen.writeStartArray();
                for (int t = 0; t < tokens.tokens(); t++) {
                    numbers.write(gen, tokens.token(t));
                }
                gen.writeEndArray();
            }
            gen.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    /**
     * The most bytes an {@code /embed_all} answer for {@code texts} can hold ({@link #TOKEN_FLOAT_BYTES} a float),
     * known before it is computed: each text has at most 3 tokens a character (a UTF-16 character is at most 3 UTF-8
     * bytes, and no tokenizer makes more than one token of a byte) and 8 special tokens, and at most the serving
     * model's {@code max_length} ({@code maxLength}, 0 when not known); 0 while the model's width is unknown (it has
     * never served). O(texts).
     */
    static long tokenAnswerBound(List<String> texts, int maxLength, long width) {
        long tokens = 0;
        for (String text : texts) {
            long most = 3L * text.length() + 8;
            tokens += maxLength > 0 ? Math.min(maxLength, most) : most;
        }
        return tokens * Math.max(0, width) * TOKEN_FLOAT_BYTES;
    }

    /** The bytes the answer {@code embeddings} holds ({@link #TOKEN_FLOAT_BYTES} a float). */
    static long tokenAnswerBytes(List<Embedding> embeddings) {
        long floats = 0;
        for (Embedding embedding : embeddings) {
            floats += embedding.tokenVectors().floats();
        }
        return floats * TOKEN_FLOAT_BYTES;
    }

    /**
     * TEI's similarity answer: the cosine similarity of each sentence with the source sentence (the first embedding),
     * in order. The embeddings are L2-normalised, so each cosine is a dot product.
     */
    Answer similarities(List<Embedding> embeddings) {
        float[] source = embeddings.getFirst().vector();
        float[] cosines = new float[embeddings.size() - 1];
        for (int i = 1; i < embeddings.size(); i++) {
            float[] vector = embeddings.get(i).vector();
            double dot = 0;
            for (int d = 0; d < source.length; d++) {
                dot += (double) source[d] * vector[d];
            }
            cosines[i - 1] = (float) dot;
        }
        Answer.Bytes out = new Answer.Bytes(16 + cosines.length * 14);
        try (JsonGenerator gen = factory.createGenerator(out)) {
            numbers.get().write(gen, cosines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    /** {@code GET /info}: what TEI's info reports, for the deployment as it is configured now. */
    private void info(RoutingContext context, String name) {
        try {
            ServedDeployment served = inference.deployments().find(name)
                    .orElseThrow(() -> inference.deployments().unknown(name));
            write(context, 200, mapper.writeValueAsBytes(info(served)));
        } catch (Throwable e) {
            inference.fail(context, Dialect.TEI, e);
        }
    }

    /** {@code GET /health}: 200 while the deployment serves, else 503 with TEI's {@code unhealthy} error. */
    private void health(RoutingContext context, String name) {
        ServedDeployment served = inference.deployments().find(name).orElse(null);
        if (served != null && served.ready()) {
            write(context, 200, new byte[0]);
        } else {
            inference.fail(context, Dialect.TEI, new ApiError(503, served == null
                    ? "deployment '" + name + "' is not deployed"
                    : "deployment '" + name + "' is not ready"));
        }
    }

    private static void write(RoutingContext context, int status, byte[] body) {
        InferenceRoutes.send(context.response(), new Answer(status, Answer.JSON, body, Map.of()));
    }

    /**
     * TEI's {@code Info} for a deployment as configured now: its model (name and version), the model type with its
     * labels for a classifier, and Serval's bounds in TEI's terms (a request's texts, a replica's ongoing requests
     * times the replicas, the tokens a text keeps, a batch's tokens at most). A multiplexed deployment answers for
     * its glob.
     */
    private Map<String, Object> info(ServedDeployment served) {
        DeploymentSpec spec = served.config();
        int maxLength = spec.model().maxLength() > 0 ? spec.model().maxLength() : repository.maxLength(spec);
        Map<String, Object> type = new LinkedHashMap<>();
        if (served.kind() == ModelKind.TEXT_CLASSIFICATION || served.kind() == ModelKind.TEXT_RERANK) {
            Map<String, String> id2label = new LinkedHashMap<>();
            Map<String, Integer> label2id = new LinkedHashMap<>();
            List<String> loaded = served.deployment().newestModel(Model::labels).orElse(List.of());
            List<String> labels = loaded.isEmpty() ? repository.labels(spec) : loaded;
            for (int i = 0; i < labels.size(); i++) {
                id2label.put(Integer.toString(i), labels.get(i));
                label2id.put(labels.get(i), i);
            }
            type.put(served.kind() == ModelKind.TEXT_RERANK ? "reranker" : "classifier",
                    Map.of("id2label", id2label, "label2id", label2id));
        } else {
            type.put("embedding", Map.of("pooling", "mean"));
        }
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("model_id", spec.model().name());
        info.put("model_sha", spec.version());
        info.put("model_dtype", "float32");
        info.put("model_type", type);
        info.put("max_concurrent_requests", spec.admission().maxOngoingRequests() * Math.max(1, spec.numReplicas()));
        info.put("max_input_length", maxLength);
        info.put("max_batch_tokens", spec.batching().maxBatchSize() * maxLength);
        info.put("max_batch_requests", spec.batching().maxBatchSize());
        info.put("max_client_batch_size", maxTexts);
        info.put("auto_truncate", true);
        info.put("tokenization_workers", spec.predictors().predictorThreads());
        info.put("version", version);
        info.put("serval_deployment", served.name());
        return info;
    }
}
