package dev.serval.predictor;

import ai.djl.MalformedModelException;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.inference.Predictor;
import ai.djl.repository.zoo.Criteria;
import ai.djl.repository.zoo.ModelNotFoundException;
import ai.djl.repository.zoo.ZooModel;
import dev.serval.error.InvalidInput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A sentence-embedding model: a Hugging Face tokenizer, an ONNX encoder run by ONNX Runtime through DJL, and
 * the pooling sentence-transformers applies (masked mean over {@code last_hidden_state}, then L2
 * normalisation). The ONNX session and the tokenizer are loaded once and shared by all predictors; each text
 * runs alone (batch of one), so a text's vector never depends on what else is being served.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link dev.serval.predictor.Predictor}).
 */
public final class TextEmbeddingModel implements Model<String, Embedding> {

    private static final String PROBE = "Serval warm-up probe.";

    private final ZooModel<String, Embedding> model;
    private final HuggingFaceTokenizer tokenizer;
    private final ModelSignature signature;

    private TextEmbeddingModel(ZooModel<String, Embedding> model, HuggingFaceTokenizer tokenizer, int dimension) {
        this.model = model;
        this.tokenizer = tokenizer;
        this.signature = new ModelSignature(
                "onnxruntime_onnx",
                List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                List.of(new TensorSignature("embedding", "FP32", List.of(-1L, (long) dimension))));
    }

    /**
     * Loads the encoder and tokenizer and runs the probe text once to learn the embedding dimension.
     *
     * @param modelFile      the ONNX file; its graph must output {@code last_hidden_state} [batch, seq, dim]
     * @param tokenizerFile  a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param maxLength      tokens kept per text, special tokens included (256 for all-MiniLM-L6-v2)
     * @param intraOpThreads ONNX Runtime intra-op threads per inference
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads)
            throws IOException {
        if (maxLength < 2) {
            throw new IllegalArgumentException("maxLength must be >= 2 ([CLS] and [SEP]), was " + maxLength);
        }
        if (intraOpThreads < 1) {
            throw new IllegalArgumentException("intraOpThreads must be >= 1, was " + intraOpThreads);
        }
        if (!Files.isRegularFile(modelFile)) {
            throw new IOException("model file " + modelFile + " does not exist");
        }
        if (!Files.isRegularFile(tokenizerFile)) {
            throw new IOException("tokenizer file " + tokenizerFile + " does not exist");
        }
        DjlSettings.ensureOffline();
        HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.builder()
                .optTokenizerPath(tokenizerFile)
                .optAddSpecialTokens(true)
                .optTruncation(true)
                .optMaxLength(maxLength)
                .optPadding(false)
                .build();
        String fileName = modelFile.getFileName().toString();
        String modelName = fileName.endsWith(".onnx") ? fileName.substring(0, fileName.length() - 5) : fileName;
        Criteria<String, Embedding> criteria = Criteria.builder()
                .setTypes(String.class, Embedding.class)
                .optEngine("OnnxRuntime")
                .optModelPath(modelFile.toAbsolutePath().getParent())
                .optModelName(modelName)
                .optTranslator(new SentenceEmbeddingTranslator(tokenizer))
                .optOption("intraOpNumThreads", Integer.toString(intraOpThreads))
                .optOption("interOpNumThreads", "1")
                .optOption("executionMode", "SEQUENTIAL")
                .build();
        ZooModel<String, Embedding> model;
        try {
            model = criteria.loadModel();
        } catch (ModelNotFoundException | MalformedModelException e) {
            tokenizer.close();
            throw new IOException("cannot load " + modelFile + ": " + e.getMessage(), e);
        }
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            int dimension = predictor.predict(PROBE).vector().length;
            return new TextEmbeddingModel(model, tokenizer, dimension);
        } catch (Exception e) {
            model.close();
            tokenizer.close();
            throw new IOException("model " + modelFile + " failed its first inference: " + e.getMessage(), e);
        }
    }

    /** The embedding dimension, learnt from the probe inference at load. */
    public int dimension() {
        return signature.outputs().getFirst().shape().get(1).intValue();
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }

    @Override
    public dev.serval.predictor.Predictor<String, Embedding> newPredictor() {
        Predictor<String, Embedding> predictor = model.newPredictor();
        return new dev.serval.predictor.Predictor<>() {
            @Override
            public Embedding predict(String input) throws Exception {
                return predictor.predict(input);
            }

            @Override
            public void close() {
                predictor.close();
            }
        };
    }

    @Override
    public String probeInput() {
        return PROBE;
    }

    @Override
    public void validate(String input, int index) {
        if (input == null) {
            throw new InvalidInput("text " + index + " is null");
        }
        if (input.isEmpty()) {
            throw new InvalidInput("text " + index + " is an empty string");
        }
    }

    @Override
    public void close() {
        model.close();
        tokenizer.close();
    }
}
