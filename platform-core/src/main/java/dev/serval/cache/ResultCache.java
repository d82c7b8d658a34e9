package dev.serval.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import dev.serval.model.Classification;
import dev.serval.model.Embedding;
import dev.serval.spec.ServedModel;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One deployment's results, per input, and the inputs on their way through its model: a Caffeine cache bounded by the
 * bytes of its keys and values (W-TinyLFU, which keeps a scan of one-off texts from pushing out the frequent ones),
 * and a map of {@link Flight}s, one per input being run, that identical inputs join (single flight).
 *
 * <p>Design. An input's way: {@link #get} (a hit), else {@link #join} with a flight of its own, which either finds
 * another's flight to wait for, or installs its own and leads it; the leader runs the input and {@link #land}s the
 * result (stored, then the flight removed, then completed) or {@link #abandon}s the flight. Because the result is
 * stored before the flight leaves the map, an input that misses the cache and then finds no flight looks at the cache
 * once more after installing its own ({@link #join}): it never runs an input whose result has just landed. Results
 * are stored under the served model that made them ({@link Flight#producer()}), which during a rolling update may not
 * be the one the input was looked up with: a lookup by the new model never finds the old model's result.
 *
 * <p>Weights. An entry weighs its text at 2 bytes a character (UTF-16, the bound for any string), its result's floats
 * at 4 bytes each, and {@value #ENTRY_OVERHEAD} bytes for the objects that hold them (Caffeine's node, the key, the
 * string, the result record and its array), so that the bound holds for the heap the entries take, not just for
 * their payload.
 *
 * <p>Threads: any request thread calls {@link #get} and {@link #join}; leaders' completions (predictor threads) call
 * {@link #land} and {@link #abandon}; the budget (control threads) calls {@link #resize}. Caffeine runs its upkeep
 * (eviction) on the calling thread ({@code executor(Runnable::run)}), so that no pool thread is needed and the bound
 * holds as soon as a write returns; its eviction listener counts evictions.
 */
public final class ResultCache<O> {

    /** The bytes an entry takes beside its text and its result's numbers. */
    static final int ENTRY_OVERHEAD = 128;

    private final Cache<ResultKey, O> entries;
    private final Policy.Eviction<ResultKey, O> bound;
    private final ConcurrentHashMap<ResultKey, Flight<O>> flights = new ConcurrentHashMap<>();

    /**
     * @param maxBytes  the bound on the entries' weight
     * @param evictions told once per entry evicted for size
     */
    public ResultCache(long maxBytes, Runnable evictions) {
        this.entries = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .<ResultKey, O>weigher(ResultCache::weigh)
                .executor(Runnable::run)
                .<ResultKey, O>evictionListener((key, value, cause) -> {
                    if (cause.wasEvicted()) {
                        evictions.run();
                    }
                })
                .build();
        this.bound = entries.policy().eviction().orElseThrow();
    }

    /** The cached result of {@code key}, or null. */
    public O get(ResultKey key) {
        return entries.getIfPresent(key);
    }

    /**
     * Installs {@code mine} as the flight of its key unless another is there.
     *
     * @return null when {@code mine} was installed and its caller leads it; otherwise the flight to wait for: another's,
     *     or {@code mine} already completed with a result that landed meanwhile
     */
    public Flight<O> join(Flight<O> mine) {
        Flight<O> theirs = flights.putIfAbsent(mine.key, mine);
        if (theirs != null) {
            return theirs;
        }
        O landed = entries.getIfPresent(mine.key);
        if (landed != null) {
            flights.remove(mine.key, mine);
            mine.land(mine.key.model(), landed);
            return mine;
        }
        return null;
    }

    /**
     * Ends a led flight with its result: stores it under {@code producer} (when known), then completes the flight
     * (running its waiters on this thread).
     */
    public void land(Flight<O> flight, ServedModel producer, O value) {
        put(producer, flight.key.text(), value);
        flights.remove(flight.key, flight);
        flight.land(producer, value);
    }

    /** Ends a led flight without a result: its waiters run the input themselves. */
    public void abandon(Flight<O> flight, Throwable failure) {
        flights.remove(flight.key, flight);
        flight.completeExceptionally(failure);
    }

    /**
     * Stores the result {@code producer} made for {@code text}; a null producer (a stand-in replica) stores nothing. An
     * embedding is stored without its token vectors ({@link Embedding#withoutTokenVectors}): they are a view into
     * their inference's whole output, which an entry must not keep alive, and the cache answers pooled results only.
     */
    public void put(ServedModel producer, String text, O value) {
        if (producer != null && value != null) {
            entries.put(new ResultKey(producer, text), stored(value));
        }
    }

    @SuppressWarnings("unchecked") // an Embedding's stored form is an Embedding
    private O stored(O value) {
        return value instanceof Embedding embedding ? (O) embedding.withoutTokenVectors() : value;
    }

    /** Changes the bound; entries past it are evicted at once. */
    public void resize(long maxBytes) {
        bound.setMaximum(maxBytes);
        entries.cleanUp();
    }

    /** The bound now. */
    public long maxBytes() {
        return bound.getMaximum();
    }

    /** The weight of the entries held now. */
    public long bytes() {
        return bound.weightedSize().orElse(0);
    }

    /** The entries held now (an estimate). */
    public long entries() {
        return entries.estimatedSize();
    }

    /** Inputs being run now, waited for by identical ones. */
    public int flights() {
        return flights.size();
    }

    /** Drops every entry (the cache is being turned off). */
    public void clear() {
        entries.invalidateAll();
        entries.cleanUp();
    }

    /** What an entry of {@code key} and {@code value} weighs, in bytes (see the class comment). */
    static int weigh(ResultKey key, Object value) {
        long bytes = ENTRY_OVERHEAD + 2L * key.text().length() + payload(value);
        return (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    private static long payload(Object value) {
        return switch (value) {
            case Embedding embedding -> 4L * embedding.vector().length;
            case Classification classification -> 4L * classification.scores().length;
            case String text -> 2L * text.length();
            case float[] numbers -> 4L * numbers.length;
            default -> 64;
        };
    }
}
