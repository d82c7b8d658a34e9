package dev.serval.autoscaling;

import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * The pod's autoscaler: every period it samples each autoscaled deployment's ongoing requests (running and queued),
 * lets the deployment's {@link ScalingPolicy} decide, shares the CPU budget among the upscales ({@link CpuBudget}),
 * and hands each changed count to the controller ({@link ScalingTarget#scale}), which applies it like any spec
 * change: the autoscaler never touches a replica.
 *
 * <p>Design. {@link #tick()} runs on one thread (the engine's scheduler; the test thread in tests), which alone owns
 * the policies and their windows ({@link #policies}). Deployments come and go from other threads through
 * {@link #targets}, a copy-on-write list (changes are rare, ticks iterate it without a lock). A deployment's current
 * count is read from the controller's published status each tick, so a spec change (new bounds, autoscaling turned on
 * or off) is seen as the controller applied it; a decision made just before the controller applied the previous one
 * may repeat it, which the controller ignores. A tick with no autoscaled deployment reads each spec once and
 * allocates only its iterator; one with k autoscaled deployments reads O(replicas) counters and allocates O(k).
 */
public final class Autoscaler {

    private static final System.Logger LOG = System.getLogger(Autoscaler.class.getName());
    /** Samples one window keeps at most: an hour of look-back at the default 100 ms period. */
    static final int MAX_SAMPLES = 36_001;

    private final Duration period;
    private final int cpuBudget;
    private final LongSupplier nanoTime;
    private final InstantSource wallClock;
    private final List<ScalingTarget> targets = new CopyOnWriteArrayList<>();
    /** Autoscaler thread only: each autoscaled target's policy, created at its first decision. */
    private final Map<ScalingTarget, Tracked> policies = new IdentityHashMap<>();

    /**
     * @param period    how often it samples and decides
     * @param cpuBudget threads the pod's replicas may run together ({@code serval.cpu-budget})
     */
    public Autoscaler(Duration period, int cpuBudget, LongSupplier nanoTime, InstantSource wallClock) {
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, was " + period);
        }
        if (cpuBudget < 1) {
            throw new IllegalArgumentException("cpuBudget must be >= 1, was " + cpuBudget);
        }
        this.period = period;
        this.cpuBudget = cpuBudget;
        this.nanoTime = nanoTime;
        this.wallClock = wallClock;
    }

    public Duration period() {
        return period;
    }

    public int cpuBudget() {
        return cpuBudget;
    }

    /** Any thread: the autoscaler looks at {@code target} from its next tick on (at its budget share if fixed). */
    public void register(ScalingTarget target) {
        targets.add(target);
    }

    /** Any thread: the autoscaler forgets {@code target} from its next tick on. */
    public void unregister(ScalingTarget target) {
        targets.remove(target);
    }

    /** One round: sample, decide, budget, apply. Never throws: a failure is logged and the next tick runs. */
    public void tick() {
        try {
            decide();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "autoscaler tick failed; it runs again next period", e);
        }
    }

    private void decide() {
        long now = nanoTime.getAsLong();
        long reserved = 0;
        List<Tracked> scaled = null;
        for (ScalingTarget target : targets) {
            DeploymentSpec spec = target.spec();
            if (!spec.isAutoscaled()) {
                reserved += (long) cost(spec) * target.desiredReplicas();
                if (!policies.isEmpty()) {
                    policies.remove(target); // autoscaling turned off: its history goes with it
                }
                continue;
            }
            Tracked tracked = policies.computeIfAbsent(target, t -> new Tracked(t, window(spec.autoscaling())));
            if (tracked.policy.window().capacity() != capacity(spec.autoscaling())) {
                Tracked resized = new Tracked(target, window(spec.autoscaling())); // a new look-back period
                resized.lastChange = tracked.lastChange;
                tracked = resized;
                policies.put(target, tracked);
            }
            tracked.spec = spec;
            tracked.current = target.desiredReplicas();
            tracked.policy.window().add(now, target.ongoingRequests());
            tracked.step = tracked.policy.decide(spec.autoscaling(), tracked.current, now);
            scaled = scaled == null ? new ArrayList<>() : scaled;
            scaled.add(tracked);
        }
        if (policies.size() > (scaled == null ? 0 : scaled.size())) {
            policies.keySet().retainAll(targets); // deployments removed
        }
        if (scaled == null) {
            return;
        }
        List<CpuBudget.Claim> claims = new ArrayList<>(scaled.size());
        for (Tracked tracked : scaled) {
            claims.add(new CpuBudget.Claim(cost(tracked.spec), tracked.current,
                    tracked.spec.autoscaling().minReplicas(), tracked.step.next()));
        }
        int[] granted = CpuBudget.grant(cpuBudget, reserved, claims);
        for (int i = 0; i < granted.length; i++) {
            apply(scaled.get(i), granted[i]);
        }
    }

    private void apply(Tracked tracked, int granted) {
        ScalingPolicy.Step step = tracked.step;
        boolean refused = granted < step.next();
        String reason = step.reason();
        if (refused) {
            reason += "; the CPU budget (serval.cpu-budget " + cpuBudget + " threads, " + cost(tracked.spec)
                    + " per replica) grants " + granted + ": an upscale is tried again after another upscale_delay";
        }
        boolean changed = granted != tracked.current;
        if (changed) {
            tracked.lastChange = new DeploymentStatus.Autoscaling.Change(wallClock.instant(), tracked.current, granted,
                    reason);
        }
        // Published before the count is handed over: the controller applies it on its own thread, and whoever sees
        // it applied must find the decision (and its meter) that made it.
        tracked.target.autoscaled(new DeploymentStatus.Autoscaling(step.ongoing(), step.wanted(), reason,
                tracked.lastChange), changed, refused);
        if (changed) {
            tracked.target.scale(granted);
        }
    }

    /**
     * Threads one replica of {@code spec} runs inferences on: a multiplexed replica runs each model it holds on threads
     * of its own, so it counts {@code max_models_per_replica} models' (what it runs when full).
     */
    static int cost(DeploymentSpec spec) {
        int models = spec.isMultiplexed() ? spec.multiplex().maxModelsPerReplica() : 1;
        return spec.predictors().predictorThreads() * spec.predictors().intraOpThreads() * models;
    }

    private int capacity(AutoscalingSpec spec) {
        long samples = spec.lookBackPeriod().toNanos() / period.toNanos() + 1;
        return (int) Math.min(MAX_SAMPLES, Math.max(1, samples));
    }

    private ScalingPolicy window(AutoscalingSpec spec) {
        return new ScalingPolicy(new LoadWindow(capacity(spec)));
    }

    /** What the autoscaler keeps per autoscaled deployment; autoscaler thread only. */
    private static final class Tracked {
        final ScalingTarget target;
        final ScalingPolicy policy;
        DeploymentSpec spec;
        int current;
        ScalingPolicy.Step step;
        DeploymentStatus.Autoscaling.Change lastChange;

        Tracked(ScalingTarget target, ScalingPolicy policy) {
            this.target = target;
            this.policy = policy;
        }
    }
}
