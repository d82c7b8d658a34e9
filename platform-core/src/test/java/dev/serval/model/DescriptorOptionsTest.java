package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The descriptor fields that reach ONNX Runtime: {@code engine} (session options, checked when the descriptor is read,
 * with messages naming the field, the option and what is allowed) and {@code output} (the graph output a text kind
 * reads, defaulting per kind).
 */
class DescriptorOptionsTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String WHERE = "model 'm' version '1': model.yaml";

    private static ModelDescriptor parse(String yaml) throws IOException {
        return ModelDescriptor.parse(YAML.readTree(yaml), WHERE, DeploymentSpec::isName);
    }

    private static String refused(String yaml) {
        return assertThrows(IllegalArgumentException.class, () -> parse(yaml)).getMessage();
    }

    // --- engine

    @Test
    void engineOptionsBecomeCheckedOnnxRuntimeOptionsWithYamlScalarsAsText() throws IOException {
        ModelDescriptor descriptor = parse("""
                kind: text-embedding
                engine:
                  optLevel: BASIC_OPT
                  executionMode: PARALLEL
                  interOpNumThreads: 2
                  memoryPatternOptimization: true
                """);

        assertEquals(OnnxOptions.of(Map.of("optLevel", "BASIC_OPT", "executionMode", "PARALLEL",
                "interOpNumThreads", "2", "memoryPatternOptimization", "true")), descriptor.engine());
    }

    @Test
    void noEngineFieldMeansNoOptions() throws IOException {
        assertSame(OnnxOptions.none(), parse("kind: tensor\n").engine());
        assertSame(OnnxOptions.none(), parse("kind: tensor\nengine: {}\n").engine());
    }

    @Test
    void anUnknownEngineOptionIsRefusedWithTheKnownOnes() {
        assertEquals(WHERE + ": field 'engine': unknown ONNX Runtime option 'graphOptimizationLevel'; known options:"
                + " [cpuArenaAllocator, executionMode, interOpNumThreads, memoryPatternOptimization, optLevel]",
                refused("kind: tensor\nengine:\n  graphOptimizationLevel: ALL_OPT\n"));
    }

    @Test
    void intraOpThreadsAreRefusedInFavourOfTheDeploymentSetting() {
        String message = refused("kind: text-embedding\nengine:\n  intraOpNumThreads: 4\n");
        assertTrue(message.startsWith(WHERE + ": field 'engine': ONNX Runtime option 'intraOpNumThreads' is not"
                + " supported: intra-op threads are not a model option but the deployment's intra_op_threads setting"),
                message);
    }

    @Test
    void aBadEngineValueIsRefusedWithTheAllowedOnes() {
        assertEquals(WHERE + ": field 'engine': ONNX Runtime option 'optLevel' must be one of [NO_OPT, BASIC_OPT,"
                + " EXTENDED_OPT, LAYOUT_OPT, ALL_OPT], not 'ALL'", refused("kind: tensor\nengine:\n  optLevel: ALL\n"));
        assertEquals(WHERE + ": field 'engine': ONNX Runtime option 'interOpNumThreads' must be a whole number from 1"
                + " to 1024, not '1.5'", refused("kind: tensor\nengine:\n  interOpNumThreads: 1.5\n"));
        assertEquals(WHERE + ": field 'engine': ONNX Runtime option 'memoryPatternOptimization' can only be true (ONNX"
                + " Runtime's default), not 'false': DJL applies it only when true, so it cannot be switched off",
                refused("kind: tensor\nengine:\n  memoryPatternOptimization: false\n"));
        assertEquals(WHERE + ": engine option 'optLevel' has no value", refused("kind: tensor\nengine:\n  optLevel:\n"));
    }

    @Test
    void engineOptionsThatContradictEachOtherAreRefused() {
        assertTrue(refused("kind: tensor\nengine:\n  interOpNumThreads: 4\n").endsWith("works only with"
                + " 'executionMode' PARALLEL; ONNX Runtime ignores it when sequential, the default"));
    }

    @Test
    void aNoopModelTakesNoEngineOptions() {
        assertEquals(WHERE + ": field 'engine' sets ONNX Runtime options; a noop model runs no graph",
                refused("kind: noop\nengine:\n  optLevel: NO_OPT\n"));
        assertThrows(IllegalArgumentException.class, () -> new ModelDescriptor(ModelKind.NOOP, "model.onnx",
                "tokenizer.json", 256, List.of(), Map.of("optLevel", "NO_OPT"), ""));
    }

    // --- output

    @Test
    void eachTextKindReadsItsDefaultOutputUnlessTheDescriptorNamesOne() throws IOException {
        assertEquals("last_hidden_state", parse("kind: text-embedding\n").output());
        assertEquals("logits", parse("kind: text-classification\nlabels: [neg, pos]\n").output());
        assertEquals("", parse("kind: tensor\n").output());
        assertEquals("", parse("kind: noop\n").output());
        assertEquals("token_embeddings", parse("kind: text-embedding\noutput: token_embeddings\n").output());
        assertEquals("class_logits", parse("kind: text-classification\nlabels: [neg, pos]\noutput: class_logits\n")
                .output());
    }

    @Test
    void aDescriptorWithoutOutputEqualsOneBuiltWithoutIt() throws IOException {
        assertEquals(new ModelDescriptor(ModelKind.TEXT_EMBEDDING, "model.onnx", "tokenizer.json", 256, List.of(),
                Map.of(), ""), parse("kind: text-embedding\n"));
        assertEquals(new ModelDescriptor(ModelKind.TEXT_EMBEDDING, "model.onnx", "tokenizer.json", 256, List.of(),
                "last_hidden_state", OnnxOptions.none(), ""), parse("kind: text-embedding\n"));
    }

    @Test
    void onlyTextKindsNameAnOutput() {
        assertEquals(WHERE + ": field 'output' names the graph output a text model reads; a tensor model answers with"
                + " every graph output under its own name", refused("kind: tensor\noutput: y\n"));
        assertEquals(WHERE + ": field 'output' names the graph output a text model reads; a noop model runs no graph",
                refused("kind: noop\noutput: y\n"));
        assertThrows(IllegalArgumentException.class, () -> new ModelDescriptor(ModelKind.TENSOR, "model.onnx",
                "tokenizer.json", 256, List.of(), "y", OnnxOptions.none(), ""));
    }

    @Test
    void anOutputIsANonEmptyName() {
        assertEquals(WHERE + ": field 'output' must be the name of a graph output, not \"  \"",
                refused("kind: text-embedding\noutput: '  '\n"));
        assertEquals(WHERE + ": field 'output' must be the name of a graph output, not [\"a\",\"b\"]",
                refused("kind: text-embedding\noutput: [a, b]\n"));
    }

    @Test
    void outputIsAKnownFieldNamedInTheUnknownFieldMessage() {
        assertTrue(refused("kind: text-embedding\noutputs: x\n").endsWith("unknown field 'outputs' (did you mean "
                + "'output'?); known fields: [class, config, description, engine, file, jar, kind, labels, matryoshka_dimensions,"
                + " max_documents_per_request, max_length, output, quantization_ranges, steps, tokenizer]"));
    }

    @Test
    void aMistypedFieldOrKindIsRefusedWithTheNearestKnownName() {
        assertTrue(refused("kind: text-embedding\ntokeniser: t.json\n").startsWith(WHERE
                + ": unknown field 'tokeniser' (did you mean 'tokenizer'?); known fields: [class, "));
        assertTrue(refused("kind: text-embedding\nmax_lenght: 128\n").contains("(did you mean 'max_length'?)"));
        assertTrue(refused("kind: text-embedding\nnonsense: 1\n").contains("unknown field 'nonsense'; known fields"),
                "no suggestion when nothing is near");
        assertTrue(refused("kind: pipeline\nsteps:\n  - deploymnet: echo\n")
                .contains("unknown field 'deploymnet' (did you mean 'deployment'?)"), "a step's fields too");
        assertEquals(WHERE + ": field 'kind' must be one of text-embedding, text-classification, text-rerank, tensor, "
                + "noop, pipeline, java, not \"text-embeding\" (did you mean 'text-embedding'?)",
                refused("kind: text-embeding\n"));
    }

    @Test
    void aRerankDescriptorBoundsItsDocumentsPerRequest() throws IOException {
        assertEquals(ModelDescriptor.DEFAULT_MAX_DOCUMENTS_PER_REQUEST,
                parse("kind: text-rerank\n").maxDocumentsPerRequest());
        assertEquals(50, parse("kind: text-rerank\nmax_documents_per_request: 50\n").maxDocumentsPerRequest());
        assertEquals("logits", parse("kind: text-rerank\n").output());
        assertEquals(WHERE + ": field 'max_documents_per_request' must be a whole number from 1 to 100000, not 0",
                refused("kind: text-rerank\nmax_documents_per_request: 0\n"));
        assertEquals(WHERE + ": field 'max_documents_per_request' must be a whole number from 1 to 100000, not 100001",
                refused("kind: text-rerank\nmax_documents_per_request: 100001\n"));
        assertEquals(WHERE + ": field 'max_documents_per_request' must be a whole number from 1 to 100000, not \"9\"",
                refused("kind: text-rerank\nmax_documents_per_request: '9'\n"));
        assertEquals(WHERE + ": field 'max_documents_per_request' bounds the documents of a rerank request; a "
                + "text-embedding model takes none", refused("kind: text-embedding\nmax_documents_per_request: 5\n"));
    }

    @Test
    void aTextEmbeddingDescriptorDeclaresTheWidthsItsVectorsMayBeCutTo() throws IOException {
        assertEquals(List.of(), parse("kind: text-embedding\n").matryoshkaDimensions());
        assertEquals(List.of(256, 128, 64),
                parse("kind: text-embedding\nmatryoshka_dimensions: [256, 128, 64]\n").matryoshkaDimensions());
        assertEquals(WHERE + ": field 'matryoshka_dimensions' is for text-embedding models, not text-rerank",
                refused("kind: text-rerank\nmatryoshka_dimensions: [8]\n"));
        assertEquals(WHERE + ": field 'matryoshka_dimensions' must hold distinct whole numbers from 1 to 65536, not 0",
                refused("kind: text-embedding\nmatryoshka_dimensions: [8, 0]\n"));
        assertEquals(WHERE + ": field 'matryoshka_dimensions' must hold distinct whole numbers from 1 to 65536, not 8",
                refused("kind: text-embedding\nmatryoshka_dimensions: [8, 8]\n"));
        assertEquals(WHERE + ": field 'matryoshka_dimensions' must be a list of 1 to 64 widths, not 8",
                refused("kind: text-embedding\nmatryoshka_dimensions: 8\n"));
    }
}
