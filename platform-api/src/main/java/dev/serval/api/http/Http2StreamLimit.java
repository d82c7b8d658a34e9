package dev.serval.api.http;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.IdentityHashMap;
import java.util.OptionalLong;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Holds every HTTP/2 connection (h2c, gRPC on the HTTP port included) to the streams the server advertises in its
 * SETTINGS ({@code SETTINGS_MAX_CONCURRENT_STREAMS}, {@code quarkus.http.limits.max-concurrent-streams}) from its first
 * stream on. Netty enforces the advertised limit only once the client has acknowledged the server's SETTINGS
 * (RFC 9113 §6.5.3 lets it): a client that never acknowledges them could open streams without bound, each holding its
 * request's state, until the heap is gone. Here a stream past the limit is reset with REFUSED_STREAM as soon as its
 * headers are read, before any other route sees it; those resets count in Netty's limit on the resets a connection
 * causes ({@code http2RstFloodMaxRstFramePerWindow}), so a connection that keeps trying is sent away with a GOAWAY.
 *
 * <p>Counts the streams whose answer is not yet ended: a stream whose answer was sent while its client still sends
 * is no longer counted here (Netty still counts it, once the SETTINGS are acknowledged), so this never refuses a stream
 * Netty would admit.
 *
 * <p>Threads: a connection's streams start and end on its event loop, which alone reads and writes that loop's map
 * ({@link #OPEN}); a connection has an entry only while it has streams open, so closed connections leave nothing.
 */
@Singleton
public class Http2StreamLimit {

    /** HTTP/2's REFUSED_STREAM: the stream was not processed, the client may retry it. */
    private static final long REFUSED_STREAM = 0x7;

    /** Per event loop: the streams each of its HTTP/2 connections has open. */
    private static final ThreadLocal<IdentityHashMap<HttpConnection, int[]>> OPEN =
            ThreadLocal.withInitial(IdentityHashMap::new);

    private final OptionalLong maxStreams;

    Http2StreamLimit(@ConfigProperty(name = "quarkus.http.limits.max-concurrent-streams") OptionalLong maxStreams) {
        this.maxStreams = maxStreams;
    }

    void install(@Observes Router router) {
        if (maxStreams.isEmpty()) {
            return; // no limit advertised: none to hold clients to
        }
        long max = maxStreams.getAsLong();
        router.route().order(Integer.MIN_VALUE).handler(context -> admit(context, max));
    }

    private static void admit(RoutingContext context, long max) {
        HttpServerRequest request = context.request();
        HttpConnection connection = request.connection();
        if (request.version() != HttpVersion.HTTP_2 || connection == null) {
            context.next();
            return;
        }
        IdentityHashMap<HttpConnection, int[]> open = OPEN.get();
        int[] streams = open.get(connection);
        if (streams == null) {
            streams = new int[1];
            open.put(connection, streams);
        } else if (streams[0] >= max) {
            context.response().reset(REFUSED_STREAM);
            return;
        }
        streams[0]++;
        int[] counted = streams;
        context.addEndHandler(ignored -> {
            if (--counted[0] == 0) {
                open.remove(connection);
            }
        });
        context.next();
    }
}
