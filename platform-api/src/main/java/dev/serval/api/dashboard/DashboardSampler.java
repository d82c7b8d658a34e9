package dev.serval.api.dashboard;

import dev.serval.api.config.ServalConfig;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.Outcome;
import dev.serval.api.serving.RequestMeters;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.PhaseMeters;
import dev.serval.spec.DeploymentStatus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Samples the meters Serval already keeps, once per {@code serval.ui.sample-interval}, into a short history per
 * deployment for the dashboard ({@code /ui/}): requests per second by outcome, p50/p99 of each phase of a request,
 * batch sizes. Nothing is added to the request path: a sample reads counters and histogram snapshots, and subtracts
 * the previous sample's.
 *
 * <p>Writer: the sampler's own thread, the only one that creates, advances and drops {@link Track}s, and that
 * publishes its tracks by name as a new immutable map when deployments come or go. Readers: the dashboard's
 * requests, which read that map once per request and then each history under its monitor. Best-effort: a reader may
 * get the history of a deployment that was deleted a moment ago, or miss one that was just created (until the next
 * sample); a sample's numbers are the meters at slightly different instants, as a scrape's are.
 */
@Singleton
public class DashboardSampler {

    private static final Logger LOG = Logger.getLogger(DashboardSampler.class);
    /** Samples one history keeps at most, whatever the configuration says (memory: 8 bytes x 21 columns each). */
    static final int MAX_SAMPLES = 3600;

    private final DeploymentRegistry deployments;
    private final boolean enabled;
    private final Duration interval;
    private final int capacity;
    /** The sampler thread's own state: a track per deployment name. */
    private final Map<String, Track> tracks = new HashMap<>();
    private long nextId = 1;
    /** Published for readers (see the class comment); replaced, never changed. */
    private volatile Map<String, Track> published = Map.of();
    private ScheduledExecutorService executor;

    @Inject
    DashboardSampler(ServalConfig config, DeploymentRegistry deployments) {
        this(deployments, config.ui().enabled(), config.ui().sampleInterval(), config.ui().history());
    }

