package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;

/**
 * Writes float and double arrays as JSON arrays of numbers, in the exact text that Jackson's
 * {@link JsonGenerator#writeNumber(float)} and {@link JsonGenerator#writeNumber(double)} give each element
 * ({@link Float#toString} and {@link Double#toString}: the shortest decimal that reads back as the same number),
 * without a {@code String} per element: the numbers are appended to one {@link StringBuilder} (which, on JDK 19 and
 * later, formats a number straight into its own array) and handed to the generator as one raw value. An embedding of
 * 384 floats costs two array copies instead of a formatting buffer and a string per float.
 *
 * <p>Arrays holding NaN or an infinity, and generators set to write numbers otherwise (as strings, or with Jackson's
 * own float formatter), are written element by element through the generator, so that the text is always exactly
 * what the generator's settings give.
 *
 * <p>Not thread-safe: one instance per thread ({@link #perThread}); it keeps buffers of up to {@value #RETAINED}
 * characters for the thread's next arrays, and drops larger ones once written.
 */
final class NumberArrays {

    /**
     * Characters of buffer kept between arrays (about 4,000 floats): a thread holds at most about 192 KB (the builder's
     * bytes and the copy's chars), about 18 KB after 384-float embeddings.
     */
    static final int RETAINED = 1 << 16;

    /** Sized by the arrays written (a float takes at most 15 characters, a double 24, and a comma). */
    private StringBuilder text;
    private char[] chars;

    /** One instance for each thread that encodes (the predictor threads, mostly, and the event loops). */
    static ThreadLocal<NumberArrays> perThread() {
        return ThreadLocal.withInitial(NumberArrays::new);
    }

    /** Writes {@code values} as the generator's next value: a JSON array of numbers. */
    void write(JsonGenerator json, float[] values) throws IOException {
        if (!plain(json)) {
            writeEach(json, values);
            return;
        }
        start(values.length * 16L);
        for (int i = 0; i < values.length; i++) {
            float value = values[i];
            if (!Float.isFinite(value)) {
                writeEach(json, values);
                return;
            }
            if (i > 0) {
                text.append(',');
            }
            text.append(value);
        }
        text.append(']');
        writeText(json);
    }

    /** Writes {@code values} as the generator's next value: a JSON array of numbers. */
    void write(JsonGenerator json, double[] values) throws IOException {
        if (!plain(json)) {
            writeEach(json, values);
            return;
        }
        start(values.length * 25L);
        for (int i = 0; i < values.length; i++) {
            double value = values[i];
            if (!Double.isFinite(value)) {
                writeEach(json, values);
                return;
            }
            if (i > 0) {
                text.append(',');
            }
            text.append(value);
        }
        text.append(']');
        writeText(json);
    }

    /** Whether {@code json} writes a finite number as {@link Float#toString} / {@link Double#toString} gives it. */
    private static boolean plain(JsonGenerator json) {
        return !json.isEnabled(JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS.mappedFeature())
                && !json.isEnabled(StreamWriteFeature.USE_FAST_DOUBLE_WRITER);
    }

    private static void writeEach(JsonGenerator json, float[] values) throws IOException {
        json.writeStartArray();
        for (float value : values) {
            json.writeNumber(value);
        }
        json.writeEndArray();
    }

    private static void writeEach(JsonGenerator json, double[] values) throws IOException {
        json.writeStartArray();
        for (double value : values) {
            json.writeNumber(value);
        }
        json.writeEndArray();
    }

    private void start(long expected) {
        if (text == null || text.capacity() < expected && expected <= RETAINED) {
            text = new StringBuilder((int) Math.min(2 + expected, 1 << 20));
        }
        text.setLength(0);
        text.append('[');
    }

    private void writeText(JsonGenerator json) throws IOException {
        int length = text.length();
        if (chars == null || chars.length < length) {
            chars = new char[length];
        }
        text.getChars(0, length, chars, 0);
        json.writeRawValue(chars, 0, length);
        if (length > RETAINED) {
            text = null;
            chars = null;
        }
    }
}
