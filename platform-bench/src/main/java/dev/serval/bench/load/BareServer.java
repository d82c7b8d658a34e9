package dev.serval.bench.load;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The transport limit: a bare Vert.x HTTP server that reads each request's body and answers it with a canned
 * response (status, headers and body captured from Serval for the same request), doing nothing else. Measured with
 * the same client as Serval, its throughput and latency are what HTTP on this machine allows, so Serval's figures
 * over it are the platform's own cost. Like Quarkus by default, it runs 2 event loops per core with one server
 * instance on each, on plain NIO; or as many as its third argument says (the load benchmark also runs one with
 * Serval's event loop count, and takes the better of the two as the limit).
 *
 * <p>Run as a child JVM by the load benchmark: arguments {@code port routesFile [eventLoops]}, where the routes file is a JSON
 * object from request path to {@code {"status":200,"headers":{...},"body":"..."}}; it prints {@code READY} once
 * listening on 127.0.0.1, and exits when its standard input ends (its parent is gone), or after an hour in any
 * case. Unknown paths get 404.
 */
public final class BareServer {

    static final String READY = "READY";
    private static final Duration MAX_LIFETIME = Duration.ofHours(1);

    /** One route's answer. */
    record Canned(int status, Map<String, String> headers, String body) {
    }

    private BareServer() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Map<String, Canned> routes = new ObjectMapper().readValue(Files.readString(Path.of(args[1])),
                new TypeReference<LinkedHashMap<String, Canned>>() { });
        Map<String, Buffer> bodies = new LinkedHashMap<>();
        routes.forEach((path, canned) -> bodies.put(path, Buffer.buffer(canned.body())));
        int loops = args.length > 2 ? Integer.parseInt(args[2]) : 2 * Runtime.getRuntime().availableProcessors();
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setPreferNativeTransport(false));
        vertx.deployVerticle(() -> new AbstractVerticle() {
            @Override
            public void start(Promise<Void> started) {
                vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port).setTcpNoDelay(true))
                        .requestHandler(request -> answer(request, routes, bodies))
                        .listen()
                        .<Void>mapEmpty()
                        .onComplete(started);
            }
        }, new DeploymentOptions().setInstances(loops)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        vertx.setTimer(MAX_LIFETIME.toMillis(), id -> System.exit(0));
        System.out.println(READY);
        System.out.flush();
        while (System.in.read() != -1) {
            // nothing is expected on standard input: its end means the parent is gone
        }
        System.exit(0);
    }

    private static void answer(HttpServerRequest request, Map<String, Canned> routes, Map<String, Buffer> bodies) {
        Canned canned = routes.get(request.path());
        if (canned == null) {
            request.response().setStatusCode(404).end();
            return;
        }
        request.body().onComplete(read -> {
            HttpServerResponse response = request.response().setStatusCode(canned.status());
            canned.headers().forEach(response::putHeader);
            response.end(bodies.get(request.path()).copy());
        });
    }
}
