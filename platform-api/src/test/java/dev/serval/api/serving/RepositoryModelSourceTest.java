package dev.serval.api.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ConfigParser;
import dev.serval.spec.DeploymentSpec;
import dev.serval.model.ChunkReduction;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a deployment's config asks of its model reaches the catalog as {@link LoadOptions}, field by field: the config
 * keys through the spec's {@code loadOptions()}, which {@link RepositoryModelSource} hands to the catalog.
 */
class RepositoryModelSourceTest {

    private static LoadOptions options(Map<String, Object> fields) {
        DeploymentSpec spec = ConfigParser.deployment("d", new ObjectMapper().valueToTree(fields), "test");
        return spec.loadOptions();
    }

    @Test
    void aDeploymentThatSetsNothingLoadsWithTheDefaultOptions() {
        assertEquals(LoadOptions.defaults().withIdleIntraOpThreads(2), options(Map.of("model", "m")),
                "2 predictor threads x 1 intra-op thread lent to a lone inference");
        assertEquals(LoadOptions.defaults(), options(Map.of("model", "m", "lend_idle_cores", false)));
        assertEquals(LoadOptions.defaults(), options(Map.of("model", "m", "predictor_threads", 1)),
                "one predictor has nothing to lend");
    }

    @Test
    void everyLoaderSettingOfTheDeploymentBecomesItsOption() {
        assertEquals(new LoadOptions(128, LongInputs.chunk(16, 8), ChunkReduction.MAX, 3, 12, false),
                options(Map.of("model", "m", "max_length", 128, "long_inputs", "chunk", "chunk_overlap", 16,
                        "max_chunks_per_input", 8, "chunk_reduction", "max", "intra_op_threads", 3,
                        "predictor_threads", 4, "batch_invariance", false)));
    }

    @Test
    void truncatingIgnoresTheChunkingSettings() {
        assertEquals(LoadOptions.defaults().withIdleIntraOpThreads(2), options(Map.of("model", "m", "long_inputs", "truncate",
                "chunk_overlap", 16, "max_chunks_per_input", 8)));
    }
}
