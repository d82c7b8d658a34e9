package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.serval.deployment.Inference;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
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
 * JSON header whose length is in {@code Inference-Header-Content-Length}). Thread-safe: its only state is each
 * thread's buffers for formatting numbers ({@link NumberArrays}).
 */
public final class OipResponseEncoder {

    static final String HEADER_LENGTH = "Inference-Header-Content-Length";

    private final JsonFactory factory;
    private final ThreadLocal<NumberArrays> numbers = NumberArrays.perThread();

    OipResponseEncoder(JsonFactory factory) {
        this.factory = factory;
    }

    /**
     * The answer of deployment {@code model} to {@code request}: the outputs the request asked for (all, when it named
     * none), each in JSON or in the binary section as asked.
     *
     * @throws dev.serval.error.InvalidInput when a requested output is not among those the model gave
     */
    Answer encode(String model, OipRequest request, Inference answer) {
        List<Tensor> selected;
        List<Boolean> binary = new ArrayList<>(answer.outputs().size());
        if (request.outputs() == null) {
            selected = answer.outputs().tensors();
            for (int i = 0; i < selected.size(); i++) {
                binary.add(request.binaryOutput());
            }
        } else {
            selected = answer.select(request.outputs().stream().map(OipRequest.Output::name).toList());
            for (OipRequest.Output wanted : request.outputs()) {
                binary.add(wanted.binary());
            }
        }
        Answer.Bytes out = new Answer.Bytes(256 + estimate(selected));
        List<byte[]> sections = new ArrayList<>();
        NumberArrays numbers = this.numbers.get();
        try (JsonGenerator json = factory.createGenerator(out)) {
            json.writeStartObject();
            json.writeStringField("model_name", model);
            json.writeStringField("model_version", answer.version());
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
                    writeData(json, tensor, numbers);
                }
                json.writeEndObject();
            }
            json.writeEndArray();
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (sections.isEmpty()) {
            return Answer.json(out);
        }
        int headerLength = out.size();
        sections.forEach(out::writeBytes);
        return new Answer(200, Answer.OCTET_STREAM, out.array(), out.size(),
                Map.of(HEADER_LENGTH, Integer.toString(headerLength)));
    }

    private static int estimate(List<Tensor> tensors) {
        long total = 0;
        for (Tensor tensor : tensors) {
            // As JSON, about what the longest numbers take with their commas (-0.012345678, 15 for a double), so
            // that an embedding's answer fits the first buffer.
            total += tensor.size() * (tensor.datatype() == DataType.FP64 ? 25L : 14L);
        }
        return (int) Math.min(total, 64 << 20);
    }

    private static void writeData(JsonGenerator json, Tensor tensor, NumberArrays numbers) throws IOException {
        switch (tensor.data()) {
            case float[] values -> numbers.write(json, values);
            case double[] values -> numbers.write(json, values);
            case int[] values -> json.writeArray(values, 0, values.length);
            case long[] values -> json.writeArray(values, 0, values.length);
            case String[] values -> json.writeArray(values, 0, values.length);
            case boolean[] values -> {
                json.writeStartArray();
                for (boolean value : values) {
                    json.writeBoolean(value);
                }
                json.writeEndArray();
            }
            default -> throw new IllegalStateException("unexpected data " + tensor.data().getClass());
        }
    }

    public static byte[] binary(Tensor tensor) {
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
