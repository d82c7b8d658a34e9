package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class VariantTest {

    @Test
    void settingsAreJvmArgumentsAndAJarNamesAnotherBuild() {
        VariantBenchmark.Variant before = VariantBenchmark.Variant.parse(
                "before=jar=/tmp/before/quarkus-app/quarkus-run.jar  -Dserval.x=1");
        assertEquals("before", before.name());
        assertEquals(List.of("-Dserval.x=1"), before.arguments());
        assertEquals(Path.of("/tmp/before/quarkus-app/quarkus-run.jar"), before.jar());

        VariantBenchmark.Variant shipped = VariantBenchmark.Variant.parse("shipped=");
        assertEquals(List.of(), shipped.arguments());
        assertEquals(ServalProcess.JAR, shipped.jar());
    }

    @Test
    void aVariantWithoutANameIsRefused() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> VariantBenchmark.Variant.parse("=-Dx=1"));
        assertTrue(refused.getMessage().contains("NAME=settings"), refused.getMessage());
    }
}
