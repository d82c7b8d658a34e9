package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionsTest {

    private static final Set<String> FLAGS = Set.of("--quick");
    private static final Set<String> VALUED = Set.of("--out", "--serval-opt");

    @Test
    void acceptsKnownFlagsAndValuedOptions() {
        assertNull(Options.problem(new String[] {"--quick", "--out", "x", "--serval-opt", "-Da=b"}, FLAGS, VALUED));
        assertNull(Options.problem(new String[0], FLAGS, VALUED));
    }

    @Test
    void readsAListOfWholeNumbersOrTheDefault() {
        assertEquals(List.of(8, 64), Options.ints(List.of("--connections", "8, 64"), "--connections", List.of(1)));
        assertEquals(List.of(1), Options.ints(List.of("--rounds", "2"), "--connections", List.of(1)));
    }

    @Test
    void namesAnUnknownOptionOrAMissingValue() {
        assertEquals("unknown option '--qiuck'", Options.problem(new String[] {"--qiuck"}, FLAGS, VALUED));
        assertEquals("unknown option '--help'", Options.problem(new String[] {"--help"}, FLAGS, VALUED),
                "check() answers --help before asking");
        assertEquals("option --out needs a value", Options.problem(new String[] {"--quick", "--out"}, FLAGS, VALUED));
    }
}
