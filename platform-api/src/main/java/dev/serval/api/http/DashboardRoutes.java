package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.dashboard.DashboardSampler;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.ServedDeployment;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The status dashboard (docs/dashboard.md): {@code /ui/} serves three static files from the application
 * ({@code serval-ui/} on the classpath, read once at start; the page draws its charts itself, nothing is fetched from
 * elsewhere), and {@code GET /ui/api/dashboard} the data they poll: every deployment's status (as
 * {@code /api/status} has it) and its history from the {@link DashboardSampler}, only the samples after
 * {@code ?after=<epoch ms>} when given.
 *
 * <p>Read-only. The files are a fixed list, so no path a client writes can reach another file. The data needs the
 * management token only when {@code serval.ui.require-token} says so: by default it shows what {@code /q/metrics} and
 * the OIP metadata show anyone, plus each deployment's last errors. Off ({@code serval.ui.enabled=false}): no route,
 * {@code /ui/} is a 404. Its cost is bounded whoever asks ({@link FeedCost}): two answers computed at once, others
 * refused (503), and the whole feed computed once per sample interval and shared.
 */
@Singleton
public class DashboardRoutes {

    static final String FEED = "/ui/api/dashboard";
    /** The page runs only its own script and style and talks only to its own server. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final Pattern MILLIS = Pattern.compile("[0-9]{1,15}");

    private record StaticFile(Buffer body, String contentType) {
    }

    private final DeploymentRegistry deployments;
    private final DashboardSampler sampler;
    private final ByteBudget budget;
    private final ApiToken token;
    private final ObjectMapper mapper;
    private final boolean enabled;
    private final boolean requireToken;
    private final Map<String, StaticFile> files;
    private final FeedCost cost;

    DashboardRoutes(ServalConfig config, DeploymentRegistry deployments, DashboardSampler sampler, ByteBudget budget,
            ApiToken token, ObjectMapper mapper) {
        this.deployments = deployments;
        this.sampler = sampler;
        this.budget = budget;
        this.token = token;
        this.mapper = mapper;
        this.enabled = config.ui().enabled();
        this.requireToken = config.ui().requireToken() || config.multiplex().privateTenants();
        this.files = enabled ? Map.of(
                "index.html", load("index.html", "text/html; charset=utf-8"),
                "dashboard.js", load("dashboard.js", "text/javascript; charset=utf-8"),
                "dashboard.css", load("dashboard.css", "text/css; charset=utf-8")) : Map.of();
        this.cost = new FeedCost(sampler.interval().toNanos(), System::nanoTime);
    }

    void install(@Observes Router router) {
        if (!enabled) {
            return;
        }
        router.getWithRegex("/ui").handler(context -> context.response().setStatusCode(301)
                .putHeader(HttpHeaders.LOCATION, "/ui/").end());
        router.get("/ui/").handler(context -> serve(context, files.get("index.html")));
        router.get(FEED).blockingHandler(this::feed, false);
        router.get("/ui/:file").handler(context -> {
            StaticFile file = files.get(context.pathParam("file"));
            if (file == null) {
                context.next();
            } else {
                serve(context, file);
            }
        });
        router.route("/ui/*").handler(context -> {
            if (context.request().method() == HttpMethod.GET) {
                json(context, 404, Map.of("error", "no such dashboard file: the dashboard is at /ui/"));
            } else {
                json(context, 405, Map.of("error", "the dashboard is read-only: GET only"));
            }
        });
    }

    private static StaticFile load(String name, String contentType) {
        try (InputStream in = DashboardRoutes.class.getClassLoader().getResourceAsStream("serval-ui/" + name)) {
            if (in == null) {
                throw new IllegalStateException("serval-ui/" + name + " is missing from the application");
            }
            return new StaticFile(Buffer.buffer(in.readAllBytes()), contentType);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void serve(RoutingContext context, StaticFile file) {
        HttpServerResponse response = context.response();
        response.putHeader(HttpHeaders.CONTENT_TYPE, file.contentType())
                .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
                .putHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY)
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("X-Frame-Options", "DENY")
                .putHeader("Referrer-Policy", "no-referrer")
                .end(file.body());
    }

    /** {@code GET /ui/api/dashboard[?after=<epoch ms>]}, on a worker thread (a full history is a few hundred KB). */
    private void feed(RoutingContext context) {
        if (requireToken && !token.accepts(context.request().getHeader(HttpHeaders.AUTHORIZATION))) {
            context.response().putHeader("WWW-Authenticate", "Bearer realm=\"serval\"");
            json(context, 401, Map.of("error", "the dashboard's data needs the management token "
                    + "(serval.ui.require-token or serval.multiplex.private): Authorization: Bearer <token>"));
            return;
        }
        List<String> afters = context.queryParam("after");
        long after = 0;
        if (!afters.isEmpty()) {
            if (afters.size() > 1 || !MILLIS.matcher(afters.get(0)).matches()) {
                json(context, 400, Map.of("error", "after must be one time in milliseconds since the epoch "
                        + "(digits, at most 15)"));
                return;
            }
            after = Long.parseLong(afters.get(0));
        }
        if (!cost.tryEnter()) {
            context.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
            json(context, 503, Map.of("error", "the dashboard's data is being computed for " + FeedCost.MAX_COMPUTING
                    + " other requests; retry in a second"));
            return;
        }
        try {
            // Samples older than the history are gone: such an 'after' asks for the whole feed, which is shared.
            boolean whole = after <= System.currentTimeMillis() - sampler.historyLength().toMillis();
            long since = after;
            byte[] bytes = whole ? cost.whole(() -> write(feed(0))) : write(feed(since));
            context.response().putHeader(HttpHeaders.CACHE_CONTROL, "no-store");
            send(context, 200, bytes);
        } finally {
            cost.exit();
        }
    }

    /** The feed's data: the server, and every deployment's status with its history after {@code after}. */
    private Map<String, Object> feed(long after) {
        List<Map<String, Object>> all = new ArrayList<>();
        for (ServedDeployment served : deployments.all()) {
            Map<String, Object> entry = StatusResource.view(served);
            Map<String, Object> history = served.multiplexed() == null ? sampler.history(served, after) : null;
            if (history != null) {
                entry.put("history", history);
            }
            all.add(entry);
        }
        boolean live = deployments.live();
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("live", live);
        server.put("ready", deployments.allReady());
        server.put("notLiveReason", live ? null : deployments.notLiveReason());
        server.put("bufferedBytes", budget.used());
        server.put("maxBufferedBytes", budget.capacity());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("now", System.currentTimeMillis());
        body.put("sampleIntervalMs", sampler.interval().toMillis());
        body.put("historyMs", sampler.historyLength().toMillis());
        body.put("server", server);
        body.put("deployments", all);
        return body;
    }

    private void json(RoutingContext context, int status, Object body) {
        send(context, status, write(body));
    }

    private byte[] write(Object body) {
        try {
            return mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the dashboard's JSON could not be written", e);
        }
    }

    private static void send(RoutingContext context, int status, byte[] bytes) {
        context.response().setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .putHeader("X-Content-Type-Options", "nosniff")
                .end(Buffer.buffer(bytes));
    }
}
