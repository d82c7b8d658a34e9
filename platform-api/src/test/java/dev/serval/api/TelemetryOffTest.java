package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Serval never phones home, and neither do its libraries: wherever Serval or a tool of this repository is launched with
 * DJL's usage tracking turned off ({@code OPT_OUT_TRACKING} in the environment: the image, the Helm chart, bin/serval,
 * the tests' and benchmarks' child processes), ONNX Runtime's telemetry is turned off too. The official runtime
 * (1.29 and later) uploads events to Microsoft from Linux unless {@code ORT_DISABLE_TELEMETRY=1} is in the environment
 * before it initialises (a Java call cannot do it in time), and in an image without a CA bundle it logs that it cannot.
 */
class TelemetryOffTest {

    private static final Path ROOT = Path.of("..");
    /** Where a launcher puts OPT_OUT_TRACKING into an environment (not a -D system property, not prose). */
    private static final Pattern TRACKING_OFF = Pattern.compile("put\\(\"OPT_OUT_TRACKING\""
            + "|export [^\\n]*OPT_OUT_TRACKING="
            + "|^\\s*OPT_OUT_TRACKING=true|name: OPT_OUT_TRACKING|<environmentVariables>\\s*(<!--[^>]*-->\\s*)?"
            + "(<[A-Z_]+>[^<]*</[A-Z_]+>\\s*)*<OPT_OUT_TRACKING>", Pattern.MULTILINE);
    private static final Pattern TELEMETRY_OFF = Pattern.compile("ORT_DISABLE_TELEMETRY(=|>|\", \"|\\s+value: \")1");

    @Test
    void everyLauncherThatTurnsDjlTrackingOffTurnsOnnxRuntimesTelemetryOff() throws IOException {
        List<String> launchers = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path file : files.filter(TelemetryOffTest::source).toList()) {
                String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
                if (TRACKING_OFF.matcher(text).find()) {
                    String name = ROOT.relativize(file).toString();
                    launchers.add(name);
                    if (!TELEMETRY_OFF.matcher(text).find()) {
                        missing.add(name);
                    }
                }
            }
        }
        for (String known : List.of("docker/Dockerfile", "helm/serval/templates/deployment.yaml", "bin/serval",
                "bin/test", "pom.xml")) {
            assertTrue(launchers.contains(known), known + " found among the launchers " + launchers);
        }
        assertEquals(List.of(), missing, "launchers that leave ONNX Runtime's telemetry on");
    }

    /** A file of the checkout that could launch something: not prose, not a build output, not a model. */
    private static boolean source(Path file) {
        String path = file.toString();
        try {
            return Files.isRegularFile(file) && Files.size(file) < 1_000_000 && !path.contains("/target/")
                    && !path.contains("/.git/") && !path.endsWith(".md");
        } catch (IOException e) {
            return false;
        }
    }
}
