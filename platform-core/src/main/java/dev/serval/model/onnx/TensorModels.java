package dev.serval.model.onnx;

import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The {@code tensor} kind's way in: any ONNX model, its graph inputs and outputs as Open Inference Protocol tensors
 * under their graph names, one request one inference. What the model checks and how it answers is described on the
 * (package-private) model class itself. Stateless.
 */
public final class TensorModels {

    private TensorModels() {
    }

    /**
     * Reads the graph's inputs and outputs, loads the model and runs one inference on zeros.
     *
     * @param modelFile      the ONNX file
     * @param engine         ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for
     *                       none)
     * @param load           the intra-op threads per inference, and those of an inference on an idle replica's cores
     *                       ({@link LoadOptions#idleSessionThreads}); the tensor kind reads nothing else
     * @throws IOException when the file is missing or unreadable, a graph input or output has a datatype Serval does
     *                     not carry (FLOAT, DOUBLE, INT32, INT64 and BOOL), or the first inference fails
     */
    public static Model<Tensors, Tensors> load(Path modelFile, OnnxOptions engine, LoadOptions load)
            throws IOException {
        return TensorModel.load(modelFile, engine, load);
    }
}
