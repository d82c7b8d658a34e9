package dev.serval.compose;

import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.Inference;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.NotReady;
import dev.serval.model.ModelSignature;
import dev.serval.request.InferenceRequest;
import dev.serval.request.Invocation;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An in-process call from one deployment (the caller: a pipeline, a custom handler) to another (the callee), the path
 * of every pipeline step and every {@code DeploymentHandle} call.
 *
 * <p>Design. A call is a request like an HTTP one from the callee's point of view: it goes through the callee's
 * {@link Deployment#infer} (its router, its admission: its {@code max_queued_requests} bound and its refusals), with the
 * caller's {@link CallContext} (same request id, same deadline), and its tensors are passed as they are (no copy, no
 * encoding). The callee is looked up by name on every call ({@link Callees}), so a callee redeployed, deleted or created
 * after the caller loaded is seen as it is now. When the caller's request ends early (its client went away, its
 * deadline passed: {@link Invocation#end}), every call it started is cancelled, which takes the callee's request out of
 * its queue or ends its run; the outermost caller's end (the edge's timer) reaches every call below it this way, and
 * each callee also drops a call that waits in its queues past the deadline. A call made after the deadline passed is
 * refused at once.
 *
 * <p>Threads: any thread may call {@link #infer}; it never blocks and never throws (refusals complete the returned
 * future exceptionally). Meters ({@code serval_call_seconds{deployment,callee,outcome}}) are registered once, here.
 */
public final class Handle {

    private final String caller;
    private final String callee;
    private final Callees callees;
    private final OutstandingCalls outstanding;
    private final Timer answered;
    private final Timer failed;

    /**
     * @param caller the calling deployment's name (meters and messages)
     * @param callee      the called deployment's name
     * @param outstanding the caller's calls not yet ended, which this handle's calls count in
     */
    public Handle(String caller, String callee, Callees callees, OutstandingCalls outstanding) {
        this.caller = caller;
        this.callee = callee;
        this.callees = callees;
        this.outstanding = outstanding;
        this.answered = timer(callees, caller, callee, "answered");
        this.failed = timer(callees, caller, callee, "failed");
    }

    private static Timer timer(Callees callees, String caller, String callee, String outcome) {
        return Timer.builder("serval.call").description("In-process calls from one deployment to another")
                .tags("deployment", caller, "callee", callee, "outcome", outcome).register(callees.meters());
    }

    /** The called deployment's name. */
    public String callee() {
        return callee;
    }

    /**
     * Sends {@code inputs} to the callee on behalf of {@code from}.
     *
     * @return completed with the callee's answer, or exceptionally with its refusal or failure as the callee gave it
     *     ({@link dev.serval.error.Overloaded} with its Retry-After, {@link dev.serval.error.InvalidInput}...), with
     *     {@link NotReady} when no deployment has the callee's name, with {@link DeadlineExceeded} when the deadline
     *     passed before the call; cancelled when {@code from} ends first
     */
    public CompletableFuture<Inference> infer(Invocation from, Tensors inputs) {
        return infer(from, signature -> inputs);
    }

    /**
     * {@link #infer(Invocation, Tensors)}, the inputs made by {@code inputs} from what the callee takes now (its newest
     * serving version's signature, null while none serves), read from the same lookup of the callee: a pipeline step
     * narrows what it is given to the step's inputs.
     */
    public CompletableFuture<Inference> infer(Invocation from, Function<ModelSignature, Tensors> inputs) {
        long start = System.nanoTime();
        Deployment<?, ?> target = callees.find(callee);
        if (target == null) {
            return refused(start, new NotReady("deployment '" + callee + "', called by '" + caller
                    + "', does not exist"));
        }
        if (from.context().remainingNanos(start) <= 0) {
            return refused(start, new DeadlineExceeded("the request's deadline passed before '" + caller + "' called '"
                    + callee + "'"));
        }
        CompletableFuture<Inference> call;
        try {
            call = target.infer(new InferenceRequest(inputs.apply(target.signature().orElse(null)), null,
                    from.context()));
        } catch (RuntimeException e) {
            return refused(start, e);
        }
        outstanding.started();
        from.onEnd(() -> call.cancel(false));
        call.whenComplete((answer, failure) -> {
            outstanding.ended();
            (failure == null ? answered : failed).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        });
        return call;
    }

    private CompletableFuture<Inference> refused(long start, RuntimeException refusal) {
        failed.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        return CompletableFuture.failedFuture(refusal);
    }

    @Override
    public String toString() {
        return caller + " -> " + callee;
    }
}
