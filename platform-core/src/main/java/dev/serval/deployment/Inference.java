package dev.serval.deployment;

import dev.serval.error.InvalidInput;
import dev.serval.model.ModelSignature;
import dev.serval.model.TensorSignature;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The answer to one tensor request ({@link Deployment#infer}): the output tensors, mapped by the model of the replica
 * that ran it (its output names, its labels), and that replica's model version.
 *
 * @param outputs every output of the model, in the model's order
 * @param version the model version of the replica that answered
 * @param inputs  how many model inputs the request made (texts for a text model, 1 for a tensor model), for meters
 */
public record Inference(Tensors outputs, String version, int inputs) {

    public Inference {
        Objects.requireNonNull(outputs, "outputs");
        Objects.requireNonNull(version, "version");
        if (inputs < 1) {
            throw new IllegalArgumentException("an answered request made at least one input, not " + inputs);
        }
    }

    /**
     * The outputs named in {@code names}, in that order (a name may appear twice).
     *
     * @throws InvalidInput naming {@code outputs[i].name} when the model gave no output of that name
     */
    public List<Tensor> select(List<String> names) {
        List<Tensor> selected = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            Tensor tensor = outputs.get(name).orElse(null);
            if (tensor == null) {
                throw unknownOutput(i, name, outputs.tensors().stream().map(Tensor::name).toList());
            }
            selected.add(tensor);
        }
        return selected;
    }

    /**
     * Refuses, before inference, requested outputs the model does not have. A model that declares no outputs (the
     * no-op model answers with whatever it was given), or no single model ({@code signature} null: none serves, or
     * two versions do), leave the check to the answer ({@link #select}).
     */
    static void checkRequested(List<String> names, ModelSignature signature) {
        if (signature == null || signature.outputs().isEmpty()) {
            return;
        }
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            if (signature.outputs().stream().noneMatch(output -> output.name().equals(name))) {
                throw unknownOutput(i, name, signature.outputs().stream().map(TensorSignature::name).toList());
            }
        }
    }

    /** The refusal of requested output {@code index}, {@code name}, which is not among the model's {@code outputs}. */
    static InvalidInput unknownOutput(int index, String name, List<String> outputs) {
        return new InvalidInput("outputs[" + index + "].name", "unknown output '" + name
                + "'; this model's outputs are " + String.join(", ", outputs.stream().map(o -> "'" + o + "'").toList()));
    }
}
