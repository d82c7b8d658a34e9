package dev.serval.replica;

import dev.serval.admission.RetryAfter;
import dev.serval.batching.BatchCosts;
import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.ServalException;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.InputTokens;
import dev.serval.model.Predictor;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Runs one formed batch on one predictor and answers its requests: one inference over the whole batch, and when that
 * fails, each input again alone, so that one bad input fails alone and the others are answered.
 *
 * <p>Failures. A model signals input it cannot take with {@link InvalidInput}: that fails only its own request, as a
 * client error (400), and never counts against the replica's health. Any other exception of an input run alone is an
 * {@link InferenceFailed}. A failure while the pool is stopping ({@code stopped}) fails the batch's requests with
 * {@link NotReady} instead, and tells the predictor to exit.
 *
 * <p>Threads: one instance per pool, called by every predictor thread, each with its own batch and predictor; it holds
 * no mutable state of its own. It feeds the pool's {@link RetryAfter} with each batch's time per input, and a take
 * under backlog's time to the pool's {@link BatchCosts} (both best-effort, see there); it reads the pool's stop flag
 * through {@code stopped}.
 */
final class BatchRunner<I, O> {

    private static final System.Logger LOG = System.getLogger(PredictorPool.class.getName());

    private final String deployment;
    private final String replica;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final RetryAfter pace;
    private final BooleanSupplier stopped;

    BatchRunner(String deployment, String replica, LongSupplier nanoTime, DeploymentMetrics metrics, RetryAfter pace,
            BooleanSupplier stopped) {
        this.deployment = deployment;
        this.replica = replica;
        this.nanoTime = nanoTime;
        this.metrics = metrics;
        this.pace = pace;
        this.stopped = stopped;
    }

    /**
     * Runs one inference over {@code batch}, claimed tasks whose requests may have ended since; {@code inputs} and
     * {@code tokens} are the calling predictor's scratch lists (each input's tokens as that predictor counted them, or
     * null, are handed to its inference so that it does not tokenise the input again). Tasks whose requests ended are
     * dropped from {@code batch} first, and so are those whose deadline has passed, their requests ended with
     * {@code DeadlineExceeded} ({@link PoolRequest#expire}). Its time goes to {@code costs} unless null (a take under
     * backlog, {@link BatchCosts}), {@code units} being the batch's input size.
     *
     * @return false when the pool stopped while it ran: the predictor exits
     */
    boolean run(Predictor<I, O> predictor, List<InputTask<I, O>> batch, List<I> inputs, List<InputTokens> tokens,
            BatchCosts costs, long units) {
        long start = nanoTime.getAsLong();
        inputs.clear();
        tokens.clear();
        for (int i = 0; i < batch.size(); i++) {
            InputTask<I, O> task = batch.get(i);
            task.request().expire(start, deployment);
            I input = task.request().input(task.index());
            if (input == null) { // its request ended since the batch formed (or just now): it holds no inputs any more
                batch.remove(i--);
                continue;
            }
            metrics.predictorWait(start - task.queuedAt());
            inputs.add(input);
            tokens.add(task.tokens());
        }
        if (batch.isEmpty()) {
            return true;
        }
        try {
            if (batch.size() == 1) {
                InputTask<I, O> only = batch.getFirst();
                // the request tells the predictor when it is abandoned (a chunked text stops between its windows)
                only.request().answer(only.index(),
                        predictor.predict(inputs.getFirst(), only.tokens(), only.request()));
            } else {
                List<O> outputs = predictor.predictBatch(inputs, tokens);
                for (int i = 0; i < batch.size(); i++) {
                    InputTask<I, O> task = batch.get(i);
                    task.request().answer(task.index(), outputs.get(i));
                }
            }
        } catch (Throwable t) {
            if (stopped.getAsBoolean()) {
                failStopped(batch);
                return false;
            }
            if (batch.size() == 1) {
                failAlone(batch.getFirst(), t);
            } else {
                LOG.log(System.Logger.Level.WARNING, "replica {0}: a batch of {1} failed ({2}); running its inputs "
                        + "one at a time", replica, batch.size(), t.toString());
                for (int i = 0; i < batch.size(); i++) {
                    if (!runAlone(predictor, batch.get(i), inputs.get(i))) {
                        failStopped(batch.subList(i, batch.size()));
                        return false;
                    }
                }
            }
        }
        long took = nanoTime.getAsLong() - start;
        metrics.inference(took);
        pace.served(took / batch.size());
        if (costs != null) {
            costs.record(batch.size(), units, took);
        }
        return true;
    }

    /** Runs one input of a failed batch alone; false when the pool stopped while it ran. */
    private boolean runAlone(Predictor<I, O> predictor, InputTask<I, O> task, I input) {
        if (task.request().isDone()) {
            return true; // another input of its request failed already, or its caller went away
        }
        try {
            task.request().answer(task.index(), predictor.predict(input, task.tokens(), () -> false));
        } catch (Throwable t) {
            if (stopped.getAsBoolean()) {
                return false;
            }
            failAlone(task, t);
        }
        return true;
    }

    /**
     * Fails the request of an input that failed on its own: as bad input when the model said so, with the answer of a
     * deployment it called when a composite model passes one on (a step's refusal or failure, already logged there),
     * else as this model's failure.
     */
    private void failAlone(InputTask<I, O> task, Throwable failure) {
        if (task.request().isDone()) {
            return; // its request already ended (cancelled, past its deadline): the failure answers nobody
        }
        ServalException answer = requestOutcome(failure);
        if (answer != null) {
            task.request().fail(answer);
            return;
        }
        LOG.log(System.Logger.Level.ERROR, "replica " + replica + ": model '" + deployment + "' failed on input "
                + task.index(), failure);
        task.request().fail(new InferenceFailed("model '" + deployment + "' failed: " + failure, failure));
    }

    private void failStopped(List<InputTask<I, O>> tasks) {
        for (InputTask<I, O> task : tasks) {
            task.request().fail(new NotReady("model '" + deployment + "' shut down while running this request"));
        }
    }

    /**
     * The request outcome {@code failure} is or wraps (engines wrap what a translator throws): an {@link InvalidInput},
     * or any answer of another deployment that a composite model called; null for a failure of the model itself.
     */
    private static ServalException requestOutcome(Throwable failure) {
        Throwable cause = failure;
        for (int depth = 0; cause != null && depth < 8; depth++, cause = cause.getCause()) {
            if (cause instanceof ServalException outcome) {
                return outcome;
            }
        }
        return null;
    }
}
