package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Globs over model names: {@code *} and {@code ?}, everything else itself, matched without backtracking. */
class MultiplexSpecTest {

    @Test
    void aGlobMatchesStarsAndQuestionMarksAndEverythingElseLiterally() {
        assertTrue(MultiplexSpec.matches("t-*", "t-acme"));
        assertTrue(MultiplexSpec.matches("t-*", "t-"));
        assertFalse(MultiplexSpec.matches("t-*", "x-acme"));
        assertTrue(MultiplexSpec.matches("t-?", "t-a"));
        assertFalse(MultiplexSpec.matches("t-?", "t-ab"));
        assertFalse(MultiplexSpec.matches("t-?", "t-"));
        assertTrue(MultiplexSpec.matches("*-v?.onnx*", "bert-v2.onnx"));
        assertTrue(MultiplexSpec.matches("a*b*c", "axxbyybzzc"));
        assertFalse(MultiplexSpec.matches("a*b*c", "axxbyybzz"));
        assertFalse(MultiplexSpec.matches("t.a*", "txa"), "'.' is itself, not any character");
        assertTrue(MultiplexSpec.matches("**", ""));
        assertFalse(MultiplexSpec.matches("?", ""));
    }

    /**
     * A glob of many stars against a name that almost matches: a backtracking regex ({@code .*a.*a...b}) tries every
     * way of splitting the name between the stars (polynomial of the stars' count in the name's length, on an event
     * loop); the matcher keeps one restart point and is done in a pass per star at most. The timeout only guards
     * against the hang.
     */
    @Test
    void aPathologicalGlobAndNameDoNotBacktrack() {
        String glob = "*a".repeat(30) + "*b";
        String name = "a".repeat(100_000);
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertFalse(MultiplexSpec.matches(glob, name)));
        assertTrue(MultiplexSpec.matches(glob, "a".repeat(40) + "b"));
    }
}
