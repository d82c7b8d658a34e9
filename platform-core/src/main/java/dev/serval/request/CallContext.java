package dev.serval.request;

/**
 * Who a request is and until when it may run, carried from the edge through every deployment it reaches (a composite
 * model's calls pass it on): the request id the edge gave it and its deadline on {@link System#nanoTime()}'s clock.
 * Immutable. Depends on nothing but the JDK, so that every layer that carries a request can name it.
 *
 * @param requestId     the request's id ({@code x-request-id}), or null when the caller has none
 * @param deadlineNanos when the request's time is up, on {@link System#nanoTime()}'s clock; {@link #NO_DEADLINE} for
 *                      a caller without one
 */
public record CallContext(String requestId, long deadlineNanos) {

    /** The deadline of a caller that sets none. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    /** A context without id or deadline (direct callers: benchmarks, tests, health probes). */
    public static final CallContext NONE = new CallContext(null, NO_DEADLINE);

    /** A context for a request that may run {@code budgetMillis} from now. */
    public static CallContext of(String requestId, long budgetMillis) {
        long now = System.nanoTime();
        long budget = budgetMillis >= Long.MAX_VALUE / 1_000_000 ? NO_DEADLINE : budgetMillis * 1_000_000;
        return new CallContext(requestId, budget == NO_DEADLINE || now + budget < now ? NO_DEADLINE : now + budget);
    }

    /** Nanoseconds left at {@code nowNanos}: 0 or less once the deadline passed, {@link Long#MAX_VALUE} without one. */
    public long remainingNanos(long nowNanos) {
        return deadlineNanos == NO_DEADLINE ? Long.MAX_VALUE : deadlineNanos - nowNanos;
    }

    /**
     * Whether {@code deadlineNanos} (a context's {@link #deadlineNanos}, or {@link #NO_DEADLINE}) has passed at
     * {@code nowNanos}, both on {@link System#nanoTime()}'s clock: what a queue asks of a request it is about to run,
     * which carries the deadline alone.
     */
    public static boolean passed(long deadlineNanos, long nowNanos) {
        return deadlineNanos != NO_DEADLINE && nowNanos - deadlineNanos >= 0;
    }
}
