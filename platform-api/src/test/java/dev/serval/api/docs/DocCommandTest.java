package dev.serval.api.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class DocCommandTest {

    @Test
    void commandsTakeTheirContinuationLinesAndTheExpectationsAfterThem() {
        List<DocCommand> commands = DocCommand.split(List.of(
                "AUTH=\"x\"",
                "# a comment that says nothing checkable",
                "curl -s localhost:8080/v2/models/m/infer \\",
                "  -d '{\"inputs\":[]}'",
                "# -> 400 {\"error\":\"...\",",
                "#     ...}",
                "curl -s -o /dev/null -w '%{http_code}\\n' localhost:8080/api   # -> 401 without the token"), 10);

        assertEquals(3, commands.size());
        assertEquals(DocCommand.Expectation.SUCCESS, commands.get(0).expected());
        assertEquals(12, commands.get(1).line());
        assertEquals("curl -s localhost:8080/v2/models/m/infer \\\n  -d '{\"inputs\":[]}'", commands.get(1).text());
        assertEquals(OptionalInt.of(400), commands.get(1).expected().status());
        assertTrue(commands.get(1).expected().body().isPresent());
        assertEquals(OptionalInt.of(401), commands.get(2).expected().status());
        assertTrue(commands.get(2).expected().body().isEmpty());
    }

    @Test
    void aHereDocumentBelongsToItsCommand() {
        List<DocCommand> commands = DocCommand.split(List.of("python3 - <<'PY'", "print(1)", "# not a comment", "PY",
                "echo done"), 1);

        assertEquals(List.of("python3 - <<'PY'\nprint(1)\n# not a comment\nPY", "echo done"),
                commands.stream().map(DocCommand::text).toList());
    }

    @Test
    void anExpectationMustGiveAStatusOrJson() {
        assertThrows(IllegalArgumentException.class, () -> DocCommand.split(List.of("echo", "# -> (2, 384)"), 1));
        assertThrows(IllegalArgumentException.class, () -> DocCommand.split(List.of("# -> 200"), 1));
        assertThrows(IllegalArgumentException.class, () -> DocCommand.split(List.of("echo", "# -> 200", "# -> 200"), 1));
    }

    @Test
    void blocksAreMarkedOnTheLineBeforeTheirFence() {
        List<DocBlock> blocks = DocBlock.parse(Path.of("page.md"), List.of(
                "<!-- runnable -->", "```bash", "curl -s localhost:8080/v2", "```",
                "<!-- not-runnable: needs Docker -->", "```bash", "docker ps", "```",
                "```yaml", "a: 1", "```",
                "```sh", "ls", "```",
                "- a list item:", "  <!-- runnable -->", "  ```bash", "  echo indented", "  ```"));

        assertEquals(List.of(DocBlock.Marker.RUNNABLE, DocBlock.Marker.NOT_RUNNABLE, DocBlock.Marker.NONE,
                DocBlock.Marker.RUNNABLE), blocks.stream().map(DocBlock::marker).toList());
        assertEquals("needs Docker", blocks.get(1).reason());
        assertEquals("page.md:12", blocks.get(2).where());
        assertEquals(List.of("echo indented"), blocks.get(3).lines());
    }
}