    DashboardSampler(DeploymentRegistry deployments, boolean enabled, Duration interval, Duration history) {
        if (interval.toMillis() < 100) {
            throw new IllegalArgumentException("serval.ui.sample-interval must be at least 100ms, was " + interval);
        }
        long samples = history.toMillis() / interval.toMillis();
        if (samples < 2 || samples > MAX_SAMPLES) {
            throw new IllegalArgumentException("serval.ui.history / serval.ui.sample-interval must be 2 to "
                    + MAX_SAMPLES + " samples, was " + history + " / " + interval + " = " + samples);
        }
        this.deployments = deployments;
        this.enabled = enabled;
        this.interval = interval;
        this.capacity = (int) samples;
    }

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        executor = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "serval-dashboard-sampler");
            thread.setDaemon(true);
            return thread;
        });
        long millis = interval.toMillis();
        executor.scheduleAtFixedRate(this::sampleNeverThrowing, 0, millis, TimeUnit.MILLISECONDS);
    }

    void stop(@Observes ShutdownEvent event) {
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    public Duration interval() {
        return interval;
    }

    /** How far back a history reaches. */
    public Duration historyLength() {
        return interval.multipliedBy(capacity);
    }

    /**
     * The samples of {@code served} that ended after {@code afterMillis} (the dashboard's JSON,
     * {@link DeploymentHistory#since}), or null when it has none: not sampled yet (a deployment of the same name that
     * it replaced may still be published), or multiplexed.
     */
    public Map<String, Object> history(ServedDeployment served, long afterMillis) {
        Track track = published.get(served.name());
        return track == null || track.served != served ? null : track.history.since(afterMillis);
    }

    /** A scheduled task that throws is never run again: the sampler logs and goes on instead. */
    private void sampleNeverThrowing() {
        try {
            sample(System.currentTimeMillis(), System.nanoTime());
        } catch (RuntimeException | Error e) {
            LOG.warnf(e, "dashboard sample failed; the next one runs as usual");
        }
    }

    /** Takes one sample of every deployment (the sampler's thread only). */
    void sample(long epochMillis, long nanos) {
        boolean changed = false;
        Map<String, ServedDeployment> current = new HashMap<>();
        for (ServedDeployment served : deployments.all()) {
            if (served.multiplexed() == null) {
                current.put(served.name(), served);
            }
        }
        changed |= tracks.keySet().retainAll(current.keySet());
        for (ServedDeployment served : current.values()) {
            Track track = tracks.get(served.name());
            if (track == null || track.served != served) {
                track = new Track(served, new DeploymentHistory(nextId++, capacity));
                tracks.put(served.name(), track);
                changed = true;
            }
            track.sample(epochMillis, nanos);
        }
        if (changed) {
            published = Map.copyOf(tracks);
        }
    }

    /** One deployment's previous readings, from which the next sample's differences are taken. */
    private static final class Track {

        private final ServedDeployment served;
        private final DeploymentHistory history;
        private final double[] requests = new double[DeploymentHistory.OUTCOMES];
        private final HistogramReading[] phases = new HistogramReading[DeploymentHistory.PHASES.size()];
        private HistogramReading batchSizes = HistogramReading.NONE;
        private HistogramReading inputs = HistogramReading.NONE;
        private long cacheHits;
        private long cacheLookups;
        /** When the previous readings were taken; none before the first sample, which only reads. */
        private long lastNanos;
        private boolean read;

        Track(ServedDeployment served, DeploymentHistory history) {
            this.served = served;
            this.history = history;
            Arrays.fill(phases, HistogramReading.NONE);
        }

        void sample(long epochMillis, long nanos) {
            RequestMeters meters = served.meters();
            PhaseMeters engine = served.deployment().phaseMeters();
            double seconds = (nanos - lastNanos) / 1e9;
            double[] point = DeploymentHistory.emptyPoint();
            for (Outcome outcome : Outcome.values()) {
                double now = meters.requests(outcome);
                point[outcome.ordinal()] = (now - requests[outcome.ordinal()]) / seconds;
                requests[outcome.ordinal()] = now;
            }
            HistogramReading[] now = {
                HistogramReading.ofTimers(meters.latencies(Outcome.OK)),
                HistogramReading.ofTimer(engine.queueWait()),
                HistogramReading.ofTimer(engine.predictorWait()),
                HistogramReading.ofTimer(engine.batchWait()),
                HistogramReading.ofTimer(engine.inference()),
            };
            for (int phase = 0; phase < now.length; phase++) {
                HistogramReading recorded = now[phase].since(phases[phase]);
                point[DeploymentHistory.LATENCY + 2 * phase] = recorded.quantile(0.5);
                point[DeploymentHistory.LATENCY + 2 * phase + 1] = recorded.quantile(0.99);
                phases[phase] = now[phase];
            }
            HistogramReading batchesNow = HistogramReading.ofSummary(engine.batchSize());
            HistogramReading batches = batchesNow.since(batchSizes);
            point[DeploymentHistory.BATCH_MEAN] = batches.mean();
            point[DeploymentHistory.BATCH_P99] = batches.quantile(0.99);
            batchSizes = batchesNow;
            HistogramReading inputsNow = HistogramReading.ofSummary(engine.requestInputs());
            point[DeploymentHistory.INPUTS_MEAN] = inputsNow.since(inputs).mean();
            inputs = inputsNow;
            DeploymentStatus.Cache cache = served.deployment().cache();
            long lookups = cache.lookups() - cacheLookups;
            point[DeploymentHistory.CACHE_HIT_RATE] = lookups > 0 ? (double) (cache.hits() - cacheHits) / lookups
                    : Double.NaN;
            cacheHits = cache.hits();
            cacheLookups = cache.lookups();
            if (read && seconds > 0) {
                history.add(epochMillis, point);
            }
            lastNanos = nanos;
            read = true;
        }
    }
}
