package dev.serval.model.onnx;

import ai.djl.MalformedModelException;
import ai.djl.ndarray.NDList;
import ai.djl.repository.zoo.Criteria;
import ai.djl.repository.zoo.ModelNotFoundException;
import ai.djl.repository.zoo.ZooModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opens ONNX files as DJL models on ONNX Runtime, the same way for every model kind: an {@link NDList} in, an
 * {@link NDList} out, so that each kind brings its own {@link ai.djl.translate.Translator} to
 * {@link ZooModel#newPredictor(ai.djl.translate.Translator)}. Stateless.
 */
public final class OnnxSessions {

    private OnnxSessions() {
    }

    /**
     * Loads {@code modelFile} into an ONNX Runtime session on {@code intraOpThreads} intra-op threads, with Serval's
     * defaults (sequential execution, one inter-op thread) overridden by {@code options}.
     *
     * @throws IOException when the file is missing or ONNX Runtime refuses it
     */
    public static ZooModel<NDList, NDList> open(Path modelFile, int intraOpThreads, OnnxOptions options) throws IOException {
        if (!Files.isRegularFile(modelFile)) {
            throw new IOException("model file " + modelFile + " does not exist");
        }
        try {
            return criteria(modelFile, intraOpThreads, options).loadModel();
        } catch (ModelNotFoundException | MalformedModelException e) {
            throw new IOException("cannot load " + modelFile + ": " + e.getMessage(), e);
        }
    }

    /** What {@link #open} hands DJL: the file, the engine, and the session options DJL's {@code OrtModel} reads. */
    static Criteria<NDList, NDList> criteria(Path modelFile, int intraOpThreads, OnnxOptions options) {
        if (intraOpThreads < 1) {
            throw new IllegalArgumentException("intraOpThreads must be >= 1, was " + intraOpThreads);
        }
        DjlSettings.ensureOffline();
        String fileName = modelFile.getFileName().toString();
        String modelName = fileName.endsWith(".onnx") ? fileName.substring(0, fileName.length() - 5) : fileName;
        Criteria.Builder<NDList, NDList> builder = Criteria.builder()
                .setTypes(NDList.class, NDList.class)
                .optEngine("OnnxRuntime")
                .optModelPath(modelFile.toAbsolutePath().getParent())
                .optModelName(modelName)
                .optOption("interOpNumThreads", "1")
                .optOption("executionMode", "SEQUENTIAL");
        options.values().forEach(builder::optOption); // OnnxOptions refuses intraOpNumThreads: it stays the caller's
        return builder.optOption("intraOpNumThreads", Integer.toString(intraOpThreads)).build();
    }
}
