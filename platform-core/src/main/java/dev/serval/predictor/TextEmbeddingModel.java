package dev.serval.predictor;

import ai.djl.MalformedModelException;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.inference.Predictor;
import ai.djl.repository.zoo.Criteria;
import ai.djl.repository.zoo.ModelNotFoundException;
import ai.djl.repository.zoo.ZooModel;
import dev.serval.error.InvalidInput;
import ai.djl.huggingface.tokenizers.Encoding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A sentence-embedding model: a Hugging Face tokenizer, an ONNX encoder run by ONNX Runtime through DJL, and
 * the pooling sentence-transformers applies (masked mean over {@code last_hidden_state}, then L2
 * normalisation). The ONNX session and the tokenizer are loaded once and shared by all predictors.
 *
 * <p>Batch invariance. A text's vector must not depend on what else is being served. When the model loads, Serval
 * decides how to honour that ({@link #batching()}): it reads the graph for operators that couple the rows of a
 * batch (per-tensor dynamic quantisation: {@code DynamicQuantizeLinear} and its fused forms, whose scale is taken
 * over the whole batch) and confirms with a probe, one text alone against the same text padded inside a batch.
 * Row-coupled models run every text alone, and get concurrency from parallel predictors; models with independent
 * rows run several texts per inference, grouped by token length so that padding stays small. A deployment may
 * switch invariance off; then even a row-coupled model batches, and says so.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link dev.serval.predictor.Predictor}).
 */
public final class TextEmbeddingModel implements Model<String, Embedding> {

    private static final String PROBE = "Serval warm-up probe.";
    private static final String PROBE_PARTNER =
            "A longer companion text for the batch-invariance probe, so that the probe is padded inside its batch.";
    /** Operators whose result for one batch row depends on the other rows. */
    static final Set<String> ROW_COUPLING = Set.of("DynamicQuantizeLinear", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM");
    /** Largest per-element difference between a text alone and in a batch that still counts as the same. */
    static final double INVARIANCE_TOLERANCE = 1e-5;

    private final ZooModel<String, Embedding> model;
    private final HuggingFaceTokenizer tokenizer;
    private final ModelSignature signature;
    private final Batching batching;
    /** Splits long texts into overlapping windows; null when long texts are truncated. */
    private final HuggingFaceTokenizer chunker;

    private TextEmbeddingModel(ZooModel<String, Embedding> model, HuggingFaceTokenizer tokenizer,
            HuggingFaceTokenizer chunker, int dimension, Batching batching) {
        this.model = model;
        this.tokenizer = tokenizer;
        this.chunker = chunker;
        this.batching = batching;
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
        return load(modelFile, tokenizerFile, maxLength, intraOpThreads, true);
    }

    /**
     * {@link #load(Path, Path, int, int)}, deciding how to batch.
     *
     * @param batchInvariance whether a text's output must not depend on what it runs with (the default); when
     *                        false, texts are batched even if the model couples batch rows
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads,
            boolean batchInvariance) throws IOException {
        return load(modelFile, tokenizerFile, maxLength, intraOpThreads, batchInvariance, LongInputs.truncate());
    }

    /**
     * {@link #load(Path, Path, int, int, boolean)}, deciding what to do with texts over {@code maxLength} tokens.
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads,
            boolean batchInvariance, LongInputs longInputs) throws IOException {
        if (longInputs.chunk() && longInputs.overlapTokens() > maxLength / 2) {
            throw new IllegalArgumentException("chunk-overlap (" + longInputs.overlapTokens()
                    + ") must be at most half of max-length (" + maxLength + ")");
        }
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
        try (Predictor<String, Embedding> predictor = model.newPredictor();
                Predictor<Encoding[], Embedding[]> batch = model.newPredictor(new BatchSentenceEmbeddingTranslator())) {
            float[] alone = predictor.predict(PROBE).vector();
            float[] together = batch.predict(new Encoding[] {tokenizer.encode(PROBE), tokenizer.encode(PROBE_PARTNER)})[0]
                    .vector();
            Batching batching = decide(modelFile, batchInvariance, maxDifference(alone, together));
            System.getLogger(TextEmbeddingModel.class.getName()).log(System.Logger.Level.INFO,
                    "model {0}: {1} batching, batch invariant: {2} ({3})", modelFile.getFileName(), batching.mode(),
                    batching.batchInvariant(), batching.reason());
            HuggingFaceTokenizer chunker = null;
            if (longInputs.chunk()) {
                chunker = HuggingFaceTokenizer.builder()
                        .optTokenizerPath(tokenizerFile)
                        .optAddSpecialTokens(true)
                        .optTruncation(true)
                        .optMaxLength(maxLength)
                        .optStride(longInputs.overlapTokens())
                        .optWithOverflowingTokens(true)
                        .optPadding(false)
                        .build();
            }
            return new TextEmbeddingModel(model, tokenizer, chunker, alone.length, batching);
        } catch (Exception e) {
            model.close();
            tokenizer.close();
            throw new IOException("model " + modelFile + " failed its first inference: " + e.getMessage(), e);
        }
    }

    /** The mean of the window embeddings, renormalised; tokens are those of all windows. */
    static Embedding combine(Embedding[] parts) {
        int dimension = parts[0].vector().length;
        double[] sum = new double[dimension];
        int tokens = 0;
        for (Embedding part : parts) {
            tokens += part.tokens();
            float[] vector = part.vector();
            for (int d = 0; d < dimension; d++) {
                sum[d] += vector[d];
            }
        }
        double norm = 0;
        for (double value : sum) {
            norm += value * value;
        }
        norm = Math.max(Math.sqrt(norm), 1e-12);
        float[] combined = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            combined[d] = (float) (sum[d] / norm);
        }
        return new Embedding(combined, tokens);
    }

