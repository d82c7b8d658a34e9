package dev.serval.api.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.serval.model.TensorSignature;
import java.util.List;
import java.util.Map;

/**
 * A model's metadata as the Open Inference Protocol defines it, one value that REST ({@code GET /v2/models/{name}},
 * JSON, absent fields left out) and gRPC ({@code ModelMetadata}, which has no place for Serval's own fields) both
 * render. Three shapes: a served model (versions, platform, inputs, outputs, batching); a multiplexed model that has
 * not served yet, read without loading it (versions, kind, {@code loaded: false}, the inputs its kind takes); a
 * multiplexed deployment itself (platform {@code serval-multiplexed}, its base model and the models it serves).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ModelMetadata(String name, List<String> versions, String platform, String kind, Boolean loaded,
        List<TensorSignature> inputs, List<TensorSignature> outputs, Map<String, Object> batching, String model,
        List<String> models) {

    /** A served model's. */
    static ModelMetadata served(String name, String version, String platform, List<TensorSignature> inputs,
            List<TensorSignature> outputs, Map<String, Object> batching) {
        return new ModelMetadata(name, List.of(version), platform, null, null, inputs, outputs, batching, null, null);
    }

    /** A multiplexed model's that has not served yet: what its kind tells, without loading it. */
    static ModelMetadata unloaded(String name, String version, String kind, List<TensorSignature> inputs) {
        return new ModelMetadata(name, List.of(version), null, kind, false, inputs, List.of(), null, null, null);
    }

    /** A multiplexed deployment's own: its base model and the models it serves. */
    static ModelMetadata multiplexed(String name, String model, List<String> models) {
        return new ModelMetadata(name, null, "serval-multiplexed", null, null, null, null, null, model, models);
    }
}
