package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class NumberArraysTest {

    private static final float[] EDGE_FLOATS = {0f, -0f, 1f, -1f, Float.MIN_VALUE, -Float.MIN_VALUE, 1e-45f,
        Float.MIN_NORMAL, Math.nextDown(Float.MIN_NORMAL), Math.nextUp(Float.MIN_VALUE), 3.4028235e38f,
        -Float.MAX_VALUE, Math.nextDown(Float.MAX_VALUE), 0.1f, 1e7f, 1e-3f, 9.999999e-4f, 1.0E-5f, 123456.79f,
        2e-44f, 0.33333334f, 1.17549435E-38f, 16777216f, 16777217f};

    private static final double[] EDGE_DOUBLES = {0d, -0d, 1d, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL,
        Math.nextDown(Double.MIN_NORMAL), Double.MAX_VALUE, -Double.MAX_VALUE, 0.1, 1e7, 1e-3, 2e-323, 1e23,
        0.30000000000000004, 9007199254740993d};

    private final JsonFactory plain = new ObjectMapper().getFactory();

    @Test
    void writesEdgeFloatsAsJacksonDoesElementByElement() throws IOException {
        assertSameAsJackson(plain, EDGE_FLOATS);
        assertRoundTrips(EDGE_FLOATS);
    }

    @Test
    void writesRandomFloatsOfEveryExponentAsJacksonDoesAndTheyReadBackBitForBit() throws IOException {
        SplittableRandom random = new SplittableRandom(16);
        NumberArrays numbers = new NumberArrays();
        for (int round = 0; round < 200; round++) {
            float[] values = new float[1 + random.nextInt(500)];
            for (int i = 0; i < values.length; i++) {
                float value;
                do {
                    value = Float.intBitsToFloat(random.nextInt()); // every exponent, subnormals included
                } while (!Float.isFinite(value));
                values[i] = round % 2 == 0 ? value : (float) random.nextGaussian() / 20; // embedding-like values
            }
            assertEquals(jackson(plain, values), written(plain, numbers, values));
            assertRoundTrips(values);
        }
    }

    @Test
    void writesEdgeAndRandomDoublesAsJacksonDoes() throws IOException {
        assertEquals(jackson(plain, EDGE_DOUBLES), written(plain, new NumberArrays(), EDGE_DOUBLES));
        SplittableRandom random = new SplittableRandom(17);
        double[] values = new double[2000];
        for (int i = 0; i < values.length; i++) {
            double value;
            do {
                value = Double.longBitsToDouble(random.nextLong());
            } while (!Double.isFinite(value));
            values[i] = value;
        }
        assertEquals(jackson(plain, values), written(plain, new NumberArrays(), values));
    }

    @Test
    void writesNonFiniteNumbersAsTheGeneratorsSettingsDo() throws IOException {
        float[] floats = {1.5f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0f};
        double[] doubles = {1.5, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
        JsonFactory bare = JsonFactory.builder().disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS).build();
        for (JsonFactory factory : new JsonFactory[] {plain, bare}) {
            assertSameAsJackson(factory, floats);
            assertEquals(jackson(factory, doubles), written(factory, new NumberArrays(), doubles));
        }
        assertEquals("[1.5,\"NaN\",\"Infinity\",\"-Infinity\",-0.0]", written(plain, new NumberArrays(), floats));
    }

    @Test
    void followsGeneratorsThatWriteNumbersOtherwise() throws IOException {
        JsonFactory asStrings = JsonFactory.builder().enable(JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS).build();
        JsonFactory fastWriter = JsonFactory.builder().enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER).build();
        for (JsonFactory factory : new JsonFactory[] {asStrings, fastWriter}) {
            assertSameAsJackson(factory, EDGE_FLOATS);
            assertEquals(jackson(factory, EDGE_DOUBLES), written(factory, new NumberArrays(), EDGE_DOUBLES));
        }
    }

    @Test
    void writesEmptyArraysAndSeveralArraysInOneDocument() throws IOException {
        NumberArrays numbers = new NumberArrays();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = plain.createGenerator(out)) {
            json.writeStartObject();
            json.writeFieldName("a");
            numbers.write(json, new float[0]);
            json.writeFieldName("b");
            numbers.write(json, new float[] {0.25f, 3f});
            json.writeFieldName("c");
            numbers.write(json, new double[] {1e300});
            json.writeFieldName("d");
            numbers.write(json, new float[] {7f});
            json.writeEndObject();
        }
        assertEquals("{\"a\":[],\"b\":[0.25,3.0],\"c\":[1.0E300],\"d\":[7.0]}", out.toString());
    }

    @Test
    void oneInstanceWritesArraysLargerThanItKeepsAndSmallerOnesAfter() throws IOException {
        NumberArrays numbers = new NumberArrays();
        SplittableRandom random = new SplittableRandom(18);
        for (int length : new int[] {3, NumberArrays.RETAINED, 384, 3 * NumberArrays.RETAINED, 0, 384, 1}) {
            float[] values = new float[length];
            for (int i = 0; i < length; i++) {
                values[i] = (float) random.nextGaussian() * 1e-3f;
            }
            assertEquals(jackson(plain, values), written(plain, numbers, values));
        }
    }

    private void assertSameAsJackson(JsonFactory factory, float[] values) throws IOException {
        assertEquals(jackson(factory, values), written(factory, new NumberArrays(), values));
    }

    private static void assertRoundTrips(float[] values) throws IOException {
        String text = written(new ObjectMapper().getFactory(), new NumberArrays(), values);
        new ObjectMapper().readTree(text); // valid JSON
        String[] elements = text.substring(1, text.length() - 1).split(",");
        float[] back = new float[elements.length];
        for (int i = 0; i < back.length; i++) {
            back[i] = Float.parseFloat(elements[i]);
        }
        assertArrayEquals(values, back); // compares bits: -0.0 and 0.0 differ
    }

    private static String written(JsonFactory factory, NumberArrays numbers, float[] values) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = factory.createGenerator(out)) {
            numbers.write(json, values);
        }
        return out.toString();
    }

    private static String written(JsonFactory factory, NumberArrays numbers, double[] values) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = factory.createGenerator(out)) {
            numbers.write(json, values);
        }
        return out.toString();
    }

    /** What the encoders wrote before: one {@code writeNumber} per element. */
    private static String jackson(JsonFactory factory, float[] values) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = factory.createGenerator(out)) {
            json.writeStartArray();
            for (float value : values) {
                json.writeNumber(value);
            }
            json.writeEndArray();
        }
        return out.toString();
    }

    private static String jackson(JsonFactory factory, double[] values) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = factory.createGenerator(out)) {
            json.writeStartArray();
            for (double value : values) {
                json.writeNumber(value);
            }
            json.writeEndArray();
        }
        return out.toString();
    }
}
