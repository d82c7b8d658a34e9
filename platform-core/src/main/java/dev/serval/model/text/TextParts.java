package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.translate.TranslateException;
import dev.serval.model.BatchingDecision;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.onnx.DjlSettings;
import dev.serval.model.onnx.OnnxGraph;
import dev.serval.model.onnx.OnnxModel;
import dev.serval.model.onnx.OnnxOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A loaded text model's parts, made by {@link #load} and handed to the kind's constructor ({@link TextModel}): the
 * checks of a model folder's files, the one load of graph and tokenizer, and the batching decision its first
 * inferences make. Immutable once made; the parts themselves are thread-safe (see {@link TextModel}).
 *
 * @param chunker     splits long texts into overlapping windows; null when long texts are truncated
 * @param batching    whether rows (texts, or a chunked text's windows) may share an inference, as the load decided
 * @param probeResult the probe text's result, alone
 * @param longInputs  the long-input policy and its bounds
 * @param maxLength   tokens per text (per window when chunking)
 */
record TextParts<O>(OnnxModel model, HuggingFaceTokenizer tokenizer, HuggingFaceTokenizer chunker,
        EncodingBatchTranslator<O> translator, TextHead<O> head, BatchingDecision batching, O probeResult,
        LongInputs longInputs, int maxLength) {

    private static final String PROBE_PARTNER =
            "A longer companion text for the batch-invariance probe, so that the probe is padded inside its batch.";

    /**
     * Loads tokenizer and graph, runs the probe text alone and in a batch, decides batching, sizes it ({@link BatchProbe}).
     *
     * @param modelFile     the ONNX file; its graph takes {@code input_ids} and {@code attention_mask} (int64
     *                      [batch, seq]) and optionally {@code token_type_ids}
     * @param tokenizerFile a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param engine        further ONNX Runtime session options
     * @param options       the maximum length, resolved (not 0), the long-input policy, the intra-op threads, and
     *                      batch invariance (when off, texts are batched even if the model couples batch rows)
     * @param head          what the kind makes of the graph's outputs; the graph must have its {@code output()}
     * @throws IllegalArgumentException when a number is out of range or the overlap exceeds half the maximum length
     * @throws IOException              when a file is missing or unreadable, the graph lacks a text input or the
     *                                  head's output (the message lists the graph's outputs), or the probe fails
     */
    static <O> TextParts<O> load(Path modelFile, Path tokenizerFile, OnnxOptions engine, LoadOptions options,
            TextHead<O> head) throws IOException {
        int maxLength = options.maxLength();
        LongInputs longInputs = options.longInputs();
        if (longInputs.chunk() && longInputs.overlapTokens() > maxLength / 2) {
            throw new IllegalArgumentException("chunk-overlap (" + longInputs.overlapTokens()
                    + ") must be at most half of max-length (" + maxLength + ")");
        }
        if (maxLength < 2) {
            throw new IllegalArgumentException("maxLength must be >= 2 ([CLS] and [SEP]), was " + maxLength);
        }
        if (!Files.isRegularFile(modelFile)) {
            throw new IOException("model file " + modelFile + " does not exist");
        }
        if (!Files.isRegularFile(tokenizerFile)) {
            throw new IOException("tokenizer file " + tokenizerFile + " does not exist");
        }
        OnnxGraph.Interface graph = OnnxGraph.inputsAndOutputs(modelFile);
        if (!graph.takes("input_ids") || !graph.takes("attention_mask")) {
            throw new IOException("model " + modelFile + " takes " + graph.inputs().stream().map(OnnxGraph.Value::name)
                    .toList() + "; a text model takes input_ids, attention_mask and optionally token_type_ids");
        }
        List<String> outputs = graph.outputs().stream().map(OnnxGraph.Value::name).toList();
        if (!outputs.contains(head.output())) {
            throw new IOException("model " + modelFile + " has no output '" + head.output() + "' to read; its outputs"
                    + " are " + outputs);
        }
        EncodingBatchTranslator<O> translator = new EncodingBatchTranslator<>(head, graph.takes("token_type_ids"));
        DjlSettings.ensureOffline();
        HuggingFaceTokenizer tokenizer = tokenizer(tokenizerFile, maxLength, null);
        OnnxModel model;
        try {
            model = OnnxModel.open(modelFile, options, engine);
        } catch (IOException | RuntimeException e) {
            tokenizer.close();
            throw e;
        }
        try (OnnxModel.Runner<Encoding[], List<O>> predictor = model.newRunner(translator)) {
            O alone = predictor.predict(new Encoding[] {LeanEncoding.of(tokenizer, TextModel.PROBE)}).getFirst();
            O together = predictor.predict(new Encoding[] {LeanEncoding.of(tokenizer, TextModel.PROBE),
                    LeanEncoding.of(tokenizer, PROBE_PARTNER)})
                    .getFirst();
            BatchingDecision rows = BatchProbe.decide(modelFile, options.batchInvariance(),
                    head.difference(alone, together));
            BatchingDecision batching = longInputs.chunk() ? rows : BatchProbe.sized(rows, predictor, tokenizer);
            System.getLogger(TextModel.class.getName()).log(System.Logger.Level.INFO,
                    "model {0}: {1} batching, batch invariant: {2} ({3}); output {4}, ONNX Runtime options {5}, "
                    + "intra-op threads {6} ({7} alone on an idle replica)", modelFile.getFileName(), batching.mode(),
                    batching.batchInvariant(), batching.reason(), head.output(), engine.values(),
                    options.intraOpThreads(), model.widens() ? model.wideThreads() : "the same");
            HuggingFaceTokenizer chunker = longInputs.chunk() ? tokenizer(tokenizerFile, maxLength, longInputs) : null;
            return new TextParts<>(model, tokenizer, chunker, translator, head, batching, alone, longInputs, maxLength);
        } catch (Exception e) {
            model.close();
            tokenizer.close();
            // DJL wraps what a translator throws; its message is then the cause's toString()
            Throwable reason = e instanceof TranslateException && e.getCause() != null ? e.getCause() : e;
            throw new IOException("model " + modelFile + " failed its first inference: " + reason.getMessage(), e);
        }
    }

    /** A tokenizer truncating at {@code maxLength}, unpadded; with overflowing windows when {@code chunking}. */
    private static HuggingFaceTokenizer tokenizer(Path file, int maxLength, LongInputs chunking) throws IOException {
        HuggingFaceTokenizer.Builder builder = HuggingFaceTokenizer.builder()
                .optTokenizerPath(file)
                .optAddSpecialTokens(true)
                .optTruncation(true)
                .optMaxLength(maxLength)
                .optPadding(false);
        if (chunking != null) {
            builder.optStride(chunking.overlapTokens()).optWithOverflowingTokens(true);
        }
        return builder.build();
    }
}
