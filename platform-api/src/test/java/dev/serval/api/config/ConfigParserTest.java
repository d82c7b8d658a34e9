package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.model.ChunkReduction;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.LongInputPolicy;
import dev.serval.spec.ModelReference;
import dev.serval.spec.MultiplexSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ConfigParser}: what a valid config turns into, and for every kind of mistake, that the {@link InvalidConfig}
 * names the source, the deployment, the field and the problem.
 */
class ConfigParserTest {

    private static final String SOURCE = "/etc/serval/serval.yaml";

    /** Every field set, none to its default. */
    private static final String FULL = """
            # two deployments, the first with every field set
            deployments:
              - name: minilm
                model: all-minilm-l6-v2
                version: "2"
                max_length: 128
                long_inputs: chunk
                chunk_overlap: 16
                chunk_reduction: max
                num_replicas: 3
                min_ready_replicas: 2
                max_ongoing_requests: 4
                max_queued_requests: 100
                predictor_threads: 1
                intra_op_threads: 2
                max_inputs_per_request: 64
                health_check_period: 5s
                health_check_failure_threshold: 5
                graceful_shutdown_timeout: 0s
                request_timeout: 1500ms
                batch_invariance: false
                max_batch_size: 16
                batch_wait_timeout: 5ms
                rolling_update_fraction: 0.5
              - name: noop
                model: noop
            """;

    private static final DeploymentSpec MINILM = new DeploymentSpec("minilm",
            new ModelReference("all-minilm-l6-v2", 128, LongInputPolicy.CHUNK, 16, ChunkReduction.MAX, 64), "2", 3,
            new AdmissionSpec(4, 100, 64, Duration.ofMillis(1500)), new BatchingSpec(false, 16, Duration.ofMillis(5)),
            new PredictorSpec(1, 2, true), new HealthSpec(Duration.ofSeconds(5), 5, 2), new RolloutSpec(0.5, Duration.ZERO));

    /** The documented defaults. */
    private static final DeploymentSpec NOOP = new DeploymentSpec("noop",
            new ModelReference("noop", 0, LongInputPolicy.TRUNCATE, 32, ChunkReduction.MEAN, 64), "1", 1,
            new AdmissionSpec(8, 256, 256, Duration.ofSeconds(30)), new BatchingSpec(true, 32, Duration.ZERO),
            new PredictorSpec(2, 1, true), new HealthSpec(Duration.ofSeconds(10), 3, 1),
            new RolloutSpec(0.25, Duration.ofSeconds(10)));

    private static List<DeploymentSpec> parse(String yaml) {
        return ConfigParser.deployments(ConfigParser.read(yaml, SOURCE), SOURCE);
    }

    /** One deployment {@code bert} on model {@code bert-base} with {@code fields} (YAML lines) added. */
    private static String bert(String... fields) {
        StringBuilder yaml = new StringBuilder("deployments:\n  - name: bert\n    model: bert-base\n");
        for (String field : fields) {
            yaml.append("    ").append(field).append('\n');
        }
        return yaml.toString();
    }

