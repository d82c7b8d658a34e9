package dev.serval.api.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * A small seeded property harness for plain JUnit tests: {@code Fuzz.forAll(generator).check(property)} generates a
 * value with {@code generator} and runs {@code property} on it, {@link #TRIES} times, each try from its own seed; the
 * first failure fails the test with the seed, the exact generated value and a command that replays it.
 *
 * <ul>
 *   <li><b>Tries</b>: the system property {@code serval.fuzz.tries} (default 300; platform-api/pom.xml sets it for the
 *       {@code decoder-fuzz} fork, {@code -Dserval.fuzz.tries=100000} runs longer). A property with a fixed number of
 *       tries ({@link Check#tries(int)}) runs at most that many.</li>
 *   <li><b>Seeds</b>: the base seed is {@code serval.fuzz.seed} (default: a random one, printed when the class loads).
 *       Try 0 of every property uses the base seed, and each next try the seed {@link #nextSeed derived} from the
 *       previous one with {@link SplittableRandom}; so {@code -Dserval.fuzz.seed=<the failed try's seed>
 *       -Dserval.fuzz.tries=1} replays exactly the failed try, and the same base seed replays a whole run.</li>
 *   <li><b>Shrinking</b> (cheap, not minimal): after a failure the harness generates again with the same and
 *       derived seeds at smaller sizes ({@code 1/2 .. 1/64} and 0 of every list and string length the generator asks
 *       {@link Source#size} for) and reports the smallest sample that still fails, with its own seed and
 *       {@code serval.fuzz.size}.</li>
 * </ul>
 */
final class Fuzz {

    /** Tries per property: {@code serval.fuzz.tries}. */
    static final int TRIES = tries();
    /** The base seed: {@code serval.fuzz.seed}, or a random one. */
    static final long SEED = seed();
    /** The scale of every generated length (1 = as generated; a shrunk sample is replayed with its own). */
    static final double SIZE = size();

    /** Failing samples are shown up to this many characters of text (and half as many bytes in hex). */
    static final int SHOW_CHARS = 4_096;

    private static final double[] SHRINK_SIZES = {0.5, 0.25, 0.125, 1.0 / 16, 1.0 / 32, 1.0 / 64, 0};
    private static final int SHRINK_SEEDS_PER_SIZE = 12;

    static {
        System.out.println("serval.fuzz: base seed " + SEED + ", " + TRIES + (TRIES == 1 ? " try" : " tries") + " per property"
                + (SIZE == 1 ? "" : ", size " + SIZE) + " (replay this run: -Dserval.fuzz.seed=" + SEED + ")");
    }

    private Fuzz() {
    }

    /** Makes one value from a source of randomness. */
    @FunctionalInterface
    interface Gen<T> {
        T next(Source source);
    }

    /** What must hold for every generated value: returns normally, or throws (an assertion, or anything else). */
    @FunctionalInterface
    interface Property<T> {
        void check(T value) throws Exception;
    }

    static <T> Check<T> forAll(Gen<T> generator) {
        return new Check<>(generator);
    }

    /** The seed of the try after the one seeded {@code seed}. */
    static long nextSeed(long seed) {
        return new SplittableRandom(seed).split().nextLong();
    }

    /** One property over one generator; {@link #check} runs it. */
    static final class Check<T> {
        private final Gen<T> generator;
        private int tries = -1;
        private boolean shrink = true;
        private Function<? super T, String> describe = Fuzz::show;

        private Check(Gen<T> generator) {
            this.generator = generator;
        }

        /** At most this many tries, whatever {@code serval.fuzz.tries} says (for costly tries). */
        Check<T> tries(int fixed) {
            this.tries = fixed;
            return this;
        }

        /** No shrinking after a failure (for costly tries, or where smaller sizes mean nothing). */
        Check<T> noShrink() {
            this.shrink = false;
            return this;
        }

        /** How a failing value is shown (default: its {@code toString}, a {@code byte[]} as text and hex). */
        Check<T> describedAs(Function<? super T, String> describe) {
            this.describe = describe;
            return this;
        }

        void check(Property<? super T> property) {
            String test = caller();
            int count = tries < 0 ? TRIES : Math.min(tries, TRIES);
            long seed = SEED;
            for (int i = 0; i < count; i++, seed = nextSeed(seed)) {
                Failure<T> failure = attempt(property, seed, SIZE);
                if (failure != null) {
                    Failure<T> smaller = shrink && SIZE > 0 ? shrink(property, failure) : null;
                    throw report(test, i, count, failure, smaller);
                }
            }
        }

        private Failure<T> attempt(Property<? super T> property, long seed, double size) {
            T value;
            try {
                value = generator.next(new Source(seed, size));
            } catch (RuntimeException | Error e) {
                throw new AssertionError("the generator failed (a bug in the test) with seed " + seed
                        + " and size " + size + ": " + e, e);
            }
            try {
                property.check(value);
                return null;
            } catch (Throwable e) {
                return new Failure<>(seed, size, value, e);
            }
        }

        /** The failure at the smallest size at which the same or a derived seed still fails, or null. */
        private Failure<T> shrink(Property<? super T> property, Failure<T> failure) {
            Failure<T> smallest = null;
            for (double size : SHRINK_SIZES) {
                if (size >= failure.size) {
                    continue;
                }
                Failure<T> found = null;
                long seed = failure.seed;
                for (int k = 0; k < SHRINK_SEEDS_PER_SIZE && found == null; k++, seed = nextSeed(seed)) {
                    found = attempt(property, seed, size);
                }
                if (found == null) {
                    break;
                }
                smallest = found;
            }
            return smallest;
        }

        private AssertionError report(String test, int index, int count, Failure<T> failure, Failure<T> smaller) {
            StringBuilder message = new StringBuilder()
                    .append(test).append(" failed on try ").append(index + 1).append(" of ").append(count)
                    .append(" (base seed ").append(SEED).append("): ").append(summary(failure.error))
                    .append("\n  seed ").append(failure.seed).append(sizeNote(failure.size))
                    .append(", input: ").append(describe.apply(failure.value))
                    .append("\n  replay: ").append(replay(test, failure));
            if (smaller != null) {
                message.append("\n  a smaller input that fails too: ").append(summary(smaller.error))
                        .append("\n  seed ").append(smaller.seed).append(sizeNote(smaller.size))
                        .append(", input: ").append(describe.apply(smaller.value))
                        .append("\n  replay: ").append(replay(test, smaller));
            }
            AssertionError error = new AssertionError(message.toString(), failure.error);
            if (smaller != null) {
                error.addSuppressed(smaller.error);
            }
            return error;
        }

        /** The failure's first line, shortened (its whole message is the cause's, below the report). */
        private static String summary(Throwable error) {
            String text = error.toString().lines().findFirst().orElse("");
            return truncate(text, 300);
        }

        private static String sizeNote(double size) {
            return size == 1 ? "" : " at size " + size;
        }

        private static String replay(String test, Failure<?> failure) {
            return "./mvnw -pl platform-api -am test -Dsurefire.failIfNoSpecifiedTests=false -Dtest='" + test
                    + "' -Dserval.fuzz.seed=" + failure.seed + " -Dserval.fuzz.tries=1"
                    + (failure.size == 1 ? "" : " -Dserval.fuzz.size=" + failure.size);
        }

        /** The test method that called {@link #check}, as Class#method. */
        private static String caller() {
            return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                    .walk(frames -> frames.filter(frame -> frame.getDeclaringClass().getEnclosingClass() != Fuzz.class
                                    && frame.getDeclaringClass() != Fuzz.class)
                            .findFirst()
                            .map(frame -> frame.getDeclaringClass().getSimpleName() + "#" + frame.getMethodName())
                            .orElse("?"));
        }
    }

    private record Failure<T>(long seed, double size, T value, Throwable error) {
    }

    /**
     * Randomness for a generator, from one seed. Integers in a range come out at one of the range's edges (or 0) one
     * time in twelve, as edge cases are where decoders break. Lengths asked for with {@link #size} shrink with the
     * harness's size.
     */
    static final class Source {
        private static final String PRINTABLE =
                " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";

        private static final double[] EDGE_DOUBLES = {0.0, -0.0, 1.0, -1.0, 0.5, Double.MIN_VALUE, -Double.MIN_VALUE,
            Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_NORMAL, Float.MAX_VALUE, 1e-7, 1e16, 9_007_199_254_740_993.0};

        private final SplittableRandom random;
        private final double size;

        Source(long seed, double size) {
            this.random = new SplittableRandom(seed);
            this.size = size;
        }

        /** An int in [min, max], the edges (and 0) favoured. */
        int between(int min, int max) {
            return (int) between((long) min, max);
        }

        /** A long in [min, max], the edges (and 0) favoured. */
        long between(long min, long max) {
            if (min > max) {
                throw new IllegalArgumentException(min + " > " + max);
            }
            if (random.nextInt(12) == 0) {
                long[] edges = {min, max, min + (min < max ? 1 : 0), max - (min < max ? 1 : 0), min <= 0 && 0 <= max ? 0 : min};
                return edges[random.nextInt(edges.length)];
            }
            if (max < Long.MAX_VALUE) {
                return random.nextLong(min, max + 1);
            }
            if (min > Long.MIN_VALUE) {
                return random.nextLong(min - 1, max) + 1;
            }
            return random.nextLong();
        }

        int anyInt() {
            return between(Integer.MIN_VALUE, Integer.MAX_VALUE);
        }

        long anyLong() {
            return between(Long.MIN_VALUE, Long.MAX_VALUE);
        }

        byte anyByte() {
            return (byte) between(Byte.MIN_VALUE, Byte.MAX_VALUE);
        }

        /** A finite double: edge values, short decimals, or any bit pattern. */
        double anyDouble() {
            return switch (random.nextInt(3)) {
                case 0 -> EDGE_DOUBLES[random.nextInt(EDGE_DOUBLES.length)];
                case 1 -> random.nextInt(-1_000_000, 1_000_000) / Math.pow(10, random.nextInt(7));
                default -> {
                    double value;
                    do {
                        value = Double.longBitsToDouble(random.nextLong());
                    } while (!Double.isFinite(value));
                    yield value;
                }
            };
        }

        /** A double in [0, 1], 0 and 1 included (and favoured). */
        double unit() {
            return switch (random.nextInt(16)) {
                case 0 -> 0;
                case 1 -> 1;
                default -> random.nextDouble();
            };
        }

        boolean bool() {
            return random.nextBoolean();
        }

        /** True with probability {@code p}. */
        boolean chance(double p) {
            return random.nextDouble() < p;
        }

        /** An index into {@code weights}, each chosen in proportion to its weight. */
        int frequency(int... weights) {
            int total = Arrays.stream(weights).sum();
            int at = random.nextInt(total);
            for (int i = 0; i < weights.length; i++) {
                at -= weights[i];
                if (at < 0) {
                    return i;
                }
            }
            throw new IllegalStateException();
        }

        <T> T pick(List<T> choices) {
            return choices.get(random.nextInt(choices.size()));
        }

        @SafeVarargs
        final <T> T pick(T... choices) {
            return choices[random.nextInt(choices.length)];
        }

        /** Null with probability {@code p}, else a generated value. */
        <T> T orNull(double p, Gen<T> generator) {
            return chance(p) ? null : generator.next(this);
        }

        /** A length in [min, max], max scaled down with the harness's size (the shrinking step). */
        int size(int min, int max) {
            return between(min, min + (int) Math.round((max - min) * size));
        }

        /** A list of {@link #size(int, int) size(min, max)} generated elements. */
        <T> List<T> list(int min, int max, Gen<T> element) {
            return listOfSize(size(min, max), element);
        }

        <T> List<T> listOfSize(int count, Gen<T> element) {
            List<T> list = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                list.add(element.next(this));
            }
            return list;
        }

        /** A list of generated elements with distinct keys; its length in [min, max] as far as the keys allow. */
        <T> List<T> uniqueList(int min, int max, Gen<T> element, Function<T, ?> key) {
            int count = size(min, max);
            List<T> list = new ArrayList<>(count);
            Set<Object> keys = new HashSet<>();
            for (int attempt = 0; list.size() < count && attempt < 20 * count + 20; attempt++) {
                T value = element.next(this);
                if (keys.add(key.apply(value))) {
                    list.add(value);
                }
            }
            return list;
        }

        byte[] bytes(int maxLength) {
            byte[] bytes = new byte[size(0, maxLength)];
            random.nextBytes(bytes);
            return bytes;
        }

        /**
         * A string of {@code min..max} characters of any kind: mostly printable ASCII, then controls, quotes and
         * backslashes, Latin-1, the rest of the Basic Multilingual Plane and surrogate pairs (never a lone surrogate:
         * raw bytes cover invalid UTF-8).
         */
        String string(int min, int max) {
            int length = size(min, max);
            StringBuilder text = new StringBuilder(length);
            for (int i = 0; i < length; i++) {
                switch (frequency(12, 2, 2, 2, 2, 1)) {
                    case 0 -> text.append(PRINTABLE.charAt(random.nextInt(PRINTABLE.length())));
                    case 1 -> text.append((char) random.nextInt(0x20));
                    case 2 -> text.append(pick('"', '\\', '/', '\u007f', '\u2028', '\ufeff', '\ufffd', '\uffff'));
                    case 3 -> text.append((char) random.nextInt(0x80, 0x100));
                    case 4 -> text.append((char) (bool() ? random.nextInt(0x100, 0xd800) : random.nextInt(0xe000, 0x10000)));
                    default -> text.appendCodePoint(random.nextInt(0x10000, 0x110000));
                }
            }
            return text.toString();
        }

        /** A string of {@code min..max} characters from {@code alphabet}. */
        String string(int min, int max, String alphabet) {
            int length = size(min, max);
            StringBuilder text = new StringBuilder(length);
            for (int i = 0; i < length; i++) {
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            return text.toString();
        }
    }

    /** A value for a failure message: a {@code byte[]} as {@link #show(byte[])}, anything else as its text. */
    static String show(Object value) {
        return value instanceof byte[] bytes ? show(bytes) : String.valueOf(value);
    }

    /**
     * A body for a failure message: its length, then its text (the first {@link #SHOW_CHARS} characters), and when it
     * is not valid UTF-8 its bytes in hex as well (the first {@code SHOW_CHARS / 2}), so that it can be copied
     * exactly into a regression test.
     */
    static String show(byte[] body) {
        StringBuilder out = new StringBuilder().append(body.length).append(" bytes: ");
        out.append(truncate(new String(body, StandardCharsets.UTF_8), SHOW_CHARS));
        try {
            StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(body));
        } catch (CharacterCodingException notUtf8) {
            int shown = Math.min(body.length, SHOW_CHARS / 2);
            out.append("\n  (not UTF-8; in hex: ").append(HexFormat.of().formatHex(body, 0, shown))
                    .append(shown < body.length ? "..." : "").append(')');
        }
        return out.toString();
    }

    static String truncate(String text, int chars) {
        return text.length() <= chars ? text : text.substring(0, chars) + "... (" + text.length() + " characters)";
    }

    private static int tries() {
        String value = System.getProperty("serval.fuzz.tries", "").trim();
        try {
            int tries = value.isEmpty() ? 300 : Integer.parseInt(value);
            if (tries < 1) {
                throw new NumberFormatException();
            }
            return tries;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("serval.fuzz.tries must be a positive integer, not '" + value + "'");
        }
    }

    private static long seed() {
        String value = System.getProperty("serval.fuzz.seed", "").trim();
        if (value.isEmpty()) {
            return new SplittableRandom().nextLong();
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("serval.fuzz.seed must be a long, not '" + value + "'");
        }
    }

    private static double size() {
        String value = System.getProperty("serval.fuzz.size", "").trim();
        try {
            double size = value.isEmpty() ? 1 : Double.parseDouble(value);
            if (!(size >= 0 && size <= 1)) {
                throw new NumberFormatException();
            }
            return size;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("serval.fuzz.size must be a number in [0, 1], not '" + value + "'");
        }
    }
}
