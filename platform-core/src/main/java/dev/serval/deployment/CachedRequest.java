package dev.serval.deployment;

import dev.serval.cache.DeploymentCache;
import dev.serval.cache.Flight;
import dev.serval.cache.ResultCache;
import dev.serval.cache.ResultKey;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.ServedModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One request of a text model answered input by input through its deployment's {@link ResultCache}: each text is a
 * hit (its result copied from the cache: no queue slot, no predictor), coalesced (it waits for an identical text
 * already running), or a miss that this request leads; the misses it leads run together as one routed request, and
 * the answer holds every text's result in the request's order.
 *
 * <p>Which model. Texts are looked up under the newest serving replica's {@link ServedModel} (the one that would
 * serve them). Partial answers are combined only while one model serves: while a rolling update has two serving, a
 * request that is not a full hit goes the plain way (the caller's), and its results are stored under the model that
 * made them. Should a row still come from another model than the lookup's (the update began between the lookup and
 * the run, or a flight it waited for ran on another model), the request is run again whole, the plain way, so that an
 * answer never mixes two models' results.
 *
 * <p>Single flight. A led text's {@link Flight} completes when this request's run does. A waiter whose flight fails
 * (the leader's run failed as a whole, was cancelled by its client, or passed the leader's deadline) runs that text
 * itself, within its own deadline: a leader's end is never a waiter's. A text is checked against the model before it
 * leads a flight, so no request waits on a text the model refuses.
 *
 * <p>Threads: built on the caller's thread, which looks up, joins and leads; rows are then set on whichever thread
 * completes a run or a flight (predictor threads). {@link #missing} counts the rows not yet set: the thread that takes
 * it to zero finishes the request, and its atomic decrements order every row's write before that read. Ending this
 * future early (cancelled, or failed by the caller's deadline) ends the runs it started, as {@link Answering} does.
 */
final class CachedRequest<I, O> extends CompletableFuture<List<O>> {

    /** {@link #run}'s row for a run of the whole request. */
    private static final int WHOLE = -1;

    private final Intake<I, O> intake;
    private final RoutingSnapshot<I, O> snapshot;
    private final ResultCache<O> cache;
    private final RoutableReplica<I, O> lookup;
    private final ServedModel served;
    private final List<I> inputs;
    private final long deadlineNanos;
    private final Object[] rows;
    private final AtomicInteger missing = new AtomicInteger();
    /** The runs this request started, ended with it when it ends early. */
    private final ConcurrentLinkedQueue<CompletableFuture<List<O>>> runs = new ConcurrentLinkedQueue<>();
    /** Set when a row came from another model than {@link #served}. */
    private volatile boolean mixed;
    /** The replica whose model maps the answer; written before the answer completes. */
    private volatile RoutableReplica<I, O> answeredBy;

    private CachedRequest(Intake<I, O> intake, RoutingSnapshot<I, O> snapshot, ResultCache<O> cache,
            RoutableReplica<I, O> lookup, List<I> inputs, long deadlineNanos) {
        this.intake = intake;
        this.snapshot = snapshot;
        this.cache = cache;
        this.lookup = lookup;
        this.served = lookup.served();
        this.inputs = inputs;
        this.deadlineNanos = deadlineNanos;
        this.rows = new Object[inputs.size()];
    }

    /**
     * Answers {@code inputs} (texts, admitted by the caller) through {@code cache}; null when they must go the plain
     * way: no replica serves (nothing to look up under), or two models serve and not every text is a hit.
     *
     * @throws dev.serval.error.InvalidInput when a text that missed is one the model refuses (named by its index in
     *                                       the request), or as the routing of the misses throws
     */
    static <I, O> CachedRequest<I, O> start(Intake<I, O> intake, RoutingSnapshot<I, O> snapshot,
            DeploymentCache<O> meters, ResultCache<O> cache, List<I> inputs, long deadlineNanos) {
        RoutableReplica<I, O> lookup = snapshot.newest();
        if (lookup == null || lookup.served() == null || lookup.model() == null) {
            return null;
        }
        CachedRequest<I, O> request = new CachedRequest<>(intake, snapshot, cache, lookup, inputs, deadlineNanos);
        int count = inputs.size();
        ResultKey[] keys = new ResultKey[count];
        int misses = 0;
        for (int i = 0; i < count; i++) {
            ResultKey key = new ResultKey(request.served, (String) inputs.get(i));
            O hit = cache.get(key);
            if (hit != null) {
                request.rows[i] = hit;
            } else {
                keys[i] = key;
                misses++;
            }
        }
        if (misses == 0) {
            meters.counted(count, 0, 0);
            request.answer(lookup);
            return request;
        }
        if (!snapshot.servesOneModel()) {
            return null;
        }
        for (int i = 0; i < count; i++) {
            if (keys[i] != null) {
                lookup.model().validate(inputs.get(i), i);
            }
        }
        request.missing.set(misses);
        List<Integer> led = new ArrayList<>(misses);
        List<Flight<O>> flights = new ArrayList<>(misses);
        int waited = 0;
        for (int i = 0; i < count; i++) {
            if (keys[i] == null) {
                continue;
            }
            Flight<O> mine = new Flight<>(keys[i]);
            Flight<O> joined = cache.join(mine);
            if (joined == null) {
                led.add(i);
                flights.add(mine);
            } else {
                waited++;
                int row = i;
                joined.whenComplete((value, failure) -> request.waited(row, joined, value, failure));
            }
        }
        meters.counted(count - misses, led.size(), waited);
        if (!led.isEmpty()) {
            request.lead(led, flights);
        }
        return request;
    }

    /** The replica whose model maps the answer (its outputs, its version); set once the answer completed. */
    RoutableReplica<I, O> answeredBy() {
        return answeredBy;
    }

    /** Runs the texts this request leads as one routed request; their flights land with the results. */
    private void lead(List<Integer> led, List<Flight<O>> flights) {
        List<I> group = new ArrayList<>(led.size());
        led.forEach(row -> group.add(inputs.get(row)));
        CompletableFuture<List<O>> routed;
        try {
            routed = intake.route(snapshot, group, deadlineNanos);
        } catch (RuntimeException refused) {
            fail(refused); // before the flights end, so that this request's own waiters find it over
            flights.forEach(flight -> cache.abandon(flight, refused));
            throw refused;
        }
        runs.add(routed);
        routed.whenComplete((outputs, failure) -> {
            if (failure != null) {
                Throwable cause = unwrap(failure);
                fail(cause);
                flights.forEach(flight -> cache.abandon(flight, cause));
                return;
            }
            ServedModel producer = producer(routed);
            for (int j = 0; j < led.size(); j++) {
                O value = outputs.get(j);
                cache.land(flights.get(j), producer, value);
                row(led.get(j), value, producer);
            }
        });
    }

    /** A coalesced row's flight ended: its result, or, when the leader's run ended without one, a run of its own. */
    private void waited(int row, Flight<O> flight, O value, Throwable failure) {
        if (isDone()) {
            return;
        }
        if (failure == null) {
            row(row, value, flight.producer());
            return;
        }
        run(List.of(inputs.get(row)), row);
    }

    private void row(int row, O value, ServedModel producer) {
        rows[row] = value;
        if (producer != null && !producer.equals(served)) {
            mixed = true;
        }
        if (missing.decrementAndGet() == 0) {
            if (!mixed) {
                answer(lookup);
            } else if (!isDone()) {
                run(inputs, WHOLE); // again, whole: one model's answer
            }
        }
    }

    /**
     * Routes {@code texts} as a request of their own, the plain way, and stores their results under the model that
     * made them: {@code row}'s text alone, or the whole request ({@link #WHOLE}), whose answer is then that run's.
     */
    private void run(List<I> texts, int row) {
        CompletableFuture<List<O>> routed;
        try {
            routed = intake.route(snapshot, texts, deadlineNanos);
        } catch (RuntimeException refused) {
            fail(refused);
            return;
        }
        runs.add(routed);
        if (isDone()) {
            routed.cancel(false);
            return;
        }
        routed.whenComplete((outputs, failure) -> {
            if (failure != null) {
                fail(unwrap(failure));
                return;
            }
            ServedModel producer = producer(routed);
            for (int i = 0; i < texts.size(); i++) {
                cache.put(producer, (String) texts.get(i), outputs.get(i));
            }
            if (row != WHOLE) {
                row(row, outputs.getFirst(), producer);
                return;
            }
            for (int i = 0; i < rows.length; i++) {
                rows[i] = outputs.get(i);
            }
            RoutableReplica<I, O> ran = Router.servedBy(routed);
            answer(ran != null ? ran : lookup);
        });
    }

    @SuppressWarnings("unchecked")
    private void answer(RoutableReplica<I, O> replica) {
        answeredBy = replica;
        super.complete((List<O>) Arrays.asList(rows));
    }

    private ServedModel producer(CompletableFuture<List<O>> routed) {
        RoutableReplica<I, O> ran = Router.servedBy(routed);
        return ran == null ? null : ran.served();
    }

    private void fail(Throwable failure) {
        super.completeExceptionally(failure);
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            runs.forEach(run -> run.cancel(mayInterruptIfRunning));
        }
        return cancelled;
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
        boolean ended = super.completeExceptionally(failure);
        if (ended) {
            runs.forEach(run -> run.completeExceptionally(failure));
        }
        return ended;
    }
}
