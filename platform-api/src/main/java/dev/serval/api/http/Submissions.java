package dev.serval.api.http;

import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Outcome;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InvalidInput;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The request path every inference endpoint shares, so that it is written once: decode and validate on the event
 * loop, submit to the deployment (never blocking), bring the result back to the request's own Vert.x context to
 * encode it there, and record exactly one outcome per request in the deployment's meters (including requests
 * refused before submission and requests whose client went away).
 *
 * <p>Deadlines: a request may take the deployment's {@code request-timeout}, or less if the client asks
 * ({@link #TIMEOUT_HEADER} in milliseconds, or the OIP {@code parameters.timeout} in microseconds). A timer on the
 * request's own event loop fails it with {@code DeadlineExceeded} (504) when the time is up; that also drops the
 * request from the deployment's queue, or its inputs from the replica's queue, if no predictor has taken them.
 */
final class Submissions {

    /** Header with which a client sets a shorter deadline for its request, in milliseconds. */
    static final String TIMEOUT_HEADER = "x-request-timeout-ms";

    private Submissions() {
    }

    /**
     * A request handed to a deployment.
     *
     * @param result the deployment's future (cancelling or failing it drops the request's unstarted work)
     * @param inputs how many inputs the request carries, for the meters
     * @param call   what the encoder needs of the request once its result is in
     */
    record Submitted<C>(CompletableFuture<?> result, int inputs, C call) {
    }

    /**
     * Where a request's answer goes: the HTTP exchange it came on. Called on the request's event loop.
     */
    interface Exchange {

        /** Sends {@code answer}. */
        void send(Answer answer);

        /** Sends the error answer for {@code failure}. */
        void fail(Throwable failure);

        /** Runs {@code action} if the client goes away before an answer was sent. */
        void onClientGone(Runnable action);
    }

    /**
     * Runs one request to its answer, which goes to {@code exchange}; never blocks and never throws (whatever decode,
     * submit or encode throw, {@code Error}s included, becomes the error answer).
     *
     * @param decode turns the body into a request; throws {@code InvalidInput} or {@code ApiError} on bad input
     * @param submit hands a decoded request to the deployment (never blocking)
     * @param encode the HTTP answer for the request once its result is in (runs on the request's event loop)
     */
    static <R, C> void submit(Exchange exchange, ServedDeployment served, DeploymentMeters.Api api, long startNanos,
            String timeoutHeader, Supplier<R> decode, ToLongFunction<R> timeoutMicros,
            Function<R, Submitted<C>> submit, BiFunction<R, C, Answer> encode) {
        DeploymentMeters meters = served.meters();
        R request;
        Submitted<C> submitted;
        long timeoutMillis;
        try {
            request = decode.get();
            timeoutMillis = timeoutMillis(served, timeoutHeader, timeoutMicros.applyAsLong(request));
            if (timeoutMillis <= 0) {
                throw new DeadlineExceeded("the request's deadline of 0 ms passed before it could be queued");
            }
            submitted = submit.apply(request);
        } catch (Throwable e) {
            meters.record(api, Outcome.of(e), startNanos, 0);
            exchange.fail(e);
            return;
        }
        CompletableFuture<?> result = submitted.result();
        long timer = startTimer(result, timeoutMillis);
        int inputCount = submitted.inputs();
        Context context = Vertx.currentContext();
        AtomicBoolean ended = new AtomicBoolean();
        exchange.onClientGone(() -> {
            if (ended.compareAndSet(false, true)) {
                cancelTimer(timer);
                result.cancel(false);
                meters.record(api, Outcome.CANCELLED, startNanos, inputCount);
            }
        });
        result.whenComplete((ignored, failure) -> onContext(context, () -> {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            cancelTimer(timer);
            if (failure != null) {
                Throwable cause = ErrorResponses.unwrap(failure);
                meters.record(api, Outcome.of(cause), startNanos, inputCount);
                exchange.fail(cause);
                return;
            }
            Answer answer;
            try {
                answer = encode.apply(request, submitted.call());
            } catch (Throwable e) {
                meters.record(api, Outcome.of(e), startNanos, inputCount);
                exchange.fail(e);
                return;
            }
            meters.record(api, Outcome.OK, startNanos, inputCount);
            exchange.send(answer);
        }));
    }

    /** Runs {@code task} on the request's Vert.x context (its event loop), or here when there is none. */
    private static void onContext(Context context, Runnable task) {
        if (context == null) {
            task.run();
        } else {
            context.runOnContext(ignored -> task.run());
        }
    }

    /** The request's time budget: the deployment's timeout, or the client's if shorter. */
    private static long timeoutMillis(ServedDeployment served, String header, long requestMicros) {
        long millis = served.requestTimeout().toMillis();
        if (header != null) {
            long asked;
            try {
                asked = Long.parseLong(header.trim());
            } catch (NumberFormatException e) {
                asked = -1;
            }
            if (asked < 0) {
                throw new InvalidInput(TIMEOUT_HEADER, "header " + TIMEOUT_HEADER + " '" + header
                        + "' must be a non-negative number of milliseconds");
            }
            millis = Math.min(millis, asked);
        }
        if (requestMicros >= 0) {
            millis = Math.min(millis, (requestMicros + 999) / 1000);
        }
        return millis;
    }

    private static long startTimer(CompletableFuture<?> result, long millis) {
        Context context = Vertx.currentContext();
        if (context == null) {
            return -1;
        }
        return context.owner().setTimer(millis, id -> result.completeExceptionally(new DeadlineExceeded(
                "the request's deadline of " + millis + " ms passed before the model answered")));
    }

    private static void cancelTimer(long timer) {
        Context context = Vertx.currentContext();
        if (timer >= 0 && context != null) {
            context.owner().cancelTimer(timer);
        }
    }
}
