package dev.serval.api.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.DeploymentConfig;
import dev.serval.api.config.ModelReference;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.NoopModel;
import dev.serval.spec.DeploymentSpec;
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
        public ModelKind kind(DeploymentConfig config) {
            return ModelKind.NOOP;
        }

        @Override
        public Model<?, ?> load(ModelReference reference, DeploymentSpec spec) {
            references.add(reference);
            specs.add(spec);
            return new NoopModel();
        }
    }

    private static DeploymentConfig config(Map<String, Object> fields) {
        return ConfigParser.deployment("d", new ObjectMapper().valueToTree(fields), "test");
    }

    @Test
    void loadsTheSpecItIsGivenEvenAfterTheConfigMovedOn() throws Exception {
        DeploymentConfig v1 = config(Map.of("model", "encoder", "version", "1", "max_length", 128,
                "long_inputs", "chunk", "chunk_overlap", 16, "intra_op_threads", 1));
        DeploymentConfig v2 = config(Map.of("model", "other-encoder", "version", "2", "max_length", 64,
                "intra_op_threads", 2, "batch_invariance", false));
        RecordingSource source = new RecordingSource();
        var loader = Deployments.loader(source);

        // The engine may start a replica of v1 after the management API has already switched the config to v2.
        loader.load(v2.toSpec());
        loader.load(v1.toSpec());

        assertEquals(List.of(v2.reference(), v1.reference()), source.references);
        assertEquals(List.of("2", "1"), source.specs.stream().map(DeploymentSpec::version).toList());
        assertEquals(List.of(2, 1), source.specs.stream().map(DeploymentSpec::intraOpThreads).toList());
        assertEquals(List.of(false, true), source.specs.stream().map(DeploymentSpec::batchInvariance).toList());
    }

    @Test
    void aReferenceReadsBackWhatItWrote() {
        ModelReference reference = new ModelReference("odd?name&with=signs", 256, "chunk", 32, "max", 8);

        assertEquals(reference, ModelReference.parse(reference.text()));
        assertThrows(IllegalArgumentException.class, () -> ModelReference.parse("encoder"));
        assertThrows(IllegalArgumentException.class, () -> ModelReference.parse("encoder?max_length=1"));
    }
}
