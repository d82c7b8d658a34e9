package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.serval.error.InvalidInput;
import dev.serval.model.ModelSignature;
import dev.serval.model.TensorSignature;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Encodes output tensors as an Open Inference Protocol response: each output with its name, datatype and shape, its
 * data as flat JSON or, when asked, in the binary section (little-endian numbers, BYTES length-prefixed, after a
 * JSON header whose length is in {@code Inference-Header-Content-Length}). Thread-safe, stateless.
 */
final class OipResponseEncoder {

    static final String HEADER_LENGTH = "Inference-Header-Content-Length";

    private final JsonFactory factory;

    OipResponseEncoder(JsonFactory factory) {
        this.factory = factory;
    }

    /**
     * Refuses, before inference, outputs the model does not have. A model that declares no outputs (the no-op model
     * answers with whatever it was given) is checked after inference instead.
     */
    static void checkRequestedOutputs(OipRequest request, ModelSignature signature) {
        if (request.outputs() == null || signature.outputs().isEmpty()) {
            return;
        }
        for (int i = 0; i < request.outputs().size(); i++) {
            String name = request.outputs().get(i).name();
            if (signature.outputs().stream().noneMatch(output -> output.name().equals(name))) {
                throw unknownOutput(i, name, signature.outputs().stream().map(TensorSignature::name).toList());
            }
        }
    }

    private static InvalidInput unknownOutput(int index, String name, List<String> outputs) {
        return new InvalidInput("outputs[" + index + "].name", "unknown output '" + name + "'; this model's outputs are "
                + String.join(", ", outputs.stream().map(o -> "'" + o + "'").toList()));
    }

    Answer encode(String model, String version, OipRequest request, Tensors outputs) {
        List<Tensor> selected = new ArrayList<>(outputs.size());
        List<Boolean> binary = new ArrayList<>(outputs.size());
        if (request.outputs() == null) {
            for (Tensor tensor : outputs.tensors()) {
                selected.add(tensor);
                binary.add(request.binaryOutput());
            }
        } else {
            for (int i = 0; i < request.outputs().size(); i++) {
                OipRequest.Output wanted = request.outputs().get(i);
                int index = i;
                selected.add(outputs.get(wanted.name()).orElseThrow(() -> unknownOutput(index, wanted.name(),
                        outputs.tensors().stream().map(Tensor::name).toList())));
                binary.add(wanted.binary());
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + estimate(selected));
        List<byte[]> sections = new ArrayList<>();
        try (JsonGenerator json = factory.createGenerator(out)) {
            json.writeStartObject();
            json.writeStringField("model_name", model);
            json.writeStringField("model_version", version);
            if (request.id() != null) {
                json.writeStringField("id", request.id());
            }
            json.writeArrayFieldStart("outputs");
            for (int i = 0; i < selected.size(); i++) {
                Tensor tensor = selected.get(i);
                json.writeStartObject();
                json.writeStringField("name", tensor.name());
                json.writeStringField("datatype", tensor.datatype().name());
                json.writeArrayFieldStart("shape");
                for (long dim : tensor.shape()) {
                    json.writeNumber(dim);
                }
                json.writeEndArray();
                if (binary.get(i)) {
                    byte[] section = binary(tensor);
                    sections.add(section);
                    json.writeObjectFieldStart("parameters");
                    json.writeNumberField("binary_data_size", section.length);
                    json.writeEndObject();
                } else {
                    json.writeFieldName("data");
                    writeData(json, tensor);
                }
                json.writeEndObject();
            }
            json.writeEndArray();
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (sections.isEmpty()) {
            return Answer.json(out.toByteArray());
        }
        int headerLength = out.size();
        sections.forEach(out::writeBytes);
        return new Answer(200, Answer.OCTET_STREAM, out.toByteArray(), Map.of(HEADER_LENGTH, Integer.toString(headerLength)));
    }

    private static int estimate(List<Tensor> tensors) {
        long total = 0;
        for (Tensor tensor : tensors) {
            total += tensor.size() * 12L;
        }
        return (int) Math.min(total, 64 << 20);
    }

    private static void writeData(JsonGenerator json, Tensor tensor) throws IOException {
        json.writeStartArray();
        switch (tensor.data()) {
            case float[] values -> {
                for (float value : values) {
                    json.writeNumber(value);
                }
            }
            case double[] values -> {
                for (double value : values) {
                    json.writeNumber(value);
                }
            }
            case int[] values -> {
                for (int value : values) {
                    json.writeNumber(value);
                }
            }
            case long[] values -> {
                for (long value : values) {
                    json.writeNumber(value);
                }
            }
            case boolean[] values -> {
                for (boolean value : values) {
                    json.writeBoolean(value);
                }
            }
            case String[] values -> {
                for (String value : values) {
                    json.writeString(value);
                }
            }
            default -> throw new IllegalStateException("unexpected data " + tensor.data().getClass());
        }
        json.writeEndArray();
    }

    private static byte[] binary(Tensor tensor) {
        if (tensor.data() instanceof String[] values) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteBuffer length = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            for (String value : values) {
                byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
                out.writeBytes(length.clear().putInt(bytes.length).array());
                out.writeBytes(bytes);
            }
            return out.toByteArray();
        }
        ByteBuffer buffer = ByteBuffer.allocate(tensor.size() * tensor.datatype().byteSize())
                .order(ByteOrder.LITTLE_ENDIAN);
        switch (tensor.data()) {
            case float[] values -> buffer.asFloatBuffer().put(values);
            case double[] values -> buffer.asDoubleBuffer().put(values);
            case int[] values -> buffer.asIntBuffer().put(values);
            case long[] values -> buffer.asLongBuffer().put(values);
            case boolean[] values -> {
                for (boolean value : values) {
                    buffer.put((byte) (value ? 1 : 0));
                }
            }
            default -> throw new IllegalStateException("unexpected data " + tensor.data().getClass());
        }
        return buffer.array();
    }
}
