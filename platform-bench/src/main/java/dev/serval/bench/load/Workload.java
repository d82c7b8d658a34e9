package dev.serval.bench.load;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.Map;

/**
 * What a run sends: {@code POST} to one of {@code paths} with one of {@code bodies} (request {@code i} goes to path
 * {@code i mod paths} with body {@code i mod bodies}), each an Open Inference Protocol v2 JSON request (or, for
 * {@link #openAiTexts}, an OpenAI embeddings request). Every body carries one item (one tensor or one text), so
 * requests/s is also items/s. Immutable; the buffers are only ever read.
 *
 * @param name   the workload's name in the report ({@code noop}, {@code minilm-short}, {@code minilm-mixed})
 * @param paths  the request paths, at least one: one for a workload of one model, a sequence of models' paths for
 *               one spread over several ({@link #spread})
 * @param bodies the request bodies, at least one
 */
public record Workload(String name, List<String> paths, List<Buffer> bodies) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public Workload {
        bodies = List.copyOf(bodies);
        paths = List.copyOf(paths);
        if (bodies.isEmpty() || paths.isEmpty()) {
            throw new IllegalArgumentException("workload " + name + " has no request body or no path");
        }
    }

    /** A workload of one path. */
    public Workload(String name, String path, List<Buffer> bodies) {
        this(name, List.of(path), bodies);
    }

    /** The first path (the only one of a workload of one model). */
    public String path() {
        return paths.getFirst();
    }

    /** The same bodies, request {@code i} sent to {@code paths.get(i mod paths.size())}. */
    public Workload spread(String spreadName, List<String> spreadPaths) {
        return new Workload(spreadName, spreadPaths, bodies);
    }

    /** The no-op model: one small FP32 tensor, which the {@code noop} model answers unchanged. */
    public static Workload noop(String deployment) {
        String body = "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,4]}]}";
        return new Workload("noop", "/v2/models/" + deployment + "/infer", List.of(Buffer.buffer(body)));
    }

    /** One text per request, cycling through {@code texts}, to an embedding deployment's OIP endpoint. */
    public static Workload texts(String name, String deployment, List<String> texts) {
        return new Workload(name, "/v2/models/" + deployment + "/infer",
                texts.stream().map(text -> Buffer.buffer(oipText(text))).toList());
    }

    /**
     * One text per request, cycling through {@code texts}, to the OpenAI embeddings endpoint ({@code POST
     * /v1/embeddings}, {@code {"model":model,"input":text}}).
     */
    public static Workload openAiTexts(String name, String model, List<String> texts) {
        return new Workload(name, "/v1/embeddings", texts.stream().map(text -> Buffer.buffer(json(
                Map.of("model", model, "input", text)))).toList());
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code {"inputs":[{"name":"text","datatype":"BYTES","shape":[1],"data":[text]}]}}. */
    static String oipText(String text) {
        return json(Map.of("inputs", List.of(Map.of("name", "text", "datatype", "BYTES", "shape", List.of(1),
                "data", List.of(text)))));
    }

    /** The path of request {@code index}. */
    String path(long index) {
        return paths.get((int) (index % paths.size()));
    }

    /** The body of request {@code index}. */
    Buffer body(long index) {
        return bodies.get((int) (index % bodies.size()));
    }
}
