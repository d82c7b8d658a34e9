package dev.serval.health;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * Watches the share of requests that fail on the server (not bad input, not refusals) and acts on it, the way a
 * production chat-moderation service on Ray had to build by hand: over a sliding window, when a deployment's
 * failure ratio reaches the threshold (with at least {@code minRequests} requests), its replicas are replaced;
 * when it trips again after {@code maxReplacements} replacements without a healthy window in between, the node
 * reports itself not live so that the orchestrator restarts it. A healthy window (enough requests, ratio below the
 * threshold) resets the count. After a replacement, the deployment's window starts empty.
 *
 * <p>Threads: request threads call {@link Window#record}; one monitor thread calls {@link #evaluate()} (every
 * tenth of the window, scheduled by the engine); anyone reads {@link #live()}. {@link #notLiveReason} is written once
 * by the monitor thread; per-deployment trip counts are monitor-thread only.
 */
public final class FailureMonitor {

    /**
     * @param enabled         off switch: when false nothing is recorded or acted on
     * @param window          how far back the ratio looks
     * @param threshold       failure ratio (0-1] that trips the monitor
     * @param minRequests     requests a window needs before its ratio means anything
     * @param maxReplacements replacements tried before the node declares itself not live
     */
    public record Settings(boolean enabled, Duration window, double threshold, int minRequests, int maxReplacements) {

        public Settings {
            Objects.requireNonNull(window, "window");
            if (window.compareTo(Duration.ofMillis(10)) < 0) {
                throw new IllegalArgumentException("failure-monitor window must be >= 10ms, was " + window);
            }
            if (!(threshold > 0 && threshold <= 1)) {
                throw new IllegalArgumentException("failure-monitor threshold must be in (0, 1], was " + threshold);
            }
            if (minRequests < 1 || maxReplacements < 0) {
                throw new IllegalArgumentException("failure-monitor min-requests must be >= 1 and max-replacements >= 0");
            }
        }

        /** On, 60 s window, 50 % threshold, 20 requests minimum, 2 replacements before not-live. */
        public static Settings defaults() {
            return new Settings(true, Duration.ofSeconds(60), 0.5, 20, 2);
        }
    }

    private static final System.Logger LOG = System.getLogger(FailureMonitor.class.getName());
    private static final int BUCKETS = 10;

    private final Settings settings;
    private final LongSupplier nanoTime;
    private final BiConsumer<String, String> replaceReplicas;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();
    private volatile String notLiveReason;

    /**
     * @param replaceReplicas called on the monitor thread with a deployment name and the reason to replace its replicas
     */
    public FailureMonitor(Settings settings, LongSupplier nanoTime, BiConsumer<String, String> replaceReplicas) {
        this.settings = settings;
        this.nanoTime = nanoTime;
        this.replaceReplicas = replaceReplicas;
    }

    public Settings settings() {
        return settings;
    }

    /** The window of one deployment, created on first use. */
    public Window window(String deployment) {
        return windows.computeIfAbsent(deployment, Window::new);
    }

    public void forget(String deployment) {
        windows.remove(deployment);
    }

    /** False once a deployment kept failing after its replacements; never true again (the process must restart). */
    public boolean live() {
        return notLiveReason == null;
    }

    /** Why the node is not live, or null. */
    public String notLiveReason() {
        return notLiveReason;
    }

    /** Monitor thread only: checks every deployment's window and acts. */
    public void evaluate() {
        if (!settings.enabled()) {
            return;
        }
        for (Window window : windows.values()) {
            long[] totals = window.counts.totals();
            long total = totals[0] + totals[1];
            if (total < settings.minRequests()) {
                continue;
            }
            double ratio = (double) totals[1] / total;
            window.lastRatio = ratio;
            if (ratio < settings.threshold()) {
                window.trips = 0;
                continue;
            }
            String summary = String.format("%.0f%% of the last %d requests to '%s' failed", ratio * 100, total,
                    window.deployment);
            if (window.trips >= settings.maxReplacements()) {
                if (notLiveReason == null) {
                    notLiveReason = summary + " after " + window.trips + " replica replacements";
                    LOG.log(System.Logger.Level.ERROR, "failure monitor: {0}; reporting not live", notLiveReason);
                }
                continue;
            }
            window.trips++;
            LOG.log(System.Logger.Level.WARNING, "failure monitor: {0}; replacing its replicas ({1} of {2})", summary,
                    window.trips, settings.maxReplacements());
            window.counts.clear();
            replaceReplicas.accept(window.deployment, "failure monitor: " + summary);
        }
    }

    /** One deployment's outcomes. {@link #record} is cheap and thread-safe. */
    public final class Window {
        private final String deployment;
        private final SlidingWindow counts;
        private int trips;
        private volatile double lastRatio;

        private Window(String deployment) {
            this.deployment = deployment;
            this.counts = new SlidingWindow(nanoTime, settings.window().toNanos(), BUCKETS);
        }

        /** Records a finished request: {@code serverFailure} when the server failed it (HTTP 500). */
        public void record(boolean serverFailure) {
            if (settings.enabled()) {
                counts.record(serverFailure);
            }
        }

        /** The failure ratio at the last evaluation with enough requests. */
        public double lastRatio() {
            return lastRatio;
        }

        /** Replacements since the last healthy window. */
        public int replacements() {
            return trips;
        }
    }
}
