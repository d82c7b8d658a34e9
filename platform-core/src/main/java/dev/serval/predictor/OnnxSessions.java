package dev.serval.predictor;

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
final class OnnxSessions {

    private OnnxSessions() {
    }

    /**
     * Loads {@code modelFile} into an ONNX Runtime session run sequentially on {@code intraOpThreads} threads.
     *
     * @throws IOException when the file is missing or ONNX Runtime refuses it
     */
    static ZooModel<NDList, NDList> open(Path modelFile, int intraOpThreads) throws IOException {
        if (intraOpThreads < 1) {
            throw new IllegalArgumentException("intraOpThreads must be >= 1, was " + intraOpThreads);
        }
        if (!Files.isRegularFile(modelFile)) {
            throw new IOException("model file " + modelFile + " does not exist");
        }
        DjlSettings.ensureOffline();
        String fileName = modelFile.getFileName().toString();
        String modelName = fileName.endsWith(".onnx") ? fileName.substring(0, fileName.length() - 5) : fileName;
        Criteria<NDList, NDList> criteria = Criteria.builder()
                .setTypes(NDList.class, NDList.class)
                .optEngine("OnnxRuntime")
                .optModelPath(modelFile.toAbsolutePath().getParent())
                .optModelName(modelName)
                .optOption("intraOpNumThreads", Integer.toString(intraOpThreads))
                .optOption("interOpNumThreads", "1")
                .optOption("executionMode", "SEQUENTIAL")
                .build();
        try {
            return criteria.loadModel();
        } catch (ModelNotFoundException | MalformedModelException e) {
            throw new IOException("cannot load " + modelFile + ": " + e.getMessage(), e);
        }
    }
}
