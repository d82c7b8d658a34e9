package dev.serval.repository;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.ModelKind;
import dev.serval.multiplex.Multiplexer.Candidate;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link GlobCatalog}: which of the repository's models a multiplexed deployment serves, at which version, and which
 * versions it skips and why.
 */
class GlobCatalogTest extends RepositoryCase {

    private final Map<String, ModelKind> served = new HashMap<>();

    /** The catalog of deployment {@code tenants}, model {@code t-*}, over the test's repository. */
    private GlobCatalog catalog() {
        return new GlobCatalog(repository, "tenants", "t-*", served::get);
    }

    @Test
    void servesTheNewestVersionThatResolvesOfEachMatchingModel() throws IOException {
        version("t-a", "1", "kind: noop\n");
        version("t-a", "2", "kind: no-such-kind\n");
        version("t-b", "3", "kind: noop\n");
        version("other", "1", "kind: noop\n");

        GlobCatalog catalog = catalog();
        Map<String, Candidate> found = catalog.scan();

        assertEquals(Map.of("t-a", "1", "t-b", "3"), Map.of("t-a", found.get("t-a").version(), "t-b",
                found.get("t-b").version()));
        assertEquals(2, found.size(), "only the glob's matches");
        assertEquals(ModelKind.NOOP, catalog.kind("t-a"));
        assertNull(catalog.kind("other"));
        List<GlobCatalog.NotServed> skipped = catalog.notServed();
        assertEquals(1, skipped.size());
        assertEquals("t-a", skipped.getFirst().model());
        assertEquals("2", skipped.getFirst().version());
    }

    @Test
    void skipsAVersionOfAnotherKindThanTheModelIsServedAs() throws IOException {
        version("t-a", "1", "kind: noop\n");
        version("t-a", "2", EMBEDDING, "model.onnx", "tokenizer.json");
        served.put("t-a", ModelKind.NOOP);

        GlobCatalog catalog = catalog();
        Map<String, Candidate> found = catalog.scan();

        assertEquals("1", found.get("t-a").version());
        assertTrue(catalog.notServed().getFirst().problem().contains("a model keeps its kind"),
                catalog.notServed().toString());
    }
}
