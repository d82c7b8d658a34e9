package dev.serval.model.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.TinyModels;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link OnnxOptions}: which ONNX Runtime session options a model may set, the messages for the ones it may not, and
 * what reaches DJL ({@link OnnxSessions#criteria}).
 */
class OnnxOptionsTest {

    private static String refused(Map<String, String> options) {
        return assertThrows(IllegalArgumentException.class, () -> OnnxOptions.of(options)).getMessage();
    }

    @Test
    void acceptsEveryOptionThatTakesEffectAndSortsThem() {
        Map<String, String> given = new LinkedHashMap<>();
        given.put("optLevel", "EXTENDED_OPT");
        given.put("interOpNumThreads", "2");
        given.put("executionMode", "PARALLEL");
        given.put("memoryPatternOptimization", "true");
        given.put("cpuArenaAllocator", "true");

        OnnxOptions options = OnnxOptions.of(given);

        assertEquals(given, options.values());
        assertEquals(OnnxOptions.KEYS, List.copyOf(options.values().keySet()));
        assertEquals(options, OnnxOptions.of(Map.copyOf(given)), "a value: equal for equal options");
    }

    @Test
    void noOptionsIsOneSharedValue() {
        assertSame(OnnxOptions.none(), OnnxOptions.of(Map.of()));
        assertEquals(Map.of(), OnnxOptions.none().values());
    }

    @Test
    void anUnknownOptionIsRefusedWithTheKnownOnes() {
        assertEquals("unknown ONNX Runtime option 'graphOptimizationLevel'; known options: [cpuArenaAllocator,"
                + " executionMode, interOpNumThreads, memoryPatternOptimization, optLevel]",
                refused(Map.of("graphOptimizationLevel", "ALL_OPT")));
    }

    @Test
    void intraOpThreadsAreRefusedAndLeftToTheDeployment() {
        assertEquals("ONNX Runtime option 'intraOpNumThreads' is not supported: intra-op threads are not a model option"
                + " but the deployment's intra_op_threads setting (the same model may run with different thread counts"
                + " in different deployments)", refused(Map.of("intraOpNumThreads", "4")));
    }

    @Test
    void optionsDjlReadsButServalDoesNotSupportAreRefusedWithTheReason() {
        assertTrue(refused(Map.of("disablePerSessionThreads", "true")).endsWith("it moves the model onto ONNX Runtime's"
                + " process-wide thread pools, which ignore the deployment's intra_op_threads"));
        assertTrue(refused(Map.of("customOpLibrary", "/tmp/x.so")).contains("native code from an arbitrary path"));
        assertTrue(refused(Map.of("profilerOutput", "/tmp/p")).contains("outside the model repository"));
        assertEquals("ONNX Runtime option 'ortDevice' is not supported: Serval runs ONNX Runtime on the CPU",
                refused(Map.of("ortDevice", "TensorRT")));
    }

    @Test
    void aBadValueIsRefusedWithTheAllowedOnes() {
        assertEquals("ONNX Runtime option 'optLevel' must be one of [NO_OPT, BASIC_OPT, EXTENDED_OPT, LAYOUT_OPT,"
                + " ALL_OPT], not 'ALL'", refused(Map.of("optLevel", "ALL")));
        assertEquals("ONNX Runtime option 'executionMode' must be one of [SEQUENTIAL, PARALLEL], not 'parallel'",
                refused(Map.of("executionMode", "parallel")));
        assertEquals("ONNX Runtime option 'interOpNumThreads' must be a whole number from 1 to 1024, not 'two'",
                refused(Map.of("interOpNumThreads", "two")));
        assertEquals("ONNX Runtime option 'interOpNumThreads' must be a whole number from 1 to 1024, not '0'",
                refused(Map.of("interOpNumThreads", "0")));
    }

    @Test
    void aSwitchDjlCanOnlyTurnOnIsRefusedWhenTurnedOff() {
        assertEquals("ONNX Runtime option 'memoryPatternOptimization' can only be true (ONNX Runtime's default), not"
                + " 'false': DJL applies it only when true, so it cannot be switched off",
                refused(Map.of("memoryPatternOptimization", "false")));
        assertTrue(refused(Map.of("cpuArenaAllocator", "no")).startsWith("ONNX Runtime option 'cpuArenaAllocator' can"
                + " only be true"));
    }

    @Test
    void interOpThreadsGoWithParallelExecutionOnly() {
        assertEquals("ONNX Runtime option 'interOpNumThreads' (4) works only with 'executionMode' PARALLEL; ONNX"
                + " Runtime ignores it when sequential, the default", refused(Map.of("interOpNumThreads", "4")));
        assertEquals("ONNX Runtime option 'executionMode' PARALLEL needs 'interOpNumThreads' too: the threads that run"
                + " independent nodes at once (they come on top of the deployment's intra_op_threads)",
                refused(Map.of("executionMode", "PARALLEL")));
        assertEquals(Map.of("interOpNumThreads", "1"), OnnxOptions.of(Map.of("interOpNumThreads", "1")).values(),
                "one inter-op thread is what sequential execution means anyway");
    }

    @Test
    void djlGetsServalsDefaultsOverriddenByTheOptionsAndTheCallersIntraOpThreads() {
        assertEquals(Map.of("intraOpNumThreads", "3", "interOpNumThreads", "1", "executionMode", "SEQUENTIAL"),
                OnnxSessions.options(3, OnnxOptions.none()));
        assertEquals(Map.of("intraOpNumThreads", "2", "interOpNumThreads", "2", "executionMode", "PARALLEL",
                        "optLevel", "BASIC_OPT"),
                OnnxSessions.options(2, OnnxOptions.of(Map.of("executionMode", "PARALLEL",
                        "interOpNumThreads", "2", "optLevel", "BASIC_OPT"))));
    }
}