    /**
     * Asserts that {@code yaml} is refused with a message that starts with {@code where} (source, deployment, field)
     * and then says {@code problem}, and that the exception names {@code field}.
     */
    private static InvalidConfig assertRefused(String yaml, String field, String where, String problem) {
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> parse(yaml));
        assertMessage(e, field, where, problem);
        return e;
    }

    private static void assertMessage(InvalidConfig e, String field, String where, String problem) {
        String message = e.getMessage();
        assertTrue(message.startsWith(where), () -> "expected the message to start with <" + where + ">: " + message);
        assertTrue(message.substring(where.length()).contains(problem),
                () -> "expected the message to say <" + problem + "> after <" + where + ">: " + message);
        assertEquals(field, e.field(), () -> "field() of " + message);
    }

    private static String bertField(String field) {
        return SOURCE + ": deployment 'bert': field '" + field + "': ";
    }

    // --- valid configs

    @Test
    void readsEveryFieldOfAFullConfig() {
        assertEquals(List.of(MINILM, NOOP), parse(FULL));
    }

    @Test
    void fullConfigRoundTripsThroughToYaml() {
        List<DeploymentSpec> configs = parse(FULL);

        String yaml = ConfigParser.toYaml(configs);

        assertEquals(configs, parse(yaml), yaml);
        assertEquals(yaml, ConfigParser.toYaml(parse(yaml)), "toYaml is stable");
    }

    @Test
    void aGlobModelIsAMultiplexedDeploymentWithItsOwnFieldsAndRoundTrips() {
        List<DeploymentSpec> configs = parse("""
                deployments:
                  - name: tenants
                    model: "t-*"
                    max_models_per_replica: 3
                    max_model_memory: 512Mi
                    num_replicas: 2
                  - name: languages
                    model: "lang-??"
                """);
        DeploymentSpec tenants = configs.get(0);
        assertTrue(tenants.isMultiplexed());
        assertEquals(new MultiplexSpec(3, 512L << 20), tenants.multiplex());
        assertEquals(MultiplexSpec.DEFAULTS, configs.get(1).multiplex());
        String yaml = ConfigParser.toYaml(configs);
        assertEquals(configs, parse(yaml), yaml);
        assertFalse(yaml.contains("version"), "a multiplexed deployment has no version: " + yaml);
        assertFalse(ConfigParser.toMap(NOOP).containsKey("max_models_per_replica"), "only a multiplexed one shows it");
    }

    @Test
    void sizesAreBytesOrKubernetesQuantities() {
        Map<String, Long> sizes = Map.of("1024", 1024L, "2G", 2_000_000_000L, "2Gi", 2L << 30, "3k", 3000L,
                "5MiB", 5L << 20, "0", 0L);
        sizes.forEach((text, bytes) -> assertEquals(bytes, parse("deployments:\n  - name: t\n    model: \"t-*\"\n"
                + "    max_model_memory: " + text + "\n").getFirst().multiplex().maxModelMemory(), text));
        assertRefused("deployments:\n  - name: t\n    model: \"t-*\"\n    max_model_memory: lots\n",
                "max_model_memory", SOURCE + ": deployment 't': field 'max_model_memory': ", "such as 536870912, 512Mi");
        assertRefused("deployments:\n  - name: t\n    model: \"t-*\"\n    max_model_memory: 2048Ti\n",
                "max_model_memory", SOURCE + ": deployment 't': field 'max_model_memory': ", "between 0 (no bound)");
    }

    @Test
    void multiplexingFieldsAndAVersionAreRefusedWhereTheyDoNotApply() {
        assertRefused("deployments:\n  - name: t\n    model: noop\n    max_models_per_replica: 2\n",
                "max_models_per_replica", SOURCE + ": deployment 't': field 'max_models_per_replica': ",
                "applies to a multiplexed deployment");
        assertRefused("deployments:\n  - name: t\n    model: \"t-*\"\n    version: \"2\"\n", "version",
                SOURCE + ": deployment 't': field 'version': ", "serves each model's newest version");
        assertRefused("deployments:\n  - name: t\n    model: \"t-*\"\n    max_models_per_replica: 0\n",
                "max_models_per_replica", SOURCE + ": deployment 't': field 'max_models_per_replica': ",
                "between 1 and 1024");
    }

    @Test
    void durationsInOtherUnitsRoundTrip() {
        List<DeploymentSpec> configs = parse(bert("health_check_period: 1m", "graceful_shutdown_timeout: 1.5s",
                "request_timeout: PT2M", "batch_wait_timeout: 250ms", "idle_spin: 250us"));
        DeploymentSpec bert = configs.getFirst();
        assertEquals(Duration.ofNanos(250_000), bert.predictors().idleSpin());
        assertTrue(ConfigParser.toYaml(configs).contains("250us"), "microseconds are written as such");
        assertEquals(Duration.ofMinutes(1), bert.health().healthCheckPeriod());
        assertEquals(Duration.ofMillis(1500), bert.rollout().gracefulShutdownTimeout());
        assertEquals(Duration.ofMinutes(2), bert.admission().requestTimeout());
        assertEquals(Duration.ofMillis(250), bert.batching().batchWaitTimeout());

        assertEquals(configs, parse(ConfigParser.toYaml(configs)));
    }

    @Test
    void missingFieldsTakeTheirDefaults() {
        assertEquals(List.of(NOOP), parse("deployments:\n  - name: noop\n    model: noop\n"));
    }

    @Test
    void jsonIsAcceptedToo() {
        String json = """
                {"deployments": [{"name": "noop", "model": "noop", "num_replicas": 2, "version": 7}]}""";
        DeploymentSpec noop = parse(json).getFirst();
        assertEquals(2, noop.numReplicas());
        assertEquals("7", noop.version(), "an unquoted whole-number version is read as its text");
    }

    @Test
    void aConfigWithoutDeploymentsHasNone() {
        assertEquals(List.of(), parse("deployments: []\n"));
        assertEquals(List.of(), parse("deployments:\n"));
        assertEquals(List.of(), parse("{}"));
    }

    @Test
    void anEmptyOrCommentOnlyFileHasNoDeployments() {
        assertEquals(List.of(), parse(""));
        assertEquals(List.of(), parse("# nothing deployed yet\n"));
    }

    @Test
    void boundaryValuesAreAccepted() {
        String name63 = "a".repeat(63);
        DeploymentSpec edge = parse("deployments:\n  - name: " + name63 + "\n    model: m\n"
                + "    num_replicas: 0\n    min_ready_replicas: 0\n    max_batch_size: 1024\n"
                + "    rolling_update_fraction: 1\n    max_length: 2\n    batch_wait_timeout: 1s\n").getFirst();
        assertEquals(name63, edge.name());
        assertEquals(0, edge.numReplicas());
        assertEquals(1024, edge.batching().maxBatchSize());
        assertEquals(1.0, edge.rollout().rollingUpdateFraction());
        assertEquals(2, edge.model().maxLength());
        assertEquals(Duration.ofSeconds(1), edge.batching().batchWaitTimeout());
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "0", "all-minilm-l6-v2", "e5.small_v2", "x-1"})
    void acceptsLowerCaseNames(String name) {
        assertEquals(name, parse("deployments:\n  - name: \"" + name + "\"\n    model: m\n").getFirst().name());
    }

    @Test
    void chunkOverlapOfExactlyHalfTheMaxLengthIsAccepted() {
        assertEquals(32, parse(bert("long_inputs: chunk", "max_length: 64", "chunk_overlap: 32")).getFirst()
                .model().chunkOverlap());
    }

    @Test
    void chunkOverlapIsNotLimitedWhenTruncating() {
        assertEquals(100, parse(bert("long_inputs: truncate", "max_length: 64", "chunk_overlap: 100")).getFirst()
                .model().chunkOverlap());
    }

    // --- whole-config mistakes

    @Test
    void refusesTextThatIsNotYaml() {
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> parse("deployments: [ {name: a, model: b\n"));
        assertMessage(e, null, SOURCE + ": ", "not valid YAML or JSON: ");
        assertEquals(1, e.getMessage().lines().count(), "one line: " + e.getMessage());
    }

    @Test
    void refusesJsonThatIsNotJson() {
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.read("{\"deployments\": [}", "PUT /api/config"));
        assertMessage(e, null, "PUT /api/config: ", "not valid YAML or JSON: ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"- name: a\n  model: b\n", "just some words\n", "42\n"})
    void refusesATopLevelThatIsNotAMapping(String yaml) {
        assertRefused(yaml, null, SOURCE + ": ", "a config is a mapping with a 'deployments' list");
    }

    @Test
    void refusesAnUnknownTopLevelKey() {
        assertRefused("services:\n  - name: a\n    model: b\n", "services", SOURCE + ": field 'services': ",
                "unknown field; known fields: [deployments]");
    }

    @Test
    void refusesDeploymentsThatAreNotAList() {
        assertRefused("deployments:\n  name: a\n  model: b\n", "deployments", SOURCE + ": field 'deployments': ",
                "must be a list of deployments");
    }

    @Test
    void refusesAnEntryThatIsNotAMappingNamingItsIndex() {
        assertRefused("deployments:\n  - name: a\n    model: b\n  - noop\n", "deployments[1]",
                SOURCE + ": field 'deployments[1]': ", "must be a mapping");
    }

    @Test
    void refusesAnEntryWithoutAName() {
        assertRefused("deployments:\n  - model: b\n", "deployments[0].name", SOURCE + ": field 'deployments[0].name': ",
                "is required (a string)");
    }

    @Test
    void refusesANameThatIsNotAString() {
        assertRefused("deployments:\n  - name: [a]\n    model: b\n", "deployments[0].name",
                SOURCE + ": field 'deployments[0].name': ", "is required (a string)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"MiniLM", "-bert", "bert-", "bert.", "bert base", "bert/base", "_bert", "bért"})
    void refusesAnInvalidName(String name) {
        assertRefused("deployments:\n  - name: \"" + name + "\"\n    model: b\n", "name",
                SOURCE + ": deployment '" + name + "': field 'name': ",
                "must be 1-63 lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit");
    }

    @Test
    void refusesANameLongerThan63Characters() {
        String name = "a".repeat(64);
        assertRefused("deployments:\n  - name: " + name + "\n    model: b\n", "name",
                SOURCE + ": deployment '" + name + "': field 'name': ", "must be 1-63 lower-case letters");
    }

    @Test
    void refusesTheSameNameTwice() {
        assertRefused("deployments:\n  - name: noop\n    model: noop\n  - name: bert\n    model: b\n"
                + "  - name: noop\n    model: other\n", "name", SOURCE + ": deployment 'noop': field 'name': ",
                "the name appears twice");
    }

    @Test
    void refusesADeploymentWithoutAModel() {
        assertRefused("deployments:\n  - name: bert\n    num_replicas: 2\n", "model", bertField("model"),
                "is required");
    }

    @Test
    void refusesABlankOrNonTextModel() {
        assertRefused("deployments:\n  - name: bert\n    model: \"  \"\n", "model", bertField("model"),
                "must not be blank");
        assertRefused("deployments:\n  - name: bert\n    model: 42\n", "model", bertField("model"),
                "must be a string, not 42");
    }

    // --- field mistakes

    @Test
    void refusesAnUnknownFieldListingTheKnownOnes() {
        InvalidConfig e = assertRefused(bert("replicas: 2"), "replicas", bertField("replicas"),
                "unknown field; known fields: [autoscaling, batch_invariance, batch_wait_timeout, cache, "
                        + "chunk_overlap, ");
        assertTrue(e.getMessage().contains("num_replicas"), e.getMessage());
    }

    @Test
    void suggestsTheSnakeCaseNameForAKebabCaseField() {
        assertRefused(bert("num-replicas: 2"), "num-replicas", bertField("num-replicas"),
                "unknown field (did you mean 'num_replicas'?)");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "num_replicas: two             | num_replicas           | must be a whole number, not \"two\"",
        "num_replicas: '2'             | num_replicas           | must be a whole number, not \"2\"",
        "max_batch_size: 2.5           | max_batch_size         | must be a whole number, not 2.5",
        "max_queued_requests: null     | max_queued_requests    | must be a whole number, not null",
        "predictor_threads: [1]        | predictor_threads      | must be a whole number, not [1]",
        "num_replicas: 99999999999     | num_replicas           | must be a whole number, not 99999999999",
        "batch_invariance: 1           | batch_invariance       | must be true or false, not 1",
        "batch_invariance: 'true'      | batch_invariance       | must be true or false, not \"true\"",
        "rolling_update_fraction: half | rolling_update_fraction | must be a number in (0, 1], not \"half\"",
        "long_inputs: 1                | long_inputs            | must be one of truncate, chunk, not 1",
        "request_timeout: 30           | request_timeout        | must be a duration such as 2ms, 30s or 1m, not 30",
        "version: [1]                  | version                | must be a string, not [1]",
    })
    void refusesAValueOfTheWrongType(String line, String field, String problem) {
        assertRefused(bert(line), field, bertField(field), problem);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "num_replicas: -1                | num_replicas                   | must be between 0 and 64, not -1",
        "num_replicas: 1024              | num_replicas                   | must be between 0 and 64, not 1024",
        "max_batch_size: 0               | max_batch_size                 | must be between 1 and 1024, not 0",
        "max_batch_size: 5000            | max_batch_size                 | must be between 1 and 1024, not 5000",
        "max_ongoing_requests: 0         | max_ongoing_requests           | must be between 1 and 100000, not 0",
        "max_queued_requests: -1         | max_queued_requests            | must be between 0 and 100000, not -1",
        "predictor_threads: 0            | predictor_threads              | must be between 1 and 64, not 0",
        "predictor_threads: 1024         | predictor_threads              | must be between 1 and 64, not 1024",
        "intra_op_threads: 0             | intra_op_threads               | must be between 1 and 64, not 0",
        "intra_op_threads: 1024          | intra_op_threads               | must be between 1 and 64, not 1024",
        "max_ongoing_requests: 100001    | max_ongoing_requests           | must be between 1 and 100000, not 100001",
        "max_queued_requests: 100001     | max_queued_requests            | must be between 0 and 100000, not 100001",
        "max_inputs_per_request: 0       | max_inputs_per_request         | must be between 1 and 100000, not 0",
        "health_check_failure_threshold: 0 | health_check_failure_threshold | must be between 1 and 1000, not 0",
        "max_length: -1                  | max_length                     | must be between 0 and 1000000, not -1",
        "chunk_overlap: -1               | chunk_overlap                  | must be between 0 and 1000000, not -1",
        "max_chunks_per_input: 0         | max_chunks_per_input           | must be between 1 and 4096, not 0",
        "rolling_update_fraction: 0      | rolling_update_fraction        | must be in (0, 1], not 0.0",
        "rolling_update_fraction: 1.5    | rolling_update_fraction        | must be in (0, 1], not 1.5",
        "rolling_update_fraction: -0.25  | rolling_update_fraction        | must be in (0, 1], not -0.25",
    })
    void refusesAValueOutOfRange(String line, String field, String problem) {
        assertRefused(bert(line), field, bertField(field), problem);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "request_timeout: fast         | request_timeout    | 'fast' is not a duration such as 2ms, 30s or 1m",
        "request_timeout: 10 seconds   | request_timeout    | '10 seconds' is not a duration such as 2ms, 30s or 1m",
        "request_timeout: -1s          | request_timeout    | must be between 1ms and 3600s, not -1s",
        "request_timeout: 0s           | request_timeout    | must be between 1ms and 3600s, not 0s",
        "request_timeout: 2h           | request_timeout    | must be between 1ms and 3600s, not 2h",
        "batch_wait_timeout: 5s        | batch_wait_timeout | must be between 0s and 1s, not 5s",
        "batch_wait_timeout: -1ms      | batch_wait_timeout | must be between 0s and 1s, not -1ms",
        "idle_spin: 20ms               | idle_spin          | must be between 0s and 10ms, not 20ms",
        "idle_spin: 10001us            | idle_spin          | must be between 0s and 10ms, not 10001us",
        "idle_spin: 9999999999us       | idle_spin          | '9999999999us' is not a duration such as 2ms, 30s or 1m",
        "idle_spin: -5us               | idle_spin          | '-5us' is not a duration such as 2ms, 30s or 1m",
        "health_check_period: 5ms      | health_check_period | must be between 10ms and 86400s, not 5ms",
        "graceful_shutdown_timeout: -1s | graceful_shutdown_timeout | must be between 0s and 3600s, not -1s",
        "graceful_shutdown_timeout: ''  | graceful_shutdown_timeout | must be between 0s and 3600s, not ",
    })
    void refusesABadDuration(String line, String field, String problem) {
        assertRefused(bert(line), field, bertField(field), problem);
    }

    @Test
    void refusesMoreReadyReplicasThanReplicas() {
        assertRefused(bert("num_replicas: 2", "min_ready_replicas: 3"), "min_ready_replicas",
                bertField("min_ready_replicas"), "is 3 but num_replicas is 2; the deployment could never be ready");
    }

    @Test
    void refusesALongInputsPolicyOtherThanTruncateOrChunk() {
        assertRefused(bert("long_inputs: split"), "long_inputs", bertField("long_inputs"),
                "must be one of truncate, chunk, not \"split\"");
        assertRefused(bert("long_inputs: Chunk"), "long_inputs", bertField("long_inputs"),
                "must be one of truncate, chunk, not \"Chunk\"");
    }

    @Test
    void refusesAChunkReductionOtherThanMeanOrMax() {
        assertRefused(bert("chunk_reduction: sum"), "chunk_reduction", bertField("chunk_reduction"),
                "must be one of mean, max, not \"sum\"");
    }

    @Test
    void refusesAChunkOverlapOfMoreThanHalfTheMaxLengthWhenChunking() {
        assertRefused(bert("long_inputs: chunk", "max_length: 64", "chunk_overlap: 33"), "chunk_overlap",
                bertField("chunk_overlap"), "is 33 but must be at most half of max_length (64)");
    }

    @Test
    void refusesAMaxLengthOfOne() {
        assertRefused(bert("max_length: 1"), "max_length", bertField("max_length"),
                "must be 0 (the model's own) or at least 2");
    }

    @Test
    void refusesAFractionalVersionThatYamlWouldRewrite() {
        // YAML reads 1.10 as the number 1.1: taking it would silently deploy another version than the one written
        assertRefused(bert("version: 1.10"), "version", bertField("version"),
                "must be a string, not 1.1 (write it in quotes)");
        assertEquals("1.10", parse(bert("version: '1.10'")).getFirst().version());
    }

    @Test
    void refusesABlankVersion() {
        assertRefused(bert("version: ''"), "version", bertField("version"), "must not be blank");
    }

    // --- one deployment (management API)

    @Test
    void readsOneDeploymentByName() {
        JsonNode body = ConfigParser.read("{\"model\": \"noop\"}", "PUT /api/deployments/noop");
        assertEquals(NOOP, ConfigParser.deployment("noop", body, "PUT /api/deployments/noop"));
    }

    @Test
    void refusesABodyWhoseNameDiffersFromThePath() {
        String source = "PUT /api/deployments/noop";
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.deployment("noop",
                ConfigParser.read("{\"name\": \"other\", \"model\": \"noop\"}", source), source));
        assertMessage(e, "name", source + ": deployment 'noop': field 'name': ",
                "is \"other\" but the deployment is 'noop'");
    }

    @Test
    void refusesABodyThatIsNotAMapping() {
        String source = "PUT /api/deployments/noop";
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.deployment("noop", ConfigParser.read("[1, 2]", source), source));
        assertMessage(e, null, source + ": deployment 'noop': ", "a deployment is a mapping of fields");
    }

    // --- merge (PATCH)

    @Test
    void mergeReplacesOnlyTheGivenFields() {
        String source = "PATCH /api/deployments/minilm";

        DeploymentSpec merged = ConfigParser.merge(MINILM,
                ConfigParser.read("{\"num_replicas\": 5, \"request_timeout\": \"2s\"}", source), source);

        assertEquals(new DeploymentSpec("minilm",
                new ModelReference("all-minilm-l6-v2", 128, LongInputPolicy.CHUNK, 16, ChunkReduction.MAX, 64), "2", 5,
                new AdmissionSpec(4, 100, 64, Duration.ofSeconds(2)), new BatchingSpec(false, 16, Duration.ofMillis(5)),
                new PredictorSpec(1, 2, true), new HealthSpec(Duration.ofSeconds(5), 5, 2),
                new RolloutSpec(0.5, Duration.ZERO)), merged);
    }

    // --- properties (serval.deployments.<name>.<kebab-key>)

    @Test
    void propertiesAreReadLikeTheFilesFields() {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("model", "all-minilm-l6-v2");
        properties.put("version", "2");
        properties.put("max-length", "128");
        properties.put("long-inputs", "chunk");
        properties.put("chunk-overlap", "16");
        properties.put("chunk-reduction", "max");
        properties.put("num-replicas", "3");
        properties.put("min-ready-replicas", "2");
        properties.put("max-ongoing-requests", "4");
        properties.put("max-queued-requests", "100");
        properties.put("predictor-threads", "1");
        properties.put("intra-op-threads", "2");
        properties.put("max-inputs-per-request", "64");
        properties.put("health-check-period", "5s");
        properties.put("health-check-failure-threshold", "5");
        properties.put("graceful-shutdown-timeout", "0s");
        properties.put("request-timeout", "1500ms");
        properties.put("batch-invariance", "false");
        properties.put("max-batch-size", "16");
        properties.put("batch-wait-timeout", "5ms");
        properties.put("rolling-update-fraction", "0.5");

        assertEquals(List.of(MINILM), ConfigParser.fromProperties(Map.of("minilm", properties)));
        assertEquals(List.of(NOOP), ConfigParser.fromProperties(Map.of("noop", Map.of("model", "noop"))),
                "an absent property is the spec's default");
        assertEquals("1.10", ConfigParser.fromProperties(Map.of("noop", Map.of("model", "noop", "version", "1.10")))
                .getFirst().version(), "a property's version is text");
    }

    @Test
    void anUnknownPropertyIsRefusedByName() {
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.fromProperties(Map.of("bert", Map.of("model", "bert-base", "replicas", "2"))));

        assertMessage(e, "replicas", "serval.deployments.bert.replicas=2: ",
                "unknown property; known properties: [autoscaling.*, batch-invariance, batch-wait-timeout, ");
        assertTrue(e.getMessage().contains("num-replicas"), e.getMessage());
    }

    @Test
    void propertiesReadBooleansAndChoicesInAnyCaseAsSmallRyeDid() {
        DeploymentSpec spec = ConfigParser.fromProperties(Map.of("bert", Map.of("model", "bert-base",
                "batch-invariance", "FALSE", "long-inputs", "Chunk", "max-length", "128"))).getFirst();

        assertFalse(spec.batching().batchInvariance());
        assertEquals(LongInputPolicy.CHUNK, spec.model().longInputs());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        num-replicas         | two  | num_replicas         | must be a whole number, not "two"
        num-replicas         | 65   | num_replicas         | must be between 0 and 64, not 65
        batch-invariance     | yes  | batch_invariance     | must be true or false, not "yes"
        health-check-period  | 5ms  | health_check_period  | must be between 10ms and 86400s, not 5ms
        long-inputs          | all  | long_inputs          | must be one of truncate, chunk, not "all"
        model                | ' '  | model                | must not be blank
        """)
    void aBadPropertyIsRefusedLikeTheSameFieldInAFile(String key, String value, String field, String problem) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("model", "bert-base");
        properties.put(key, value);

        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.fromProperties(Map.of("bert", properties)));

        assertMessage(e, field, "serval.deployments.bert." + key + "=" + value + ": ", problem);
    }

    @Test
    void aDeploymentOfPropertiesWithoutAModelIsRefused() {
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.fromProperties(Map.of("bert", Map.of("num-replicas", "2"))));

        assertMessage(e, "model", "serval.deployments.bert.model: ", "is required");
    }

    @Test
    void mergeOfNothingGivesAnEqualConfig() {
        assertEquals(MINILM, ConfigParser.merge(MINILM, ConfigParser.read("{}", "PATCH"), "PATCH"));
        assertEquals(NOOP, ConfigParser.merge(NOOP, ConfigParser.read("{}", "PATCH"), "PATCH"));
    }

    @Test
    void mergeValidatesTheMergedConfig() {
        String source = "PATCH /api/deployments/minilm";
        // min_ready_replicas 2 is fine with the current 3 replicas, not with 1
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"num_replicas\": 1}", source), source));
        assertMessage(e, "min_ready_replicas", source + ": deployment 'minilm': field 'min_ready_replicas': ",
                "is 2 but num_replicas is 1");

        // chunk_overlap 16 is within half of 128, not of 20
        e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"max_length\": 20}", source), source));
        assertMessage(e, "chunk_overlap", source + ": deployment 'minilm': field 'chunk_overlap': ",
                "is 16 but must be at most half of max_length (20)");
    }

    @Test
    void mergeRefusesUnknownFieldsWrongValuesAndRenames() {
        String source = "PATCH /api/deployments/minilm";
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"num-replicas\": 1}", source), source));
        assertMessage(e, "num-replicas", source + ": deployment 'minilm': field 'num-replicas': ",
                "unknown field (did you mean 'num_replicas'?)");

        e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"max_batch_size\": 0}", source), source));
        assertMessage(e, "max_batch_size", source + ": deployment 'minilm': field 'max_batch_size': ",
                "must be between 1 and 1024, not 0");

        e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"name\": \"other\"}", source), source));
        assertMessage(e, "name", source + ": deployment 'minilm': field 'name': ",
                "is \"other\" but the deployment is 'minilm'");

        e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("\"num_replicas\"", source), source));
        assertMessage(e, null, source + ": deployment 'minilm': ", "a deployment is a mapping of fields");
    }

    @Test
    void mergeWithNullRefusesARequiredField() {
        String source = "PATCH /api/deployments/minilm";
        InvalidConfig e = assertThrows(InvalidConfig.class,
                () -> ConfigParser.merge(MINILM, ConfigParser.read("{\"model\": null}", source), source));
        assertMessage(e, "model", source + ": deployment 'minilm': field 'model': ", "is required");
    }

    // --- files

    @Test
    void readFileNamesAMissingFile(@TempDir Path dir) {
        Path missing = dir.resolve("serval.yaml");
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.readFile(missing));
        assertEquals(missing + ": the file does not exist", e.getMessage());
        assertNull(e.field());
    }

    @Test
    void readFileReadsAFileAndNamesItInErrors(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("serval.yaml"), FULL);
        assertEquals(List.of(MINILM, NOOP), ConfigParser.readFile(file));

        Files.writeString(file, bert("max_batch_size: 0"));
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.readFile(file));
        assertMessage(e, "max_batch_size", file + ":4: deployment 'bert': field 'max_batch_size': ",
                "must be between 1 and 1024, not 0");
    }

    @Test
    void readFileRefusesAFileThatIsNotYaml(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("serval.yaml"), "deployments: [\n");
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.readFile(file));
        assertMessage(e, null, file + ":1: ", "not valid YAML or JSON");
    }

    @Test
    void toYamlOfNothingReadsBackAsNothing() {
        assertEquals(List.of(), parse(ConfigParser.toYaml(List.of())));
    }

    // --- where a mistake is: the nearest known name, the file's line, the property

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        num_replica: 2                   | num_replica              | num_replicas
        predictor_thread: 4              | predictor_thread         | predictor_threads
        modle: bert-base                 | modle                    | model
        'autoscaling: {min_replica: 0}'  | autoscaling.min_replica  | min_replicas
        """)
    void aMisspeltFieldIsAnsweredWithTheNearestKnownName(String line, String field, String nearest) {
        InvalidConfig e = assertRefused(bert(line), field, bertField(field),
                "unknown field (did you mean '" + nearest + "'?); known fields: [");
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    }

    @Test
    void aMisspeltTopLevelKeyIsAnsweredWithDeployments() {
        assertRefused("deployment:\n  - name: a\n    model: b\n", "deployment", SOURCE + ": field 'deployment': ",
                "unknown field (did you mean 'deployments'?)");
    }

    @Test
    void aMisspeltPropertyIsNamedInFullWithItsValueAndTheNearestKnownProperty() {
        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.fromProperties(
                Map.of("all-minilm-l6-v2", Map.of("model", "all-minilm-l6-v2", "predictor-thread", "4"))));

        assertMessage(e, "predictor-thread", "serval.deployments.all-minilm-l6-v2.predictor-thread=4: ",
                "unknown property (did you mean 'predictor-threads'?); known properties: [");
        InvalidConfig autoscaling = assertThrows(InvalidConfig.class, () -> ConfigParser.fromProperties(
                Map.of("bert", Map.of("model", "bert-base", "autoscaling.max-replica", "4"))));
        assertMessage(autoscaling, "autoscaling.max-replica", "serval.deployments.bert.autoscaling.max-replica=4: ",
                "unknown property (did you mean 'autoscaling.max-replicas'?)");
    }

    @Test
    void aMistakeInAFileNamesItsAbsolutePathAndLine(@TempDir Path dir) throws IOException {
        String head = "# a comment, then the deployments\ndeployments:\n  - name: bert\n    model: bert-base\n";
        assertFileRefused(dir, head + "    num_replica: 2\n", 5, "deployment 'bert': field 'num_replica': unknown "
                + "field (did you mean 'num_replicas'?)");
        assertFileRefused(dir, head + "    max_batch_size: 32\n    num_replicas: 100\n", 6,
                "deployment 'bert': field 'num_replicas': must be between 0 and 64, not 100");
        assertFileRefused(dir, head + "    autoscaling:\n      min_replicas: 0\n      max_replicas: 100\n", 7,
                "deployment 'bert': field 'autoscaling.max_replicas': must be between");
        assertFileRefused(dir, head + "  - name: noop\n    num_replicas: 2\n", 5,
                "deployment 'noop': field 'model': is required");
        assertFileRefused(dir, head + "  - noop\n", 5, "field 'deployments[1]': must be a mapping");
        assertFileRefused(dir, head + "    version: [1\n", 5, "not valid YAML or JSON: ");
    }

    @Test
    void aRelativeFileIsReadFromTheWorkingDirectoryAndNamedByItsAbsolutePath() {
        Path relative = Path.of("target", "no-such-directory", "serval.yaml");

        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.readFile(relative));

        assertEquals(Path.of("").toAbsolutePath().resolve(relative) + ": the file does not exist", e.getMessage());
    }

    /** Asserts that a file of {@code yaml} is refused naming its absolute path and {@code line}, then {@code problem}. */
    private static void assertFileRefused(Path dir, String yaml, int line, String problem) throws IOException {
        Path file = Files.writeString(dir.resolve("serval.yaml"), yaml);

        InvalidConfig e = assertThrows(InvalidConfig.class, () -> ConfigParser.readFile(file));

        String where = file.toAbsolutePath() + ":" + line + ": ";
        assertTrue(e.getMessage().startsWith(where + problem),
                () -> "expected <" + where + problem + "...>: " + e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    }
}
