package dev.serval.model.onnx;

import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Opens ONNX files as DJL models on ONNX Runtime, the same way for every model kind: each kind brings its own
 * {@link ai.djl.translate.Translator} to {@link Model#newPredictor(ai.djl.translate.Translator)}. Stateless.
 */
public final class OnnxSessions {

    /**
     * ONNX Runtime session configuration: the intra-op threads stop spinning when an inference ends, so that a wide
     * session's idle threads do not take the cores back from the narrow inferences that follow it.
     */
    static final String FORCE_SPINNING_STOP = "session.force_spinning_stop";

    private OnnxSessions() {
    }

    /**
     * Loads {@code modelFile} into an ONNX Runtime session on {@code intraOpThreads} intra-op threads, with Serval's
     * defaults (sequential execution, one inter-op thread) overridden by {@code options}.
     *
     * @param stopSpinning whether the intra-op threads stop spinning as soon as an inference ends (for a session that
     *                     borrows cores other sessions use the rest of the time)
     * @throws IOException when the file is missing or ONNX Runtime refuses it
     */
    public static Model open(Path modelFile, int intraOpThreads, OnnxOptions options, boolean stopSpinning)
            throws IOException {
        if (!Files.isRegularFile(modelFile)) {
            throw new IOException("model file " + modelFile + " does not exist");
        }
        Map<String, Object> arguments = new HashMap<>(options(intraOpThreads, options));
        String fileName = modelFile.getFileName().toString();
        String modelName = fileName.endsWith(".onnx") ? fileName.substring(0, fileName.length() - 5) : fileName;
        DjlSettings.ensureOffline();
        OnnxRuntimeLibrary.ensureSelected(); // before ONNX Runtime Java loads its native libraries
        Model model = Model.newInstance(modelName, "OnnxRuntime");
        // DJL's OrtModel starts from the session options it is given and applies the string options on top; it does
        // not close them, and ONNX Runtime copies them into the session: closed here once the session exists
        try (OrtSession.SessionOptions session = new OrtSession.SessionOptions()) {
            if (stopSpinning) {
                session.addConfigEntry(FORCE_SPINNING_STOP, "1");
            }
            arguments.put("sessionOptions", session);
            model.load(modelFile.toAbsolutePath().getParent(), modelName, arguments);
            return model;
        } catch (MalformedModelException | OrtException | IOException | RuntimeException e) {
            model.close();
            throw new IOException("cannot load " + modelFile + ": " + e.getMessage(), e);
        }
    }

    /** What {@link #open} hands DJL: the session options DJL's {@code OrtModel} reads, as strings, sorted. */
    static Map<String, String> options(int intraOpThreads, OnnxOptions options) {
        if (intraOpThreads < 1) {
            throw new IllegalArgumentException("intraOpThreads must be >= 1, was " + intraOpThreads);
        }
        Map<String, String> values = new TreeMap<>(Map.of("interOpNumThreads", "1", "executionMode", "SEQUENTIAL"));
        values.putAll(options.values()); // OnnxOptions refuses intraOpNumThreads: it stays the caller's
        values.put("intraOpNumThreads", Integer.toString(intraOpThreads));
        return values;
    }
}
