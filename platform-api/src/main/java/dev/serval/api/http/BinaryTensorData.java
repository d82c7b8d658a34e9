package dev.serval.api.http;

import dev.serval.error.InvalidInput;
import dev.serval.tensor.DataType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Tensor elements in their binary layout, little-endian, as the OIP binary tensor extension and gRPC's raw contents
 * carry them: numbers and BOOLs packed, BYTES as a 4-byte length and that many bytes each. Bounded by the caller's
 * declared count before anything is allocated from it.
 */
public final class BinaryTensorData {

    private BinaryTensorData() {
    }

    /**
     * {@code count} elements of a numeric or BOOL {@code datatype} from {@code buffer} (little-endian, holding exactly
     * their bytes: checked by the caller), as the binary tensor extension and gRPC's raw contents lay them out.
     */
    public static Object numbers(DataType datatype, ByteBuffer buffer, int count) {
        return switch (datatype) {
            case BOOL -> {
                boolean[] out = new boolean[count];
                for (int i = 0; i < count; i++) {
                    out[i] = buffer.get() != 0;
                }
                yield out;
            }
            case INT32 -> {
                int[] out = new int[count];
                buffer.asIntBuffer().get(out);
                yield out;
            }
            case INT64 -> {
                long[] out = new long[count];
                buffer.asLongBuffer().get(out);
                yield out;
            }
            case FP32 -> {
                float[] out = new float[count];
                buffer.asFloatBuffer().get(out);
                yield out;
            }
            case FP64 -> {
                double[] out = new double[count];
                buffer.asDoubleBuffer().get(out);
                yield out;
            }
            case BYTES -> throw new AssertionError();
        };
    }

    /**
     * BYTES in the binary extension: each element is a 4-byte little-endian length, then that many bytes. Stops at
     * the first element past the {@code count} the shape declares.
     */
    static String[] strings(byte[] body, int offset, int size, int count, String name, String where) {
        ByteBuffer buffer = ByteBuffer.wrap(body, offset, size).order(ByteOrder.LITTLE_ENDIAN);
        List<String> texts = new ArrayList<>(Math.min(count, size / 4));
        var decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        while (buffer.hasRemaining()) {
            if (texts.size() == count) {
                throw new InvalidInput(where + ".shape", "input '" + name + "' has shape of " + count
                        + " elements but its binary data holds more");
            }
            if (buffer.remaining() < 4) {
                throw new InvalidInput(where + ".parameters.binary_data_size", "binary data for '" + name
                        + "' ends inside the length prefix of element " + texts.size());
            }
            int length = buffer.getInt();
            if (length < 0 || length > buffer.remaining()) {
                throw new InvalidInput(where + ".parameters.binary_data_size", "binary element " + texts.size()
                        + " of '" + name + "' declares " + Integer.toUnsignedString(length) + " bytes but "
                        + buffer.remaining() + " remain");
            }
            ByteBuffer element = buffer.slice(buffer.position(), length);
            buffer.position(buffer.position() + length);
            try {
                texts.add(decoder.decode(element).toString());
            } catch (CharacterCodingException e) {
                throw new InvalidInput(where, "binary element " + texts.size() + " of '" + name
                        + "' is not valid UTF-8");
            }
        }
        return texts.toArray(String[]::new);
    }
}
