package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.serval.deployment.Inference;
import dev.serval.error.InvalidInput;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A text-classification request in TEI's dialect ({@code POST /predict}, {@code /tei/<deployment>/predict}, and
 * {@code POST /tei/<deployment>} for a classifier, which {@code InferenceClient.text_classification} posts to) through
 * the pipeline: the texts go to the deployment as its OIP {@code text} tensor ({@code Deployment.infer}); the answer
 * lists each text's labels best first, with the model's scores, its logits, or a softmax or sigmoid of them as asked
 * ({@link PredictRequest}).
 */
final class PredictExchange extends PathExchange<PredictRequest, Inference> {

    private final TeiRoutes tei;
    /** Whether the body is {@code InferenceClient}'s ({@code /tei/<deployment>}) rather than TEI's {@code /predict}. */
    private final boolean hub;

    PredictExchange(RoutingContext context, TeiRoutes tei, String name, boolean hub) {
        super(context, tei.inference(), Dialect.TEI, name);
        this.tei = tei;
        this.hub = hub;
    }

    @Override
    PredictRequest decode(byte[] body, RuntimeException refusal) {
        acceptBody(refusal, false);
        PredictRequest request = tei.decodePredict(body, hub);
        if (served.kind() != ModelKind.TEXT_CLASSIFICATION) {
            throw new InvalidInput("inputs", "deployment '" + served.name() + "' serves a "
                    + (served.kind() == null ? "multiplexed" : served.kind().id()) + " model; /predict needs a "
                    + "text-classification model");
        }
        return request;
    }

    @Override
    CompletableFuture<Inference> infer(PredictRequest request, CallContext call) {
        Tensors inputs = new Tensors(List.of(Tensor.of("text", request.texts().toArray(new String[0]),
                request.texts().size())));
        return served.deployment().infer(new InferenceRequest(inputs, null, call));
    }

    @Override
    int inputs(PredictRequest request, Inference answer) {
        return request.texts().size();
    }

    /** Each text's labels, best first: one list per text ({@code [[...], ...]}), or a single text's list alone. */
    @Override
    Answer encode(PredictRequest request, Inference answer) {
        boolean logits = request.scores() != PredictRequest.Scores.MODEL;
        Tensor values = answer.outputs().get(logits ? "logits" : "scores").orElseThrow(() ->
                new IllegalStateException("the text-classification model answered no " + (logits ? "logits" : "scores")));
        float[] data = (float[]) values.data();
        int rows = request.texts().size();
        int width = data.length / rows;
        List<String> labels = served.deployment().newestModel(Model::labels).orElse(List.of());
        Answer.Bytes out = new Answer.Bytes(32 + rows * width * 40);
        try (JsonGenerator gen = tei.factory().createGenerator(out)) {
            boolean list = request.batch() || request.nested();
            if (list) {
                gen.writeStartArray();
            }
            float[] row = new float[width];
            for (int r = 0; r < rows; r++) {
                System.arraycopy(data, r * width, row, 0, width);
                scale(row, request.scores());
                gen.writeStartArray();
                for (int index : RankOrder.best(row, request.topK())) {
                    gen.writeStartObject();
                    gen.writeStringField("label", index < labels.size() ? labels.get(index) : "LABEL_" + index);
                    gen.writeNumberField("score", row[index]);
                    gen.writeEndObject();
                }
                gen.writeEndArray();
            }
            if (list) {
                gen.writeEndArray();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    /** Turns a row of logits into the scores asked for, in place; the model's own scores and logits stay. */
    private static void scale(float[] row, PredictRequest.Scores scores) {
        switch (scores) {
            case SIGMOID -> {
                for (int i = 0; i < row.length; i++) {
                    row[i] = (float) (1 / (1 + Math.exp(-row[i])));
                }
            }
            case SOFTMAX -> {
                double max = Double.NEGATIVE_INFINITY;
                for (float value : row) {
                    max = Math.max(max, value);
                }
                double sum = 0;
                for (float value : row) {
                    sum += Math.exp(value - max);
                }
                for (int i = 0; i < row.length; i++) {
                    row[i] = (float) (Math.exp(row[i] - max) / sum);
                }
            }
            case MODEL, LOGITS -> { }
        }
    }
}
