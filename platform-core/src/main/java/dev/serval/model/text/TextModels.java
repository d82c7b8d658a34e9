package dev.serval.model.text;

import dev.serval.model.Classification;
import dev.serval.model.Embedding;
import dev.serval.model.QuantizationRanges;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.Relevance;
import dev.serval.model.TextPair;
import dev.serval.model.onnx.OnnxOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The text kinds' way in: a Hugging Face tokenizer in front of an ONNX graph taking {@code input_ids},
 * {@code attention_mask} and optionally {@code token_type_ids}, one result per text. Every text model decides at load
 * whether texts may share an inference (batch invariance, probed), truncates or chunks long texts, and refuses what it
 * can never take before it is queued; the package-private model classes say how. Stateless.
 */
public final class TextModels {

    private TextModels() {
    }

    /**
     * A sentence-embedding model: masked mean pooling of the token embeddings, L2-normalised (sentence-transformers'
     * pooling); a chunked text gets the renormalised mean of its windows' embeddings.
     *
     * @param modelFile     the ONNX encoder
     * @param tokenizerFile a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param output        the graph output holding the token embeddings [batch, seq, dim]
     *                      ({@link dev.serval.model.ModelKind#defaultOutput()} for a standard export)
     * @param engine        ONNX Runtime session options on top of Serval's defaults
     * @param options       with its maximum length resolved (not 0); the chunk reduction is ignored
     * @throws IllegalArgumentException when a number is out of range or the overlap exceeds half the maximum length
     * @throws IOException              when a file is missing or unreadable, the graph lacks a text input or
     *                                  {@code output} (the message lists the graph's outputs), or the probe fails
     */
    public static Model<String, Embedding> embedding(Path modelFile, Path tokenizerFile, String output,
            OnnxOptions engine, LoadOptions options) throws IOException {
        return TextEmbeddingModel.load(modelFile, tokenizerFile, output, engine, options);
    }

    /**
     * {@link #embedding(Path, Path, String, OnnxOptions, LoadOptions)}, its vectors cut to any of {@code matryoshka}
     * (each below its width) when a request asks.
     */
    public static Model<String, Embedding> embedding(Path modelFile, Path tokenizerFile, String output,
            OnnxOptions engine, LoadOptions options, List<Integer> matryoshka) throws IOException {
        return TextEmbeddingModel.load(modelFile, tokenizerFile, output, engine, options, matryoshka, null);
    }

    /**
     * {@link #embedding(Path, Path, String, OnnxOptions, LoadOptions, List)} with the calibrated ranges its vectors are
     * quantised by (null for none), which must be of its width.
     *
     * @throws IllegalArgumentException when they are not (the model is closed)
     */
    public static Model<String, Embedding> embedding(Path modelFile, Path tokenizerFile, String output,
            OnnxOptions engine, LoadOptions options, List<Integer> matryoshka, QuantizationRanges ranges)
            throws IOException {
        return TextEmbeddingModel.load(modelFile, tokenizerFile, output, engine, options, matryoshka, ranges);
    }

    /**
     * A text classifier: the softmax of each text's logits and the name of its best label; a chunked text gets its
     * windows' probabilities combined by the options' chunk reduction.
     *
     * @param labels the label names in logit order, as many as the logits
     * @param output the graph output holding the logits [batch, labels]
     * @throws IllegalArgumentException when the labels are empty, blank, repeated or not as many as the logits, or as
     *                                  {@link #embedding}
     * @throws IOException              as {@link #embedding}
     * @see #embedding the other parameters
     */
    public static Model<String, Classification> classification(Path modelFile, Path tokenizerFile,
            List<String> labels, String output, OnnxOptions engine, LoadOptions options) throws IOException {
        return TextClassificationModel.load(modelFile, tokenizerFile, labels, output, engine, options);
    }

    /**
     * {@link #classification(Path, Path, List, String, OnnxOptions, LoadOptions)} reading the model's
     * {@code config.json}: {@code problem_type: multi_label_classification} scores each label by its logit's sigmoid
     * instead of a softmax over all; {@code id2label} names the labels when {@code labels} is empty.
     *
     * @param configFile the {@code config.json}; null, or a path that does not exist, for none
     * @throws IOException also when the config is unreadable or its {@code id2label} has a gap
     */
    public static Model<String, Classification> classification(Path modelFile, Path tokenizerFile, Path configFile,
            List<String> labels, String output, OnnxOptions engine, LoadOptions options) throws IOException {
        return TextClassificationModel.load(modelFile, tokenizerFile, configFile, labels, output, engine, options);
    }

    /**
     * A cross-encoder (reranker): each input a (query, document) pair tokenised as a sequence pair and truncated
     * longest first; its result the model's one logit, its sigmoid and the pair's tokens. Long pairs are truncated,
     * never chunked.
     *
     * @param output       the graph output holding the logits [batch, 1]
     * @param maxDocuments the most documents one request may hold ({@code max_documents_per_request}), at least 1
     * @throws IllegalArgumentException when the options ask for chunking, or as {@link #embedding}
     * @throws IOException              as {@link #embedding}, and when the model gives more than one logit per pair
     * @see #embedding the other parameters
     */
    public static Model<TextPair, Relevance> rerank(Path modelFile, Path tokenizerFile, String output,
            OnnxOptions engine, LoadOptions options, int maxDocuments) throws IOException {
        return TextRerankModel.load(modelFile, tokenizerFile, output, engine, options, maxDocuments);
    }
}