    /** The windows a long text is split into (tests and diagnostics); one window for a text within the maximum. */
    List<Encoding> windows(String text) {
        Encoding whole = chunker.encode(text);
        List<Encoding> windows = new ArrayList<>();
        windows.add(whole);
        if (whole.getOverflowing() != null) {
            windows.addAll(Arrays.asList(whole.getOverflowing()));
        }
        return windows;
    }

    private static Batching decide(Path modelFile, boolean invariance, double probeDifference) throws IOException {
        Set<String> coupling = new TreeSet<>(OnnxGraph.operatorTypes(modelFile));
        coupling.retainAll(ROW_COUPLING);
        String probe = String.format("the probe text alone and padded in a batch differ by up to %.2e", probeDifference);
        String evidence;
        if (!coupling.isEmpty()) {
            evidence = "the graph couples batch rows (" + String.join(", ", coupling) + "); " + probe;
        } else if (probeDifference > INVARIANCE_TOLERANCE) {
            evidence = "no row-coupling operator, but " + probe;
        } else {
            return new Batching(true, true, "no row-coupling operator; " + probe);
        }
        return invariance ? Batching.single(evidence + ": every text runs alone")
                : new Batching(true, false, evidence + "; batch invariance is off, so texts are batched anyway");
    }

    private static double maxDifference(float[] a, float[] b) {
        double max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs(a[i] - b[i]));
        }
        return max;
    }

    @Override
    public Batching batching() {
        return batching;
    }

    /** The embedding dimension, learnt from the probe inference at load. */
    public int dimension() {
        return signature.outputs().getFirst().shape().get(1).intValue();
    }

    @Override
    public dev.serval.tensor.TensorIO<String, Embedding> io() {
        return EmbeddingIO.instance();
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }

    @Override
    public dev.serval.predictor.Predictor<String, Embedding> newPredictor() {
        return newPredictor(BatchObserver.NONE);
    }

    @Override
    public dev.serval.predictor.Predictor<String, Embedding> newPredictor(BatchObserver observer) {
        return new TextPredictor(observer);
    }

    /**
     * One thread's predictors: one for single texts, and one for padded batches when the model batches. A batch is
     * tokenised once, sorted by token count and cut into groups whose lengths differ by at most a quarter (plus two
     * tokens), so that a short text is not padded to a long one; each group is one inference.
     */
    final class TextPredictor implements dev.serval.predictor.Predictor<String, Embedding> {
        private final Predictor<String, Embedding> single = model.newPredictor();
        private final Predictor<Encoding[], Embedding[]> batch =
                batching.batched() || chunker != null ? model.newPredictor(new BatchSentenceEmbeddingTranslator()) : null;
        private final BatchObserver observer;

        TextPredictor(BatchObserver observer) {
            this.observer = observer;
        }

        @Override
        public Embedding predict(String input) throws Exception {
            if (chunker == null) {
                return single.predict(input);
            }
            Encoding whole = chunker.encode(input);
            Encoding[] rest = whole.getOverflowing();
            if (rest == null || rest.length == 0) {
                return embed(whole); // within the maximum: no chunking work beyond this one tokenisation
            }
            Encoding[] windows = new Encoding[rest.length + 1];
            windows[0] = whole;
            System.arraycopy(rest, 0, windows, 1, rest.length);
            Embedding[] parts;
            if (batching.batched()) {
                parts = batch.predict(windows);
            } else {
                parts = new Embedding[windows.length];
                for (int i = 0; i < windows.length; i++) {
                    parts[i] = embed(windows[i]); // the same rule as whole texts: row-coupled models run windows alone
                }
            }
            return combine(parts);
        }

        /** One already-tokenised window or text, alone. */
        Embedding embed(Encoding encoding) throws Exception {
            return batch.predict(new Encoding[] {encoding})[0];
        }

        @Override
        public List<Embedding> predictBatch(List<String> inputs) throws Exception {
            if (chunker != null) {
                return dev.serval.predictor.Predictor.super.predictBatch(inputs);
            }
            if (batch == null || inputs.size() == 1) {
                return dev.serval.predictor.Predictor.super.predictBatch(inputs);
            }
            int n = inputs.size();
            Encoding[] encodings = new Encoding[n];
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                encodings[i] = tokenizer.encode(inputs.get(i));
                order[i] = i;
            }
            Arrays.sort(order, Comparator.comparingInt(i -> encodings[i].getIds().length));
            Embedding[] outputs = new Embedding[n];
            int start = 0;
            while (start < n) {
                int shortest = encodings[order[start]].getIds().length;
                int end = start + 1;
                while (end < n && encodings[order[end]].getIds().length <= shortest + shortest / 4 + 2) {
                    end++;
                }
                Encoding[] group = new Encoding[end - start];
                long real = 0;
                for (int k = start; k < end; k++) {
                    group[k - start] = encodings[order[k]];
                    real += group[k - start].getIds().length;
                }
                Embedding[] results = batch.predict(group);
                long width = group[group.length - 1].getIds().length;
                observer.batch(group.length, real, width * group.length - real);
                for (int k = start; k < end; k++) {
                    outputs[order[k]] = results[k - start];
                }
                start = end;
            }
            return new ArrayList<>(Arrays.asList(outputs));
        }

        @Override
        public void close() {
            single.close();
            if (batch != null) {
                batch.close();
            }
        }
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
        if (chunker != null) {
            chunker.close();
        }
    }
}
