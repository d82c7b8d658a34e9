package dev.serval.model;

import dev.serval.model.onnx.OnnxRuntimeLibrary;
import dev.serval.model.onnx.TensorModels;
import dev.serval.model.text.TextModels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Every model kind Serval serves, and how a descriptor of each loads: the one place that turns a {@link ModelKind}
 * into a loaded {@link Model}. The kinds' implementations live below ({@code model.text}, {@code model.onnx}, the only
 * packages that import DJL); callers see only this catalog and the model SPI. Stateless and thread-safe; loading
 * blocks (files, native sessions, the probe inferences), so it runs on a launcher thread, never on a request thread.
 */
public final class ModelCatalog {

    private ModelCatalog() {
    }

    /**
     * Selects the ONNX Runtime native library every ONNX model of this process runs on: {@code packaged} (the newest
     * runtime packaged with Serval), {@code onnxruntime-jar} or the absolute path of a {@code libonnxruntime.so}
     * (docs/onnxruntime.md). Call it before the first model loads; a model loading first selects {@code packaged}.
     *
     * @throws IOException           when the choice cannot be used (a path that is no newer ONNX Runtime library)
     * @throws IllegalStateException when another choice was already made in this process
     */
    public static NativeRuntime selectNativeRuntime(String choice) throws IOException {
        return OnnxRuntimeLibrary.select(choice);
    }

    /**
     * Loads the model {@code descriptor} describes.
     *
     * @param descriptor the model version's descriptor
     * @param file       the descriptor's {@code file}, resolved by the caller (inside the version's folder); not read
     *                   by a kind without a graph
     * @param tokenizer  the descriptor's {@code tokenizer}, resolved likewise; read by the text kinds only
     * @param options    what the deployment asks on top of the descriptor; a {@code maxLength} of 0 means the
     *                   descriptor's {@code max_length}. The descriptor's engine options and output are the model's;
     *                   intra-op threads always come from the options
     * @throws IllegalArgumentException when an option does not fit the model (an overlap over half the maximum length,
     *                                  labels that do not match the logits)
     * @throws IOException              when a file is unreadable, the graph is not what the kind takes, or the model
     *                                  fails its first inference
     */
    public static Model<?, ?> load(ModelDescriptor descriptor, Path file, Path tokenizer, LoadOptions options)
            throws IOException {
        return load(descriptor, file, tokenizer, options, null);
    }

    /**
     * {@link #load(ModelDescriptor, Path, Path, LoadOptions)}, for any kind: the composite kinds (pipeline, java) are
     * loaded by {@code composites} (the loading deployment's, which knows its version folder and the deployments it
     * may call); a java model's jar is {@code file}, resolved inside the version folder by the caller.
     *
     * @throws IllegalArgumentException also when a composite kind comes without {@code composites}, or a pipeline's
     *                                  steps do not line up
     */
    public static Model<?, ?> load(ModelDescriptor descriptor, Path file, Path tokenizer, LoadOptions options,
            CompositeLoader composites) throws IOException {
        return load(descriptor, file, tokenizer, null, options, composites);
    }

    /**
     * {@link #load(ModelDescriptor, Path, Path, LoadOptions, CompositeLoader)} with the descriptor's {@code config}
     * resolved by the caller: a text classifier's Hugging Face {@code config.json} (its {@code problem_type} and
     * {@code id2label}); null, or a file that does not exist, for none.
     *
     * @throws IOException also when the config exists but is unreadable or not a model config
     */
    public static Model<?, ?> load(ModelDescriptor descriptor, Path file, Path tokenizer, Path config,
            LoadOptions options, CompositeLoader composites) throws IOException {
        return load(descriptor, file, tokenizer, config, null, options, composites);
    }

    /**
     * {@link #load(ModelDescriptor, Path, Path, Path, LoadOptions, CompositeLoader)} with the descriptor's
     * {@code quantization_ranges} resolved by the caller (null when it declares none): read and checked before the
     * graph loads, their width against the model's after its probe.
     *
     * @throws IllegalArgumentException also a one-line message naming the field and file when the ranges file is not
     *                                  two rows of finite numbers, each maximum above its minimum, of the model's width
     * @throws IOException              also when the ranges file is unreadable
     */
    public static Model<?, ?> load(ModelDescriptor descriptor, Path file, Path tokenizer, Path config,
            Path quantizationRanges, LoadOptions options, CompositeLoader composites) throws IOException {
        QuantizationRanges ranges = null;
        if (!descriptor.quantizationRanges().isEmpty()) {
            if (quantizationRanges == null) {
                throw new IllegalArgumentException("field 'quantization_ranges' (" + descriptor.quantizationRanges()
                        + ") names a file of the version folder: the model is loaded from the repository");
            }
            ranges = rangesFile(quantizationRanges, descriptor.quantizationRanges());
        }
        if (descriptor.kind().composite() && composites == null) {
            throw new IllegalArgumentException("a " + descriptor.kind().id() + " model calls deployments: it is "
                    + "loaded by a deployment of the server");
        }
        LoadOptions resolved = options.orMaxLength(descriptor.maxLength());
        return switch (descriptor.kind()) {
            case TEXT_EMBEDDING -> TextModels.embedding(file, tokenizer, descriptor.output(), descriptor.engine(),
                    resolved, descriptor.matryoshkaDimensions(), ranges);
            case TEXT_CLASSIFICATION -> TextModels.classification(file, tokenizer, config, descriptor.labels(),
                    descriptor.output(), descriptor.engine(), resolved);
            case TEXT_RERANK -> TextModels.rerank(file, tokenizer, descriptor.output(), descriptor.engine(), resolved,
                    descriptor.maxDocumentsPerRequest());
            case TENSOR -> TensorModels.load(file, descriptor.engine(), options);
            case NOOP -> new NoopModel();
            case PIPELINE, JAVA -> composites.load(descriptor.composite(), file);
        };
    }

    /** The ranges in {@code file}; a refusal names the field and the file as the descriptor gives it. */
    private static QuantizationRanges rangesFile(Path file, String named) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("field 'quantization_ranges' (" + named + "): no such file in the "
                    + "model's folder");
        }
        try {
            return QuantizationRanges.read(file);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("field 'quantization_ranges' (" + named + "): the file " + e.getMessage(),
                    e);
        }
    }
}
