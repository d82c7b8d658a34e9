package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.serval.error.InvalidInput;
import dev.serval.model.BatchObserver;
import dev.serval.model.BatchingDecision;
import dev.serval.model.InputTokens;
import dev.serval.model.LongInputs;
import dev.serval.model.Model;
import dev.serval.model.Predictor;
import dev.serval.model.TextTokenizer;
import dev.serval.model.onnx.OnnxModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * What every text model kind shares: a Hugging Face tokenizer, an ONNX graph taking {@code input_ids},
 * {@code attention_mask} and, if it has it, {@code token_type_ids} (these input names are fixed: they are what Hugging
 * Face exports use), run by ONNX Runtime through DJL, and a {@link TextHead} that makes one result per text of one
 * graph output, named by the kind or the model ({@link TextHead#output()}). The session and the tokenizer are loaded
 * once and shared by all predictors.
 *
 * <p>Batch invariance. A text's result must not depend on what else is being served. When the model loads, Serval
 * decides how to honour that ({@link #batching()}): it reads the graph for operators that couple the rows of a
 * batch (per-tensor dynamic quantisation: {@code DynamicQuantizeLinear} and its fused forms, whose scale is taken
 * over the whole batch) and confirms with a probe, one text alone against the same text padded inside a batch.
 * Row-coupled models run every text alone, and get concurrency from parallel predictors; models with independent
 * rows run several texts per inference, grouped by token length so that padding stays small. A deployment may
 * switch invariance off; then even a row-coupled model batches, and says so.
 *
 * <p>Long texts ({@link LongInputs}) are truncated at the maximum length, or split into overlapping windows whose
 * results the head combines. A text within the maximum costs one tokenisation either way. Chunking is bounded: a
 * text longer than {@link LongInputs#maxChars} characters is refused by {@link #validate} without being tokenised,
 * one that splits into more than {@link LongInputs#maxChunks()} windows by its predictor before any window runs, and
 * a predictor stops running a text's windows as soon as its request is abandoned (cancelled, or past its deadline).
 * Under chunking texts never share an inference (a text's windows do), so the model reports single batching to the
 * predictor pool: each text is taken alone, and its abandonment is checked between its windows.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 *
 * <p>What an input is (a text, or a query and document read as one sequence pair) is the kind's {@link TextInput};
 * everything above is the same for both.
 *
 * @param <I> one input: a text, or a (query, document) pair
 * @param <O> the result of one input
 */
abstract class TextModel<I, O> implements Model<I, O> {

    /** The text every text model is warmed up and probed with. */
    static final String PROBE = "Serval warm-up probe.";
    private static final BooleanSupplier NEVER_ABANDONED = () -> false;
    /**
     * Windows of one text run in one inference when rows are independent. Windows are all {@code max_length} tokens but
     * the last, so grouping them changes no result of a model whose rows are independent; smaller groups bound the memory of one inference and let an
     * abandoned text stop sooner.
     */
    static final int WINDOWS_PER_INFERENCE = 16;

    private final OnnxModel model;
    private final TextInput<I> inputs;
    private final HuggingFaceTokenizer tokenizer;
    /** The tokenizer as a tokenizer API shows it: made once, with the model. */
    private final Optional<TextTokenizer> tokenizerView;
    /** Splits long texts into overlapping windows; null when long texts are truncated. */
    private final HuggingFaceTokenizer chunker;
    private final EncodingBatchTranslator<O> translator;
    private final TextHead<O> head;
    /** Whether rows may share an inference (texts when truncating, a text's windows when chunking). */
    private final BatchingDecision rows;
    /** What the predictor pool is told: {@link #rows}, or single under chunking (texts run alone). */
    private final BatchingDecision batching;
    private final int maxChunks;
    private final long maxChars;
    private final int maxLength;

    TextModel(TextParts<O> parts, TextInput<I> inputs) {
        this.model = parts.model();
        this.inputs = inputs;
        this.tokenizer = parts.tokenizer();
        this.chunker = parts.chunker();
        this.translator = parts.translator();
        this.head = parts.head();
        this.rows = parts.batching();
        this.maxLength = parts.maxLength();
        this.tokenizerView = Optional.of(new TokenizerView(tokenizer, maxLength));
        this.maxChunks = parts.longInputs().maxChunks();
        this.maxChars = parts.longInputs().maxChars(parts.maxLength());
        this.batching = chunker == null ? rows : BatchingDecision.single("long inputs are chunked, so each text runs alone, its "
                + "windows " + (rows.batched() ? "together" : "one by one") + " (" + rows.reason() + ")");
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

    @Override
    public boolean widens() {
        return model.widens();
    }

    /** {@inheritDoc} Here {@code max_length} truncating, {@code max_chunks_per_input} windows of it chunking. */
    @Override
    public long maxInputTokens() {
        return chunker == null ? maxLength : (long) maxChunks * maxLength;
    }

    /** {@inheritDoc} Here the input's length in characters: a proxy for its tokens that costs nothing to read. */
    @Override
    public long inputSize(I input) {
        return inputs.length(input);
    }

    @Override
    public BatchingDecision batching() {
        return batching;
    }

    @Override
    public Optional<TextTokenizer> tokenizer() {
        return tokenizerView;
    }

    @Override
    public Predictor<I, O> newPredictor() {
        return newPredictor(BatchObserver.NONE);
    }

    @Override
    public Predictor<I, O> newPredictor(BatchObserver observer) {
        return new TextPredictor(observer);
    }

    /**
     * One thread's DJL predictor. A batch is tokenised once, sorted by token count and cut into groups whose lengths
     * differ by at most a quarter (plus two tokens), so that a short text is not padded to a long one; each group is
     * one inference. Under chunking, texts run one at a time, and a long text's windows run together (in inferences
     * of up to {@link #WINDOWS_PER_INFERENCE}) when the model batches rows, or one by one when it does not; between
     * two inferences the predictor checks whether the text's request was abandoned, and stops if it was.
     */
    final class TextPredictor implements Predictor<I, O> {
        private final OnnxModel.Runner<Encoding[], List<O>> predictor = model.newRunner(translator);
        private final BatchObserver observer;

        TextPredictor(BatchObserver observer) {
            this.observer = observer;
        }

        @Override
        public O predict(I input) throws Exception {
            return predict(input, null, NEVER_ABANDONED);
        }

        @Override
        public O predict(I input, BooleanSupplier abandoned) throws Exception {
            return predict(input, null, abandoned);
        }

        /**
         * {@inheritDoc} Truncated, the one encoding the model reads; chunked, every window, refused as the inference
         * would refuse them (more than {@code max_chunks_per_input}).
         */
        @Override
        public InputTokens tokens(I input) throws Exception {
            if (chunker == null) {
                Encoding encoding = inputs.truncated(tokenizer, input, maxLength);
                return new TextTokens(new Encoding[] {encoding}, encoding.getIds().length);
            }
            Encoding[] windows = windowsOf(input);
            int count = 0;
            for (Encoding window : windows) {
                count += window.getIds().length;
            }
            return new TextTokens(windows, count);
        }

        /**
         * {@inheritDoc} Under chunking, {@code abandoned} is checked before each inference over the text's windows.
         *
         * @throws InvalidInput when the text splits into more than {@code max_chunks_per_input} windows (checked
         *                      after tokenising, before any window runs)
         */
        @Override
        public O predict(I input, InputTokens tokens, BooleanSupplier abandoned) throws Exception {
            TextTokens counted = tokens instanceof TextTokens own ? own : null;
            if (chunker == null) {
                return run(counted != null ? counted.windows()[0] : inputs.truncated(tokenizer, input, maxLength));
            }
            Encoding[] windows = counted != null ? counted.windows() : windowsOf(input);
            if (windows.length == 1) {
                return run(windows[0]); // within the maximum: no chunking work beyond this one tokenisation
            }
            List<O> parts = new ArrayList<>(windows.length);
            int step = rows.batched() ? WINDOWS_PER_INFERENCE : 1; // row-coupled models run windows alone
            for (int start = 0; start < windows.length; start += step) {
                if (abandoned.getAsBoolean()) {
                    return null;
                }
                if (step == 1) {
                    parts.add(run(windows[start]));
                } else {
                    parts.addAll(predictor.predict(Arrays.copyOfRange(windows, start,
                            Math.min(windows.length, start + step))));
                }
            }
            return head.combine(parts);
        }

        /** The windows of a chunked input, the whole text's first; InvalidInput past {@code max_chunks_per_input}. */
        private Encoding[] windowsOf(I input) {
            String text = inputs.text(input);
            Encoding whole = chunker.encode(text);
            Encoding[] rest = whole.getOverflowing();
            if (rest == null || rest.length == 0) {
                return new Encoding[] {whole};
            }
            if (rest.length + 1 > maxChunks) {
                throw new InvalidInput("a text of " + text.length() + " characters splits into " + (rest.length + 1)
                        + " windows of " + maxLength + " tokens; this model runs at most " + maxChunks
                        + " windows per text (max_chunks_per_input)");
            }
            Encoding[] windows = new Encoding[rest.length + 1];
            windows[0] = whole;
            System.arraycopy(rest, 0, windows, 1, rest.length);
            return windows;
        }

        /** One already-tokenised window or text, alone. */
        O run(Encoding encoding) throws Exception {
            return predictor.predict(new Encoding[] {encoding}).getFirst();
        }

        @Override
        public List<O> predictBatch(List<I> batch) throws Exception {
            return predictBatch(batch, List.of());
        }

        @Override
        public List<O> predictBatch(List<I> batch, List<InputTokens> tokens) throws Exception {
            int n = batch.size();
            if (chunker != null || !rows.batched() || n == 1) {
                List<O> outputs = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    outputs.add(predict(batch.get(i), tokens.isEmpty() ? null : tokens.get(i), NEVER_ABANDONED));
                }
                return outputs;
            }
            Encoding[] encodings = new Encoding[n];
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                InputTokens counted = tokens.isEmpty() ? null : tokens.get(i);
                encodings[i] = counted instanceof TextTokens own ? own.windows()[0]
                        : inputs.truncated(tokenizer, batch.get(i), maxLength);
                order[i] = i;
            }
            Arrays.sort(order, Comparator.comparingInt(i -> encodings[i].getIds().length));
            List<O> outputs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                outputs.add(null);
            }
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
                List<O> results = predictor.predict(group);
                long width = group[group.length - 1].getIds().length;
                observer.batch(group.length, real, width * group.length - real);
                for (int k = start; k < end; k++) {
                    outputs.set(order[k], results.get(k - start));
                }
                start = end;
            }
            return outputs;
        }

        @Override
        public void widen(boolean wide) {
            predictor.widen(wide);
        }

        @Override
        public void close() {
            predictor.close();
        }
    }

    @Override
    public I probeInput() {
        return inputs.probe(PROBE);
    }

    /**
     * {@inheritDoc} Under chunking, also refuses a text longer than {@link LongInputs#maxChars} characters, before it
     * is tokenised: O(1), whatever its length.
     */
    @Override
    public void validate(I input, int index) {
        inputs.validate(input, index);
        if (chunker != null && inputs.length(input) > maxChars) {
            throw new InvalidInput("text " + index + " is " + inputs.length(input) + " characters long; with long_inputs: "
                    + "chunk this model takes at most " + maxChars + " characters per text (max_chunks_per_input "
                    + maxChunks + " windows of " + maxLength + " tokens, at most " + LongInputs.CHARS_PER_TOKEN
                    + " characters per token)");
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
