package dev.serval.api.http;

import dev.serval.api.serving.Outcome;
import dev.serval.api.serving.RequestMeters;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.error.DeadlineExceeded;
import dev.serval.request.CallContext;
import io.vertx.core.Context;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One inference request's way through the engine, the same for every transport: REST's OIP and OpenAI exchanges
 * ({@link InferenceExchange}) and gRPC's {@code ModelInfer} and each message of a {@code ModelStreamInfer} only decode
 * the request, find its deployment and its time budget, and send what this hands back. From {@link #start}, in order:
 *
 * <ol>
 *   <li>a request whose time is already up is refused ({@code DeadlineExceeded}), unqueued;</li>
 *   <li>a multiplexed model is pinned, and loaded if no replica holds it, only now that the request is valid: a
 *       request refused before loads nothing and evicts nothing;</li>
 *   <li>one call to the deployment with the request's id and deadline ({@link CallContext}), whatever the model's kind,
 *       never blocking; the engine drops the request unrun if its deadline passes while it waits;</li>
 *   <li>the deadline armed on the event loop's {@link RequestDeadlines} (this call is the wheel's entry), which fails
 *       the request when its time is up wherever it is;</li>
 *   <li>the answer encoded by the transport where it was completed (a predictor thread, usually: the event loop is one
 *       thread for many connections), then handed back on the request's event loop;</li>
 *   <li>exactly one outcome per request in the deployment's meters, and the model's pin given back.</li>
 * </ol>
 *
 * <p>A transport whose client goes away calls {@link #cancel}: the request leaves the deployment's queue or its run
 * ends, the outcome is {@code CANCELLED}, and the transport hears nothing more.
 *
 * <p>Threads: {@link #start}, {@link #cancel}, the deadline and the transport's {@link Transport#answer} and
 * {@link Transport#fail} run on the request's event loop; {@link Transport#encode} runs where the engine completed the
 * request. {@link #ended} is the one field two events race for (the answer and the client going away); the encoded
 * answer and the failure are written before the hop back to the event loop, whose task queue orders them before
 * their read.
 *
 * @param <A> the deployment's answer
 * @param <E> the transport's encoded answer
 */
public final class InferenceCall<A, E> extends RequestDeadlines.Deadline {

    /** What a transport does with a request it decoded, and with its answer. */
    public interface Transport<A, E> {

        /** Hands the decoded request to its deployment with {@code context} (its id and deadline); never blocks. */
        CompletableFuture<A> infer(CallContext context);

        /**
         * The answer in the transport's format. Runs where the engine completed the request, not on the event loop: it
         * may read the request and the answer, and must not touch the connection.
         */
        E encode(A answer);

        /** How many inputs the answered request carried, for the meters. Runs where {@link #encode} does. */
        int inputs(A answer);

        /** On the event loop: sends the encoded answer. */
        void answer(E encoded);

        /** On the event loop: sends the error answer for {@code failure} (its outcome is already recorded). */
        void fail(Throwable failure);
    }

    private final ServedDeployment served;
    private final RequestMeters.Api api;
    private final long startNanos;
    private final Transport<A, E> transport;
    private final AtomicBoolean ended = new AtomicBoolean();
    private boolean pinned;
    private RequestDeadlines deadlines;
    private CompletableFuture<A> result;
    private long budgetMillis;
    /** Written where the request completed, before the hop back to the event loop, which reads them after it. */
    private E encoded;
    private int answeredInputs;
    private Throwable failure;

    /**
     * @param served     the deployment the request goes to (its meters, its pin)
     * @param startNanos when the request arrived, for its latency
     */
    public InferenceCall(ServedDeployment served, RequestMeters.Api api, long startNanos, Transport<A, E> transport) {
        this.served = served;
        this.api = api;
        this.startNanos = startNanos;
        this.transport = transport;
    }

    /**
     * Runs the request: the transport hands it to the deployment with its call context. Whatever fails here (the
     * deadline, the pin, the deployment's refusal) is recorded and handed to the transport.
     *
     * @param budgetMillis the request's time budget from now: its deployment's {@code request_timeout}, or the client's
     *                     if shorter
     * @param deadlines    the event loop's deadlines (this method is called on the loop)
     * @param context      the request's Vert.x context, where the answer is handed back (null: where it completes)
     */
    public void start(String requestId, long budgetMillis, RequestDeadlines deadlines, Context context) {
        try {
            if (budgetMillis <= 0) {
                throw new DeadlineExceeded("the request's deadline of 0 ms passed before it could be queued");
            }
            if (served.pinned()) {
                served.pin();
                pinned = true;
            }
            result = transport.infer(CallContext.of(requestId, budgetMillis));
        } catch (Throwable e) {
            end(e);
            return;
        }
        this.deadlines = deadlines;
        this.budgetMillis = budgetMillis;
        deadlines.arm(this, budgetMillis);
        result.whenComplete((answer, error) -> {
            prepare(answer, error);
            if (context == null) {
                answered();
            } else {
                context.runOnContext(ignored -> answered());
            }
        });
    }

    /** The client went away (on the event loop): the request is cancelled and recorded so, unless already answered. */
    public void cancel() {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        if (deadlines != null) {
            deadlines.disarm(this);
        }
        if (result != null) {
            result.cancel(false);
        }
        record(Outcome.CANCELLED, 0);
    }

    /** The deadline: fails the request wherever it is (the engine's own drop may have come first). */
    @Override
    protected void expire() {
        result.completeExceptionally(new DeadlineExceeded("the request's deadline of " + budgetMillis
                + " ms passed before the model answered"));
    }

    /**
     * Encodes the answer where it was computed, or keeps the failure (the deployment's or the encoder's); skipped
     * once the client has gone.
     */
    private void prepare(A answer, Throwable error) {
        if (error != null) {
            failure = ErrorResponses.unwrap(error);
            return;
        }
        if (ended.get()) {
            return; // nobody to answer: answered() will not hand it over
        }
        try {
            encoded = transport.encode(answer);
            answeredInputs = transport.inputs(answer);
        } catch (Throwable e) {
            failure = e;
        }
    }

    /** On the event loop, after {@link #prepare}: hands the answer or the failure over, unless the client went away. */
    private void answered() {
        deadlines.disarm(this);
        if (failure != null) {
            end(failure);
            return;
        }
        if (ended.compareAndSet(false, true)) {
            record(Outcome.OK, answeredInputs);
            transport.answer(encoded);
        }
    }

    /** Ends the request with {@code error}: recorded, and handed to the transport (on the event loop). */
    private void end(Throwable error) {
        if (ended.compareAndSet(false, true)) {
            record(ErrorResponses.outcome(error), 0);
            transport.fail(error);
        }
    }

    /**
     * Records the outcome of a request refused before it became a call (its body, inputs or time budget did not
     * decode) in {@code served}'s meters; the transport answers it.
     */
    public static void recordRefused(ServedDeployment served, RequestMeters.Api api, long startNanos,
            Throwable failure) {
        served.meters().record(api, ErrorResponses.outcome(failure), startNanos, 0);
    }

    private void record(Outcome outcome, int inputs) {
        if (pinned) {
            pinned = false;
            served.release();
        }
        served.meters().record(api, outcome, startNanos, inputs);
    }
}
