package dev.serval.bench.load;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What Serval's own meters say happened during a run, from two scrapes of its Prometheus endpoint
 * ({@code /q/metrics}, see docs/metrics.md) taken just before and just after the run (warm-up and drain included):
 * inferences, inputs per inference (the mean take), texts per batched inference, padding share, and mean queue, predictor and batch waits, for one
 * deployment. They explain a throughput figure: e.g. smaller batches than the raw loop's. {@link #cacheRequests} reads
 * a deployment's result cache lookups by result the same way. Stateless.
 */
final class ServalMetrics {

    private static final List<String> SERIES = List.of("serval_inference_seconds_count", "serval_inference_seconds_sum",
            "serval_batch_size_count", "serval_batch_size_sum", "serval_batched_tokens_total",
            "serval_padding_tokens_total", "serval_queue_wait_seconds_count", "serval_queue_wait_seconds_sum",
            "serval_predictor_wait_seconds_count", "serval_predictor_wait_seconds_sum",
            "serval_batch_wait_seconds_count", "serval_batch_wait_seconds_sum");
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private ServalMetrics() {
    }

    /** The selected series of {@code deployment}, summed over their other labels; empty if the scrape failed. */
    static Map<String, Double> scrape(URI metrics, String deployment) throws InterruptedException {
        Map<String, Double> values = new LinkedHashMap<>();
        String body = body(metrics);
        if (body == null) {
            return values;
        }
        String label = "deployment=\"" + deployment + "\"";
        for (String line : body.split("\n")) {
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            if (line.startsWith("#") || brace < 0 || space < brace || !line.contains(label)) {
                continue;
            }
            String name = line.substring(0, brace);
            if (SERIES.contains(name)) {
                try {
                    values.merge(name, Double.parseDouble(line.substring(space + 1)), Double::sum);
                } catch (NumberFormatException e) {
                    // not a sample line
                }
            }
        }
        return values;
    }

    /**
     * {@code deployment}'s {@code serval_cache_requests_total} by its {@code result} label ({@code hit}, {@code miss},
     * {@code coalesced}; texts, not requests); empty if the scrape failed or the deployment has no cache.
     */
    static Map<String, Double> cacheRequests(URI metrics, String deployment) throws InterruptedException {
        String body = body(metrics);
        return body == null ? new LinkedHashMap<>() : cacheRequests(body, deployment);
    }

    /** {@link #cacheRequests(URI, String)} in a scrape's text. */
    static Map<String, Double> cacheRequests(String body, String deployment) {
        Map<String, Double> values = new LinkedHashMap<>();
        String label = "deployment=\"" + deployment + "\"";
        for (String line : body.split("\n")) {
            int space = line.lastIndexOf(' ');
            int result = line.indexOf("result=\"");
            if (!line.startsWith("serval_cache_requests_total{") || !line.contains(label) || result < 0
                    || space < result) {
                continue;
            }
            int end = line.indexOf('"', result + 8);
            try {
                values.merge(line.substring(result + 8, end), Double.parseDouble(line.substring(space + 1)),
                        Double::sum);
            } catch (NumberFormatException | IndexOutOfBoundsException e) {
                // not a sample line
            }
        }
        return values;
    }

    /** The scrape's text, or null if it failed. */
    private static String body(URI metrics) throws InterruptedException {
        try {
            return CLIENT.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return null;
        }
    }

    /** The run's figures from the scrapes before and after it; empty when either scrape failed. */
    static Map<String, Double> between(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> figures = new LinkedHashMap<>();
        if (before.isEmpty() || after.isEmpty()) {
            return figures;
        }
        double inferences = delta(before, after, "serval_inference_seconds_count");
        figures.put("inferences", inferences);
        figures.put("meanInferenceMillis", ratio(delta(before, after, "serval_inference_seconds_sum") * 1e3, inferences));
        // every input's predictor wait is recorded once: inputs per inference is the mean take (a batch before the
        // text model cuts it into groups of similar length, which serval_batch_size counts)
        figures.put("inputsPerInference", ratio(delta(before, after, "serval_predictor_wait_seconds_count"), inferences));
        double batches = delta(before, after, "serval_batch_size_count");
        figures.put("meanBatchSize", ratio(delta(before, after, "serval_batch_size_sum"), batches));
        figures.put("paddingShare", ratio(delta(before, after, "serval_padding_tokens_total"),
                delta(before, after, "serval_batched_tokens_total") + delta(before, after, "serval_padding_tokens_total")));
        figures.put("meanQueueWaitMillis", ratio(delta(before, after, "serval_queue_wait_seconds_sum") * 1e3,
                delta(before, after, "serval_queue_wait_seconds_count")));
        figures.put("meanPredictorWaitMillis", ratio(delta(before, after, "serval_predictor_wait_seconds_sum") * 1e3,
                delta(before, after, "serval_predictor_wait_seconds_count")));
        figures.put("meanBatchWaitMillis", ratio(delta(before, after, "serval_batch_wait_seconds_sum") * 1e3,
                delta(before, after, "serval_batch_wait_seconds_count")));
        return figures;
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after, String series) {
        return after.getOrDefault(series, 0.0) - before.getOrDefault(series, 0.0);
    }

    private static double ratio(double numerator, double denominator) {
        return denominator > 0 ? Math.round(numerator / denominator * 1000) / 1000.0 : Double.NaN;
    }
}
