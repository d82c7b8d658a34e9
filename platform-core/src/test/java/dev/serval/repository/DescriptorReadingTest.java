package dev.serval.repository;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.Composite;
import dev.serval.model.ModelDescriptor;
import dev.serval.model.PipelineStep;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ModelRepository#resolve} reads a version's {@code model.yaml} into a checked descriptor
 * ({@link ModelDescriptor#parse}): every field, the composite kinds' steps, jar and class, and a
 * refusal naming the model, the version, the field and the problem.
 */
class DescriptorReadingTest extends RepositoryCase {

    // --- descriptors

    @ParameterizedTest
    @ValueSource(strings = {"- kind: noop\n", "noop\n", "", "# nothing\n"})
    void refusesADescriptorThatIsNotAMapping(String descriptor) throws IOException {
        version("m", "1", descriptor);
        assertEquals("model 'm' version '1': model.yaml must be a mapping with at least 'kind'",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesADescriptorThatIsNotYaml() throws IOException {
        version("m", "1", "kind: [noop\n");
        assertMessage(refused("m", "1"), "model 'm' version '1': model.yaml cannot be read: ");
    }

    @Test
    void refusesAnUnknownDescriptorField() throws IOException {
        version("m", "1", "kind: noop\nmax-length: 12\n");
        assertEquals(WHERE + "unknown field 'max-length' (did you mean 'max_length'?); known fields: "
                + "[class, config, description, engine, file, jar, kind, labels, matryoshka_dimensions, "
                + "max_documents_per_request, max_length,"
                + " output, quantization_ranges, steps, tokenizer]",
                refused("m", "1").getMessage());
    }

    @Test
    void quantizationRangesAreATextEmbeddingModelsFileInItsFolderAndATypoIsCorrected() throws IOException {
        version("m", "1", "kind: text-embedding\nquantisation_ranges: ranges.json\n", "model.onnx", "tokenizer.json");
        assertMessage(refused("m", "1"), WHERE + "unknown field 'quantisation_ranges' (did you mean "
                + "'quantization_ranges'?)");
        version("m", "1", "kind: text-classification\nlabels: [a]\nquantization_ranges: ranges.json\n", "model.onnx",
                "tokenizer.json");
        assertEquals(WHERE + "field 'quantization_ranges' is for text-embedding models, not text-classification",
                refused("m", "1").getMessage());
        version("m", "1", "kind: text-embedding\nquantization_ranges: ../ranges.json\n", "model.onnx", "tokenizer.json");
        assertMessage(refused("m", "1"), WHERE + "field 'quantization_ranges' (../ranges.json) must not contain '..'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"kind: embedding\n", "kind: Text-Embedding\n", "kind: [noop]\n", "kind:\n",
        "description: no kind\n"})
    void refusesABadKind(String descriptor) throws IOException {
        version("m", "1", descriptor);
        assertMessage(refused("m", "1"),
                WHERE + "field 'kind' must be one of text-embedding, text-classification, text-rerank, tensor, noop, "
                        + "pipeline, java, not ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "config: hf/config.json\n"})
    void refusesATextClassifierWithoutLabelsOrAConfigNamingThem(String config) throws IOException {
        version("m", "1", "kind: text-classification\n" + config, "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "a text-classification model needs 'labels', the names of its logits in order, or a "
                + (config.isEmpty() ? "config.json" : "hf/config.json") + " whose id2label names them",
                refused("m", "1").getMessage());
    }

    @Test
    void refusesEmptyLabels() throws IOException {
        version("m", "1", "kind: text-classification\nlabels: []\n", "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "field 'labels' must name the logits in order; leave it out to take the names of the "
                + "model's config.json (id2label)", refused("m", "1").getMessage());
    }

    @Test
    void refusesLabelsThatAreNotAListOfNames() throws IOException {
        version("m", "1", "kind: text-classification\nlabels: positive\n", "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "field 'labels' must be a list of names", refused("m", "1").getMessage());
        version("m", "1", "kind: text-classification\nlabels: [a, '']\n", "model.onnx", "tokenizer.json");
        assertEquals(WHERE + "field 'labels' must hold non-empty strings, not \"\"", refused("m", "1").getMessage());
    }

    @Test
    void refusesEngineOptionsThatAreNotSingleValues() throws IOException {
        version("m", "1", "kind: tensor\nengine: [a]\n", "model.onnx");
        assertEquals(WHERE + "field 'engine' must be a mapping of ONNX Runtime options",
                refused("m", "1").getMessage());
        version("m", "1", "kind: tensor\nengine:\n  optLevel: [a]\n", "model.onnx");
        assertEquals(WHERE + "engine option 'optLevel' must be a single value", refused("m", "1").getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "0", "-5", "long", "2.5", "'512'", "99999999999", "[256]"})
    void refusesABadMaxLength(String maxLength) throws IOException {
        version("m", "1", "kind: text-embedding\nmax_length: " + maxLength + "\n", "model.onnx", "tokenizer.json");
        assertMessage(refused("m", "1"), WHERE + "field 'max_length' must be a whole number >= 2, not ");
    }

    @Test
    void readsAPipelineAndAJavaModel() throws IOException {
        version("chain", "1", "kind: pipeline\nsteps:\n  - deployment: echo\n  - deployment: mlp\n"
                + "    inputs: {x: input}\n");
        version("custom", "1", "kind: java\njar: lib/handler.jar\nclass: com.example.My$Handler\n", "lib/handler.jar");

        ModelDescriptor chain = repository.resolve("chain", "1").descriptor();
        ModelDescriptor custom = repository.resolve("custom", "1").descriptor();

        assertEquals(new Composite.Pipeline(List.of(
                new PipelineStep("echo", Map.of()),
                new PipelineStep("mlp", Map.of("x", "input")))), chain.composite());
        assertEquals(new Composite.JavaHandler("lib/handler.jar", "com.example.My$Handler"),
                custom.composite());
        assertEquals(root.resolve("custom").resolve("1").resolve("lib/handler.jar"),
                repository.resolve("custom", "1").file());
    }

    @Test
    void readsARoutedStep() throws IOException {
        version("routed", "1", "kind: pipeline\nsteps:\n  - deployment: lang\n"
                + "  - route: {on: label, cases: {en: clf-en, de: clf-de}, default: clf-any}\n    from: request\n");

        PipelineStep step = ((Composite.Pipeline) repository
                .resolve("routed", "1").descriptor().composite()).steps().get(1);

        assertEquals(new PipelineStep(null, new PipelineStep.Route("label",
                Map.of("en", "clf-en", "de", "clf-de"), "clf-any"), true, Map.of()), step);
        assertEquals(List.of("clf-de", "clf-en", "clf-any"), step.targets());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "kind: pipeline\nsteps:\n  - route: {on: l, cases: {a: b}}\n|the first step cannot route",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {}}\n|'cases' must map 1 to 64",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {x: ../b}}\n|case 'x' must name",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {cases: {x: b}}\n|'on' must name",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - route: {on: l, cases: {x: b}, else: c}\n|unknown field 'else'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    route: {on: l, cases: {x: b}}\n|needs either",
        "kind: pipeline\nsteps:\n  - deployment: a\n    from: request\n|'from' is 'request'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    from: elsewhere\n|'from' is 'request'",
        "kind: pipeline\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: []\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: echo\n|a pipeline needs 'steps'",
        "kind: pipeline\nsteps: [echo]\n|steps[0] must be a mapping",
        "kind: pipeline\nsteps:\n  - deployment: ../etc\n|'deployment' must name a deployment",
        "kind: pipeline\nsteps:\n  - deployment: a\n    inputs: {x: y}\n|the first step takes the request's tensors",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    inputs: {x: z, y: z}\n|maps two outputs to 'z'",
        "kind: pipeline\nsteps:\n  - deployment: a\n  - deployment: b\n    inputs: [x]\n|'inputs' must be a mapping",
        "kind: pipeline\nsteps:\n  - deployment: a\n    when: x\n|unknown field 'when'",
        "kind: noop\nsteps:\n  - deployment: a\n|field 'steps' is for a pipeline, not a noop model",
        "kind: tensor\njar: x.jar\n|field 'jar' is for a java model",
        "kind: java\nclass: a.B\n|a java model needs 'jar'",
        "kind: java\njar: handler.zip\nclass: a.B\n|a java model needs 'jar'",
        "kind: java\njar: ../handler.jar\nclass: a.B\n|must not contain '..'",
        "kind: java\njar: /tmp/handler.jar\nclass: a.B\n|must be relative",
        "kind: java\njar: handler.jar\n|a java model needs 'class'",
        "kind: java\njar: handler.jar\nclass: 'a.B; rm -rf'\n|a java model needs 'class'",
        "kind: java\njar: handler.jar\nclass: a.B\nfile: x.onnx\n|names its jar with 'jar', not 'file'",
        "kind: java\njar: handler.jar\nclass: a.B\nengine: {optLevel: NO_OPT}\n|runs no ONNX graph",
        "kind: java\njar: missing.jar\nclass: a.B\n|missing.jar does not exist"})
    void refusesPipelinesAndJavaModelsThatCannotWork(String descriptorAndMessage) throws IOException {
        String[] parts = descriptorAndMessage.split("\\|");
        version("m", "1", parts[0], "handler.jar");
        String message = refused("m", "1").getMessage();
        assertTrue(message.contains(parts[1]), message);
    }

    @Test
    void refusesAPipelineOfMoreThanSixteenSteps() throws IOException {
        version("m", "1", "kind: pipeline\nsteps:\n" + "  - deployment: a\n".repeat(17));
        assertTrue(refused("m", "1").getMessage().contains("a list of 1 to 16 steps"));
    }
}
