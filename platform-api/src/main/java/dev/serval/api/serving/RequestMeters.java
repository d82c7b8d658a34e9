package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
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

    RequestMeters(Deployment<?, ?> served, MeterRegistry registry) {
        String deployment = served.name();
        this.served = served;
        this.registry = registry;
        this.deployment = deployment;
        Api[] apis = Api.values();
        Outcome[] outcomes = Outcome.values();
        latency = new Timer[apis.length][outcomes.length];
        requests = new Counter[apis.length][outcomes.length];
        inputs = new Counter[apis.length];
        for (Api api : apis) {
            for (Outcome outcome : outcomes) {
                requests[api.ordinal()][outcome.ordinal()] = Counter.builder("serval.requests")
                        .description("Requests by outcome")
                        .tags("deployment", deployment, "api", api.tag, "outcome", outcome.tag())
                        .register(registry);
            }
            inputs[api.ordinal()] = Counter.builder("serval.inputs")
                    .description("Inputs (texts) served by successful requests")
                    .tags("deployment", deployment, "api", api.tag)
                    .register(registry);
        }
    }

    /**
     * Records one finished request that arrived at {@code startNanos} ({@link System#nanoTime()}), and tells the
     * failure monitor about successes and server failures.
     */
    public void record(Api api, Outcome outcome, long startNanos, int inputCount) {
        latency(api, outcome).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
        requests[api.ordinal()][outcome.ordinal()].increment();
        if (outcome == Outcome.OK) {
            inputs[api.ordinal()].increment(inputCount);
            served.recordOutcome(false);
        } else if (outcome == Outcome.ERROR) {
            served.recordOutcome(true);
        }
    }

    /** Requests finished with {@code outcome} since the start, over every API (a reader's view: the dashboard). */
    public double requests(Outcome outcome) {
        double sum = 0;
        for (Counter[] byOutcome : requests) {
            sum += byOutcome[outcome.ordinal()].count();
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
