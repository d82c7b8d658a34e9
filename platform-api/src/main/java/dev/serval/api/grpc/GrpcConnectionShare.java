package dev.serval.api.grpc;

import io.vertx.core.http.HttpConnection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one HTTP/2 connection's gRPC calls hold: the calls open ({@code serval.grpc.max-calls-per-connection}) and the
 * request bytes they hold ({@code serval.grpc.max-bytes-per-connection}), so that one client cannot take the whole of
 * {@code serval.http.max-buffered-bytes}, nor open calls without bound, on one connection.
 *
 * <p>Threads: a connection's calls all run on its event loop, which alone reads and writes its share's counts. The
 * {@link Table} of shares is shared by every event loop (a concurrent map); a share is in it while it has a call open
 * or a byte held, and removed by its loop when it has neither.
 */
final class GrpcConnectionShare {

    private final Table table;
    private final HttpConnection connection;
    /** Calls open and bytes held; the connection's event loop only. */
    private int calls;
    private long bytes;

    private GrpcConnectionShare(Table table, HttpConnection connection) {
        this.table = table;
        this.connection = connection;
    }

    /** Counts a new call; false, counting nothing, when the connection has its limit of calls open. */
    boolean open() {
        if (calls >= table.maxCalls) {
            return false;
        }
        calls++;
        return true;
    }

    /** A call counted by {@link #open} ended. */
    void close() {
        calls--;
        removeIfIdle();
    }

    /** Takes {@code size} bytes; false, taking nothing, when they do not fit the connection's limit. */
    boolean take(long size) {
        if (bytes + size > table.maxBytes) {
            return false;
        }
        bytes += size;
        return true;
    }

    /** Gives back bytes taken with {@link #take}. */
    void giveBack(long size) {
        bytes -= size;
        removeIfIdle();
    }

    private void removeIfIdle() {
        if (calls == 0 && bytes == 0) {
            table.shares.remove(connection, this);
        }
    }

    /** The shares of the connections with gRPC calls open or bytes held. */
    static final class Table {

        private final int maxCalls;
        private final long maxBytes;
        private final Map<HttpConnection, GrpcConnectionShare> shares = new ConcurrentHashMap<>();

        Table(int maxCalls, long maxBytes) {
            if (maxCalls < 1 || maxBytes < 1) {
                throw new IllegalArgumentException("serval.grpc.max-calls-per-connection and "
                        + "serval.grpc.max-bytes-per-connection must be positive, were " + maxCalls + " and "
                        + maxBytes);
            }
            this.maxCalls = maxCalls;
            this.maxBytes = maxBytes;
        }

        /** {@code connection}'s share (on the connection's event loop). */
        GrpcConnectionShare of(HttpConnection connection) {
            return shares.computeIfAbsent(connection, c -> new GrpcConnectionShare(this, c));
        }

        int maxCalls() {
            return maxCalls;
        }

        long maxBytes() {
            return maxBytes;
        }
    }
}
