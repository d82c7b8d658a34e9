package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
import dev.serval.model.ModelKind;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The request meters of one deployment (the HTTP side: requests by API and outcome; the engine's own meters are
 * {@code DeploymentMetrics}), so that recording a request is an array index and an atomic add: no lookup, no tag
 * building, no allocation per request. The counters are created with the deployment (a zero is meaningful to
 * {@code rate()}); a latency histogram, about seventy series, when its API and outcome first occur: most of the
 * fourteen never do, and a multiplexed deployment has a deployment per model (a deployment exported 1,430 series
 * when all fourteen were registered up front; 420 to 500 now).
 *
 * <ul>
 *   <li>{@code serval_request_seconds{deployment,api,outcome}}: end-to-end latency from the request's arrival at
 *       the resource to its answer, a histogram with aggregatable buckets;</li>
 *   <li>{@code serval_requests_total{deployment,api,outcome}}: requests;</li>
 *   <li>{@code serval_inputs_total{deployment,api}}: texts embedded by successful requests;</li>
 * </ul>
 */
public final class RequestMeters {

    /**
     * Which API a request came through (OIP REST, OpenAI, OIP gRPC, Hugging Face TEI, Jina/Cohere rerank): the
     * {@code api} tag.
     */
    public enum Api {
        OIP("oip"), OPENAI("openai"), GRPC("grpc"), TEI("tei"), RERANK("rerank");

        private final String tag;

        Api(String tag) {
            this.tag = tag;
        }

        /** Whether a model of {@code kind} answers requests of this API (a refusal of another is still metered). */
        boolean serves(ModelKind kind) {
            return switch (this) {
                case OIP, GRPC -> true;
                case OPENAI -> kind == ModelKind.TEXT_EMBEDDING;
                case TEI -> kind == ModelKind.TEXT_EMBEDDING || kind == ModelKind.TEXT_CLASSIFICATION
                        || kind == ModelKind.TEXT_RERANK;
                case RERANK -> kind == ModelKind.TEXT_RERANK;
            };
        }
    }

    /**
     * Registered on first use ({@link #latency}): a request thread that finds a null registers it; two doing so at
     * once get the same meter from the registry, so the unsynchronised write is benign.
     */
    private final Timer[][] latency;
    private final Counter[][] requests;
    private final Counter[] inputs;
    private final Deployment<?, ?> served;
    private final MeterRegistry registry;
    private final String deployment;

    /**
     * The meters of {@code served}, a deployment of a {@code kind} model: the counters of every API that model answers
     * are registered now, at 0 ({@code rate()} and {@code increase()} see its first requests); an API it does not
     * answer gets its counters with its first (refused) request.
     */
    RequestMeters(Deployment<?, ?> served, MeterRegistry registry, ModelKind kind) {
        this.served = served;
        this.registry = registry;
        this.deployment = served.name();
        Api[] apis = Api.values();
        latency = new Timer[apis.length][Outcome.values().length];
        requests = new Counter[apis.length][];
        inputs = new Counter[apis.length];
        for (Api api : apis) {
            if (api.serves(kind)) {
                counters(api);
            }
        }
    }

    /**
     * {@code api}'s request counters, registered with the first call: a request thread that finds none (or, reading
     * the row without a lock, a row whose counters it cannot see yet) registers them; two doing so at once get the same
     * meters from the registry, so the unsynchronised writes are benign.
     */
    private Counter[] counters(Api api) {
        Counter[] row = requests[api.ordinal()];
        if (row != null && row[row.length - 1] != null) {
            return row;
        }
        row = new Counter[Outcome.values().length];
        for (Outcome outcome : Outcome.values()) {
            row[outcome.ordinal()] = Counter.builder("serval.requests")
                    .description("Requests by outcome")
                    .tags("deployment", deployment, "api", api.tag, "outcome", outcome.tag())
                    .register(registry);
        }
        inputs(api);
        requests[api.ordinal()] = row;
        return row;
    }

    /** {@code api}'s input counter, registered with the first call as {@link #counters} are. */
    private Counter inputs(Api api) {
        Counter counter = inputs[api.ordinal()];
        if (counter == null) {
            counter = Counter.builder("serval.inputs")
                    .description("Inputs (texts) served by successful requests")
                    .tags("deployment", deployment, "api", api.tag)
                    .register(registry);
            inputs[api.ordinal()] = counter;
        }
        return counter;
    }

    /**
     * Records one finished request that arrived at {@code startNanos} ({@link System#nanoTime()}), and tells the
     * failure monitor about successes and server failures.
     */
    public void record(Api api, Outcome outcome, long startNanos, int inputCount) {
        latency(api, outcome).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
        counters(api)[outcome.ordinal()].increment();
        if (outcome == Outcome.OK) {
            inputs(api).increment(inputCount);
            served.recordOutcome(false);
        } else if (outcome == Outcome.ERROR) {
            served.recordOutcome(true);
        }
    }

    /** Requests finished with {@code outcome} since the start, over every API (a reader's view: the dashboard). */
    public double requests(Outcome outcome) {
        double sum = 0;
        for (Counter[] byOutcome : requests) {
            Counter counter = byOutcome == null ? null : byOutcome[outcome.ordinal()];
            if (counter != null) {
                sum += counter.count();
            }
        }
        return sum;
    }

    /** The latency histograms of {@code outcome} registered so far, one per API that had such a request. */
    public List<Timer> latencies(Outcome outcome) {
        List<Timer> registered = new ArrayList<>(latency.length);
        for (Timer[] byOutcome : latency) {
            Timer timer = byOutcome[outcome.ordinal()];
            if (timer != null) {
                registered.add(timer);
            }
        }
        return registered;
    }

    /** The latency histogram of {@code api} and {@code outcome}, registered the first time it is needed. */
    private Timer latency(Api api, Outcome outcome) {
        Timer timer = latency[api.ordinal()][outcome.ordinal()];
        if (timer == null) {
            timer = Timer.builder("serval.request")
                    .description("Request latency from arrival to answer")
                    .tags("deployment", deployment, "api", api.tag, "outcome", outcome.tag())
                    .publishPercentileHistogram()
                    .register(registry);
            latency[api.ordinal()][outcome.ordinal()] = timer;
        }
        return timer;
    }
}
