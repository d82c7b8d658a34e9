package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.SocketAddress;
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
 * <p>A connection Netty sends away for a reset flood (more than {@code rst-flood-max-rst-frame-per-window} resets sent
 * by the client: rapid reset) is counted against its client's address ({@link FloodsByAddress}); a stream from a
 * barred address is refused with its connection (GOAWAY ENHANCE_YOUR_CALM) before any route sees it. The address is looked at when a connection goes from
 * no stream open to one, and only while some address is remembered.
 *
 * <p>Threads: a connection's streams start and end on its event loop, which alone reads and writes that loop's map
 * ({@link #OPEN}); a connection has an entry only while it has streams open, so closed connections leave nothing.
 */
@Singleton
public class Http2StreamLimit {

    /** HTTP/2's REFUSED_STREAM: the stream was not processed, the client may retry it. */
    private static final long REFUSED_STREAM = 0x7;

    /** HTTP/2's ENHANCE_YOUR_CALM: the peer is generating excessive load. */
    private static final int ENHANCE_YOUR_CALM = 0xb;

    /** The class whose ENHANCE_YOUR_CALM is a client's reset flood (see {@link #clientResetFlood}). */
    private static final String CLIENT_RESET_LIMIT = "io.netty.handler.codec.http2.Http2MaxRstFrameListener";

    /** Addresses remembered at once (each a few dozen bytes): more than the connections the server accepts. */
    private static final int REMEMBERED_ADDRESSES = 16_384;

    /** Per event loop: the streams each of its HTTP/2 connections has open. */
    private static final ThreadLocal<IdentityHashMap<HttpConnection, int[]>> OPEN =
            ThreadLocal.withInitial(IdentityHashMap::new);

    private final long maxStreams;
    private final FloodsByAddress floods;
    private final Counter floodsSeen;
    private final Counter barredStreams;

    Http2StreamLimit(@ConfigProperty(name = "quarkus.http.limits.max-concurrent-streams") OptionalLong maxStreams,
            ServalConfig config, MeterRegistry registry) {
        this.maxStreams = maxStreams.orElse(Long.MAX_VALUE); // none advertised: none to hold clients to
        this.floods = new FloodsByAddress(config.http().maxFloodsPerAddress(), config.http().floodWindow().toNanos(),
                REMEMBERED_ADDRESSES, System::nanoTime);
        this.floodsSeen = Counter.builder("serval.http2.floods")
                .description("HTTP/2 connections sent away for a flood of resets from the client (rapid reset)")
                .register(registry);
        this.barredStreams = Counter.builder("serval.http2.barred.streams")
                .description("HTTP/2 streams refused, with their connection, because their client address flooded")
                .register(registry);
    }

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::admit);
    }

    private void admit(RoutingContext context) {
        HttpServerRequest request = context.request();
        HttpConnection connection = request.connection();
        if (request.version() != HttpVersion.HTTP_2 || connection == null) {
            context.next();
            return;
        }
        IdentityHashMap<HttpConnection, int[]> open = OPEN.get();
        int[] streams = open.get(connection);
        if (streams == null) {
            if (refusedForFloods(connection, context.response())) {
                return;
            }
            streams = new int[1];
            open.put(connection, streams);
        } else if (streams[0] >= maxStreams) {
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

    /**
     * Refuses a stream and its connection when the connection's address is barred for floods (and says so); else
     * watches the connection, so that a flood it is sent away for counts against its address. For servers without
     * this route (the gRPC port of its own), at each stream.
     */
    public boolean refusedForFloods(HttpConnection connection, HttpServerResponse response) {
        if (floods.anyRemembered() && floods.barred(address(connection))) {
            barredStreams.increment();
            response.reset(ENHANCE_YOUR_CALM);
            connection.goAway(ENHANCE_YOUR_CALM);
            connection.close();
            return true;
        }
        connection.exceptionHandler(new FloodWatch(connection));
        return false;
    }

    /** A connection's errors, on its event loop: a reset flood counts once against its address. */
    private final class FloodWatch implements Handler<Throwable> {
        private final HttpConnection connection;
        /** A connection raises its flood once per stream it had open. */
        private boolean counted;

        FloodWatch(HttpConnection connection) {
            this.connection = connection;
        }

        @Override
        public void handle(Throwable error) {
            if (!counted && clientResetFlood(error)) {
                counted = true;
                floodsSeen.increment();
                floods.flooded(address(connection));
            }
        }
    }

    /**
     * Whether {@code error} is Netty's limit on the resets a client sends ({@code Http2MaxRstFrameListener}'s
     * ENHANCE_YOUR_CALM, a shared exception whose one stack frame names that class), not its limit on the resets the
     * server sends, which a client also reaches by merely breaking a connection that has many streams open.
     */
    private static boolean clientResetFlood(Throwable error) {
        if (!(error instanceof Http2Exception http2) || http2.error() != Http2Error.ENHANCE_YOUR_CALM) {
            return false;
        }
        StackTraceElement[] at = error.getStackTrace();
        return at.length > 0 && at[0].getClassName().equals(CLIENT_RESET_LIMIT);
    }

    private static String address(HttpConnection connection) {
        SocketAddress remote = connection.remoteAddress();
        return remote == null ? "" : remote.hostAddress();
    }
}
