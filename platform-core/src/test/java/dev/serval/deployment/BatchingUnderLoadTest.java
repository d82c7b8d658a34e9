package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.Overloaded;
import dev.serval.model.Embedding;
import dev.serval.model.Predictor;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Real threads against a real engine serving the tiny FP32 encoder, which batches: batches form and never exceed
 * max-batch-size, and every text's vector equals its vector computed alone, whatever it was batched with.
 */
class BatchingUnderLoadTest {

    @Test
    void batchesFormUnderLoadWithinTheLimitAndNeverChangeAnAnswer() throws Exception {
        Path dir = dev.serval.model.text.BatchInvarianceTestAccess.tinyModelDirectory();
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            texts.add(("text " + i + " ").repeat(1 + (i * 7) % 25).trim());
        }
        Map<String, float[]> alone = new HashMap<>();
        LoadOptions options = LoadOptions.defaults().withMaxLength(256);
        String output = ModelKind.TEXT_EMBEDDING.defaultOutput();
        try (Model<String, Embedding> model = TextModels.embedding(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"),
                        output, OnnxOptions.none(), options);
                Predictor<String, Embedding> predictor = model.newPredictor()) {
            for (String text : texts) {
                alone.put(text, predictor.predict(text).vector());
            }
        }

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DeploymentSpec spec = DeploymentSpec.defaults("tiny", "dir")
                .withAdmission(new AdmissionSpec(64, 256, 8, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, true))
                .withBatching(new BatchingSpec(true, 4, Duration.ZERO))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)));
        List<String> wrong = Collections.synchronizedList(new ArrayList<>());
        try (ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime, InstantSource.system(),
                registry, dev.serval.health.FailureMonitor.Settings.defaults())) {
            Deployment<String, Embedding> deployment = engine.deploy(spec,
                    s -> TextModels.embedding(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"), output,
                            OnnxOptions.none(), options.withBatchInvariance(s.batching().batchInvariance())));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (deployment.state() != DeploymentState.READY) {
                assertTrue(System.nanoTime() < deadline, "never ready: " + deployment.status());
                TimeUnit.MILLISECONDS.sleep(5); // waiting for the launcher; nothing to join on
            }
            assertEquals("batched", deployment.batching().orElseThrow().mode());

            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 6; c++) {
                clients.add(Thread.ofPlatform().start(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int r = 0; r < 150; r++) {
                        List<String> request = new ArrayList<>();
                        for (int k = 0, n = 1 + random.nextInt(3); k < n; k++) {
                            request.add(texts.get(random.nextInt(texts.size())));
                        }
                        try {
                            List<Embedding> answer = deployment.submit(request).get(30, TimeUnit.SECONDS);
                            for (int k = 0; k < request.size(); k++) {
                                float[] expected = alone.get(request.get(k));
                                float[] got = answer.get(k).vector();
                                for (int d = 0; d < expected.length; d++) {
                                    if (Math.abs(expected[d] - got[d]) > 1e-5) {
                                        wrong.add("'" + request.get(k) + "' element " + d + ": " + got[d] + " vs " + expected[d]);
                                        return;
                                    }
                                }
                            }
                        } catch (Overloaded e) {
                            // a typed refusal is an acceptable answer under load
                        } catch (Exception e) {
                            wrong.add(e.toString());
                            return;
                        }
                    }
                }));
            }
            for (Thread client : clients) {
                client.join(TimeUnit.MINUTES.toMillis(2));
            }
            assertEquals(List.of(), wrong);
            // read while the deployment runs: a closed deployment's meters leave the registry with it
            DistributionSummary batches = registry.get("serval.batch.size").summary();
            assertTrue(batches.count() > 0, "batched inferences happened");
            assertTrue(batches.max() > 1, "batches of more than one text formed under load: max " + batches.max());
            assertTrue(batches.max() <= 4, "no batch exceeds max-batch-size: " + batches.max());
        }
    }
}
