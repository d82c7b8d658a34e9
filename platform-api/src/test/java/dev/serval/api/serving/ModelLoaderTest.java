package dev.serval.api.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ConfigParser;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.NoopModel;
import dev.serval.model.ChunkReduction;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.LongInputPolicy;
import dev.serval.spec.ModelReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The loader {@link Deployments} hands the engine loads the spec it is given, whatever the config says by then. */
class ModelLoaderTest {

    /** Records what it was asked to load. */
    private static final class RecordingSource implements ModelSource {
        final List<ModelReference> references = new ArrayList<>();
        final List<DeploymentSpec> specs = new ArrayList<>();

        @Override
        public boolean accepts(String model) {
            return true;
        }

        @Override
        public ModelKind kind(DeploymentSpec spec) {
            return ModelKind.NOOP;
        }

        @Override
        public Model<?, ?> load(DeploymentSpec spec) {
            references.add(spec.model());
            specs.add(spec);
            return new NoopModel();
        }
    }

    private static DeploymentSpec config(Map<String, Object> fields) {
        return ConfigParser.deployment("d", new ObjectMapper().valueToTree(fields), "test");
    }

    @Test
    void loadsTheSpecItIsGivenEvenAfterTheConfigMovedOn() throws Exception {
        DeploymentSpec v1 = config(Map.of("model", "encoder", "version", "1", "max_length", 128,
                "long_inputs", "chunk", "chunk_overlap", 16, "intra_op_threads", 1));
        DeploymentSpec v2 = config(Map.of("model", "other-encoder", "version", "2", "max_length", 64,
                "intra_op_threads", 2, "batch_invariance", false));
        RecordingSource source = new RecordingSource();
        // The engine may start a replica of v1 after the management API has already switched the config to v2.
        Deployments.load(source, v2);
        Deployments.load(source, v1);

        assertEquals(List.of(v2.model(), v1.model()), source.references);
        assertEquals(List.of("2", "1"), source.specs.stream().map(DeploymentSpec::version).toList());
        assertEquals(List.of(2, 1), source.specs.stream().map(s -> s.predictors().intraOpThreads()).toList());
        assertEquals(List.of(false, true), source.specs.stream().map(s -> s.batching().batchInvariance()).toList());
    }

    @Test
    void theLoaderGetsTheReferenceTheSpecHoldsWhateverItsNameHolds() throws Exception {
        ModelReference reference = new ModelReference("odd?name&with=signs", 256, LongInputPolicy.CHUNK, 32,
                ChunkReduction.MAX, 8);
        RecordingSource source = new RecordingSource();

        Deployments.load(source, DeploymentSpec.defaults("d", "encoder").withModel(reference));

        assertEquals(List.of(reference), source.references);
        assertThrows(IllegalArgumentException.class, () -> ModelReference.named(" "));
        assertThrows(IllegalArgumentException.class,
                () -> new ModelReference("encoder", 1, LongInputPolicy.TRUNCATE, 32, ChunkReduction.MEAN, 8));
    }
}
