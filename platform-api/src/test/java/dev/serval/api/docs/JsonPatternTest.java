package dev.serval.api.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class JsonPatternTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static Optional<String> mismatch(String pattern, String actual) throws Exception {
        JsonNode answer = JSON.readTree(actual);
        return JsonPattern.parse(pattern).mismatch(answer, "$");
    }

    @Test
    void anObjectWithoutAnElisionMatchesExactlyItsMembers() throws Exception {
        assertEquals(Optional.empty(), mismatch("{\"a\":1,\"b\":\"x\"}", "{\"b\":\"x\",\"a\":1.0}"));
        assertEquals(Optional.of("$: member 'c' is not documented (end the object with ... if the example shows only "
                + "some members)"), mismatch("{\"a\":1}", "{\"a\":1,\"c\":2}"));
        assertEquals(Optional.of("$: no member 'b' in {\"a\":1}"), mismatch("{\"a\":1,\"b\":2}", "{\"a\":1}"));
    }

    @Test
    void anObjectWithAnElisionAllowsOtherMembers() throws Exception {
        assertEquals(Optional.empty(), mismatch("{\"a\":1,...}", "{\"a\":1,\"c\":2}"));
        assertEquals(Optional.empty(), mismatch("{...}", "{\"c\":2}"));
        assertEquals(Optional.empty(), mismatch("{\"a\":1,...,\"b\":{\"c\":2,...},...}", "{\"b\":{\"d\":3,\"c\":2},\"a\":1,\"e\":4}"));
        assertEquals(Optional.of("$.a: expected 1, got 2"), mismatch("{\"a\":1,...}", "{\"a\":2}"));
    }

    @Test
    void anArrayMatchesItsElementsThenWhatItsElisionAllows() throws Exception {
        assertEquals(Optional.empty(), mismatch("[1,2]", "[1,2]"));
        assertEquals(Optional.of("$: expected 2 elements, got 3"), mismatch("[1,2]", "[1,2,3]"));
        assertEquals(Optional.empty(), mismatch("[1,...]", "[1,2,3]"));
        assertEquals(Optional.empty(), mismatch("[...]", "[]"));
        assertEquals(Optional.empty(), mismatch("[1,2,...3 floats...]", "[1,2,3]"));
        assertEquals(Optional.of("$: expected 4 elements in all, got 3"), mismatch("[1,...4 floats...]", "[1,2,3]"));
        assertEquals(Optional.empty(), mismatch("[[-0.5,...2 floats...],[...]]", "[[-0.5,1],[2]]"));
        assertEquals(Optional.of("$[1]: expected an array, got 2"), mismatch("[[-0.5,...],[...]]", "[[-0.5],2]"));
    }

    @Test
    void stringsMatchExactlyOrByTheirBeginning() throws Exception {
        assertEquals(Optional.empty(), mismatch("{\"id\":\"...\"}", "{\"id\":\"abc\"}"));
        assertEquals(Optional.empty(), mismatch("\"model 'x' is...\"", "\"model 'x' is still loading\""));
        assertEquals(Optional.of("$: expected \"a\", got \"b\""), mismatch("\"a\"", "\"b\""));
        assertEquals(Optional.of("$: expected a string, got 1"), mismatch("\"...\"", "1"));
    }

    @Test
    void numbersMatchWithinTheTolerance() throws Exception {
        assertEquals(Optional.empty(), mismatch("0.49284178", "0.492843"));
        assertEquals(Optional.empty(), mismatch("384", "384.0"));
        assertTrue(mismatch("0.4928", "0.4929").isPresent());
        assertEquals(Optional.empty(), mismatch("[true,false,null]", "[true,false,null]"));
    }

    @Test
    void aPatternThatIsNotOneIsRefusedSayingWhere() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JsonPattern.parse("{\"a\":...,\"b\":1}"));
        assertEquals("not a JSON value at column 6 of {\"a\":...,\"b\":1}", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JsonPattern.parse("[...,1]"));
        assertThrows(IllegalArgumentException.class, () -> JsonPattern.parse("{\"a\":1} b"));
    }

    @Test
    void theExtentIsWhereTheBracketsClose() {
        assertEquals(9, JsonPattern.extent("{\"a\":\"}\"} and prose"));
        assertEquals(-1, JsonPattern.extent("{\"a\":[1,"));
    }
}
