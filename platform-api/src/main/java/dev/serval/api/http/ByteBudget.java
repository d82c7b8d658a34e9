package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import dev.serval.error.Overloaded;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server-wide budget of inference request bytes held in memory ({@code serval.http.max-buffered-bytes}): a
 * request's body counts from its first byte read until its answer is sent or its connection closes, which covers
 * the body being read, its decoded inputs waiting in the queues (about the body's size: a decoded float or text
 * takes about what its JSON or binary form took) and the inference. Past the budget, new requests are refused
 * with 503 + {@code Retry-After} on their headers, before their bodies are read, and a body whose bytes would
 * overrun it is refused as it arrives; so the memory that clients can make Serval hold is bounded in bytes, not
 * in requests.
 *
 * <p>Threads: any event loop reserves and releases; {@link #used} is one atomic counter (a CAS loop to reserve, an
 * add to release). A body that overruns the budget keeps what it reserved until its request ends, so the budget
 * stays spent while it is held. {@link #exhausted()} is a plain read, best-effort by design: a request admitted a moment before
 * the budget filled is still bounded by its own reservations.
 */
@Singleton
public class ByteBudget {

    /** When a refused client may retry: bodies in flight take about this long to be answered and give bytes back. */
    private static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final long capacity;
    private final AtomicLong used = new AtomicLong();
    private final Counter refusals;

    @Inject
    ByteBudget(ServalConfig config, MeterRegistry registry) {
        this(config.http().maxBufferedBytes().asLongValue(), registry);
    }

    ByteBudget(long capacity, MeterRegistry registry) {
        if (capacity < 1) {
            throw new IllegalArgumentException("serval.http.max-buffered-bytes must be positive, was " + capacity);
        }
        this.capacity = capacity;
        Gauge.builder("serval.http.buffered", used, AtomicLong::get).baseUnit("bytes")
                .description("Inference request bytes held in memory (bodies being read, inputs queued or running)")
                .register(registry);
        Gauge.builder("serval.http.buffered.max", () -> capacity).baseUnit("bytes")
                .description("serval.http.max-buffered-bytes").register(registry);
        this.refusals = Counter.builder("serval.http.buffer.refusals")
                .description("Requests refused because the server held max-buffered-bytes of requests")
                .register(registry);
    }

    /** Bytes held now. */
    long used() {
        return used.get();
    }

    long capacity() {
        return capacity;
    }

    /** Whether the budget is spent: new requests are refused on their headers. */
    public boolean exhausted() {
        return used.get() >= capacity;
    }

    /**
     * Takes up to {@code bytes}: all of them when they fit, else what is left of the budget (so that a body which
     * overruns it leaves the budget spent, and new requests are refused on their headers until bytes come back).
     *
     * @return the bytes taken; fewer than asked means the request does not fit
     */
    public long reserve(long bytes) {
        for (;;) {
            long now = used.get();
            long taken = Math.max(0, Math.min(bytes, capacity - now));
            if (taken == 0 || used.compareAndSet(now, now + taken)) {
                return taken;
            }
        }
    }

    /** Gives back bytes taken with {@link #reserve}. */
    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    /**
     * The refusal of a request that does not fit, counted in {@code serval_http_buffer_refusals_total}: a refusal for
     * load ({@code Overloaded}: 503 + Retry-After, OpenAI 429, gRPC RESOURCE_EXHAUSTED), never a server failure, so
     * that a client filling the budget cannot make the failure monitor replace replicas.
     */
    public Overloaded full() {
        refusals.increment();
        return new Overloaded("the server holds " + used.get() + " bytes of requests, its limit of " + capacity
                + " (serval.http.max-buffered-bytes); retry shortly", RETRY_AFTER);
    }
}
