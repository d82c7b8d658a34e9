package dev.serval.model;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The ONNX Runtime native library ONNX models run on: its version ({@code 1.32.0}), the version of ONNX Runtime Java
 * whose classes drive it ({@code javaApi}), where it comes from, and its file when Serval placed it (empty for the
 * runtime ONNX Runtime Java extracts from its own jar). Chosen once per process by
 * {@link ModelCatalog#selectNativeRuntime}.
 */
public record NativeRuntime(String version, String javaApi, String source, Optional<Path> file) {
}
