package com.example;

import dev.serval.spi.DataType;
import dev.serval.spi.DeploymentHandle;
import dev.serval.spi.Handler;
import dev.serval.spi.HandlerContext;
import dev.serval.spi.InvalidInputException;
import dev.serval.spi.Request;
import dev.serval.spi.Tensor;
import dev.serval.spi.TensorSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A rules check in front of a model: texts containing a blocked word (from {@code blocked.txt} in the model's version
 * folder) are not sent to the embedder; the others are embedded by the {@code all-minilm-l6-v2} deployment, called
 * in-process through its handle (its queue and limits apply, with this request's deadline and id). Answers
 * {@code embedding} (FP32 [n, 384], zeros for a blocked text) and {@code blocked} (BOOL [n]).
 *
 * <p>Thread-safe: the blocked words and the handle are set once in {@link #open} and only read afterwards.
 */
public class GuardedEmbedder implements Handler {

    private static final String EMBEDDER = "all-minilm-l6-v2";
    private static final int DIMENSIONS = 384;

    private Set<String> blocked;
    private DeploymentHandle embedder;

    @Override
    public void open(HandlerContext context) throws IOException {
        blocked = Files.readAllLines(context.versionFolder().resolve("blocked.txt")).stream()
                .map(String::strip).filter(word -> !word.isEmpty() && !word.startsWith("#"))
                .map(word -> word.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        embedder = context.deployment(EMBEDDER);
    }

    @Override
    public List<TensorSpec> inputs() {
        return List.of(new TensorSpec("text", DataType.BYTES, -1));
    }

    @Override
    public List<TensorSpec> outputs() {
        return List.of(new TensorSpec("embedding", DataType.FP32, -1, DIMENSIONS),
                new TensorSpec("blocked", DataType.BOOL, -1));
    }

    @Override
    public List<Tensor> handle(Request request) {
        String[] texts = request.input("text").strings();
        if (texts.length == 0) {
            throw new InvalidInputException("'text' holds no texts");
        }
        boolean[] isBlocked = new boolean[texts.length];
        List<String> allowed = new ArrayList<>();
        for (int i = 0; i < texts.length; i++) {
            isBlocked[i] = containsBlockedWord(texts[i]);
            if (!isBlocked[i]) {
                allowed.add(texts[i]);
            }
        }
        float[] embeddings = new float[texts.length * DIMENSIONS];
        if (!allowed.isEmpty()) {
            // Blocks this predictor thread until the embedder answers (allowed: handlers run on predictor threads).
            List<Tensor> answer = embedder.infer(request, List.of(Tensor.of("text", allowed.toArray(String[]::new),
                    allowed.size()))).join();
            float[] embedded = answer.stream().filter(t -> t.name().equals("embedding")).findFirst()
                    .orElseThrow(() -> new IllegalStateException(EMBEDDER + " returned no 'embedding'")).floats();
            for (int i = 0, next = 0; i < texts.length; i++) {
                if (!isBlocked[i]) {
                    System.arraycopy(embedded, next++ * DIMENSIONS, embeddings, i * DIMENSIONS, DIMENSIONS);
                }
            }
        }
        return List.of(Tensor.of("embedding", embeddings, texts.length, DIMENSIONS),
                Tensor.of("blocked", isBlocked, texts.length));
    }

    private boolean containsBlockedWord(String text) {
        for (String word : text.toLowerCase(Locale.ROOT).split("\\W+")) {
            if (blocked.contains(word)) {
                return true;
            }
        }
        return false;
    }
}
