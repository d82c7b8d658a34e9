package dev.serval.api.http;

import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.RequestMeters;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.error.InvalidInput;
import dev.serval.error.UnknownDeployment;
import dev.serval.request.CallContext;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.CompletableFuture;

/**
 * One inference request's way through the request pipeline, from its headers to its answer, written once for every
 * inference endpoint; each endpoint supplies its own {@link #decode}, {@link #infer} and {@link #encode}. The steps,
 * in order ({@link #run}):
 *
 * <ol>
 *   <li>{@link #findOnHeaders}: the deployment the path names, when it does;</li>
 *   <li>{@link #refusalOnHeaders}: refuse without reading the body when its Content-Length is over
 *       {@code serval.http.max-body-size}, when the server already holds {@code serval.http.max-buffered-bytes} of
 *       requests, or when the deployment does not accept requests now (not ready, queue full): such a refusal costs
 *       about what a no-op request costs;</li>
 *   <li>{@link #readBody}: buffer the body while it fits the size limit and the byte budget (each chunk reserved,
 *       released when the answer is sent or the connection closes); one that outgrows them is refused at its end;</li>
 *   <li>{@link #decode}: the body (and the deployment, when the body names it) into the endpoint's request;</li>
 *   <li>{@link #deadlineMillis}: the request's time budget;</li>
 *   <li>the rest is every transport's ({@link InferenceCall}): the model pinned only now that the request is valid,
 *       one call to the deployment with the request's id and deadline, the answer encoded ({@link #encode}) where it
 *       was completed and written back on the request's own Vert.x context, one outcome in the deployment's meters;
 *       a request refused before it (on its headers, its body, its decoding) is metered here once its deployment is
 *       known.</li>
 * </ol>
 *
 * <p>Nothing thrown escapes: whatever a step throws, {@code Error}s included, becomes the error answer in the
 * endpoint's format ({@link ErrorResponses}).
 *
 * <p>Deadlines: a request may take the deployment's {@code request-timeout}, or less if the client asks
 * ({@link #TIMEOUT_HEADER} in milliseconds, or the endpoint's own field). The engine gets its id and deadline whatever
 * the kind ({@code CallContext}) and drops it unrun once the deadline passed while it waits; at the deadline its event
 * loop's {@link RequestDeadlines} fails it with {@code DeadlineExceeded} (504) wherever it is, which drops it too.
 *
 * <p>Threads: every step runs on the request's event loop but {@link #encode}, which runs where the answer is
 * completed (see {@link InferenceCall}). The decoded request is written before the call starts and only read after.
 *
 * @param <R> the endpoint's decoded request
 * @param <A> the deployment's answer
 */
abstract class InferenceExchange<R, A> implements InferenceCall.Transport<A, Answer> {

    /** Header with which a client sets a shorter deadline for its request, in milliseconds. */
    static final String TIMEOUT_HEADER = "x-request-timeout-ms";

    /** Bodies up to this size are read to their end and discarded after an early refusal, keeping the connection. */
    private static final long DISCARD_LIMIT = 64 * 1024;

    final RoutingContext context;
    final InferenceRoutes routes;
    private final Dialect dialect;
    private final RequestMeters.Api api;
    private final long startNanos = System.nanoTime();
    /** The body's Content-Length, or -1 when absent or not a number: read once, on the headers. */
    private final long declared;
    /** The deployment the request goes to, once known; meters are recorded from then on. */
    ServedDeployment served;
    /**
     * The event loop's deadlines, taken when the body starts to be read (every request that reaches {@link #infer}
     * was read): the body's deadline and then the request's are armed there.
     */
    private RequestDeadlines deadlines;
    /** The decoded request, once decoded: what {@link #encode} reads. */
    private R request;

    InferenceExchange(RoutingContext context, InferenceRoutes routes, Dialect dialect) {
        this.context = context;
        this.routes = routes;
        this.dialect = dialect;
        this.api = dialect.api();
        this.declared = RequestBodies.declaredLength(context.request());
    }

    /** Runs the pipeline from the request's headers; returns once the body is being read (or refused). */
    final void run() {
        try {
            served = findOnHeaders();
            RuntimeException refusal = refusalOnHeaders();
            if (refusal != null) {
                discardBody();
                proceed(null, refusal);
            } else {
                readBody();
            }
        } catch (Throwable e) {
            refuse(e);
        }
    }

    // --- the endpoint's steps --------------------------------------------------------------------------------------

    /** The deployment the request's path names, or null when the path names none (or one that does not exist). */
    ServedDeployment findOnHeaders() {
        return null;
    }

    /**
     * The endpoint's request. Sets {@link #served} if {@link #findOnHeaders} did not. {@code refusal}, when not null,
     * refused the body on its headers or while it was read: decoding throws it, once the deployment is known, so
     * that it is metered like other bad input.
     *
     * @param body the body, or null when refused
     */
    abstract R decode(byte[] body, RuntimeException refusal);

    /** The request's own timeout in microseconds (OIP {@code parameters.timeout}), or -1. */
    long timeoutMicros(R request) {
        return -1;
    }

    /** Hands the request, with its id and deadline ({@code call}), to {@link #served}'s deployment; never blocks. */
    abstract CompletableFuture<A> infer(R request, CallContext call);

    /** The request's id ({@value RequestIds#HEADER}), as {@link RequestIds} answered it. */
    String requestId() {
        return context.response().headers().get(RequestIds.HEADER);
    }

    /** How many inputs an answered request carried, for the meters. Runs where {@link #encode} does. */
    abstract int inputs(R request, A answer);

    /**
     * The HTTP answer for {@code request}, given the deployment's answer. Runs on the thread that completed the answer
     * (a predictor's, usually), not on the event loop: it may read the request, the answer and {@link #served}, and
     * must not touch the routing context or the response.
     */
    abstract Answer encode(R request, A answer);

    /**
     * The deployment {@code name} names for this request ({@code DeploymentRegistry.route}), or null when nothing
     * serves it. A multiplexed model is only found here: it is pinned (and loaded) once the request is valid and
     * about to run ({@link #pin}).
     */
    final ServedDeployment route(String name) {
        ServedDeployment plain = routes.deployments().plain(name);
        if (plain != null) {
            return plain; // the common case: no header to read
        }
        return routes.deployments().route(name, context.request().getHeader(DeploymentRegistry.MODEL_ID_HEADER));
    }

    /** {@link #route}, or {@code UnknownDeployment} (404) naming {@code name}. */
    final ServedDeployment routeOrUnknown(String name) {
        ServedDeployment found = route(name);
        if (found == null) {
            throw routes.deployments().unknown(name);
        }
        return found;
    }

    // --- the pipeline ----------------------------------------------------------------------------------------------

    /** Why the request is refused before its body is read, or null. */
    private RuntimeException refusalOnHeaders() {
        if (declared > routes.bodies().maxBodySize()) {
            return routes.bodies().tooLarge(declared);
        }
        if (routes.budget().exhausted()) {
            return routes.budget().full();
        }
        if (served != null) {
            try {
                served.deployment().checkAccepting();
            } catch (RuntimeException e) {
                return e;
            }
        }
        return null;
    }

    /**
     * Ignores the body of a request refused on its headers. Over HTTP/1.1, after a large or unbounded body, the answer
     * says {@code Connection: close} and the connection is closed once the answer is written and the client has
     * stopped sending ({@link LingeringClose}): keeping it would mean reading the whole body only to discard it, and the
     * client may never send it. Over HTTP/2 the
     * connection is not the request's to close, and a connection-specific field would make the answer malformed
     * (RFC 9113 §8.2.2): the answer ends the stream and, while the client is still sending, a RST_STREAM with NO_ERROR
     * tells it to stop (§8.1).
     */
    private void discardBody() {
        HttpServerRequest http = context.request();
        http.handler(ignored -> { });
        if (http.version() == HttpVersion.HTTP_2) {
            context.addBodyEndHandler(ignored -> {
                if (!http.isEnded()) {
                    context.response().reset(0); // NO_ERROR
                }
            });
        } else if (declared > DISCARD_LIMIT || declared < 0) {
            closeAfterAnswer();
        }
    }

    /**
     * HTTP/1.x: the answer says {@code Connection: close}, and the connection is closed once it is written and the
     * client has stopped sending ({@link LingeringClose}): Vert.x would close it only when the client asked to.
     */
    private void closeAfterAnswer() {
        context.response().putHeader(HttpHeaders.CONNECTION, "close");
        context.addBodyEndHandler(ignored -> new LingeringClose(context.request(), context.vertx(), routes.bodyTimeout().toNanos()).start());
    }

    private void readBody() {
        HttpServerRequest http = context.request();
        BodyReading reading = new BodyReading(routes.bodies().maxBodySize());
        deadlines = RequestDeadlines.onThisLoop(context.vertx());
        deadlines.arm(reading, routes.bodyTimeout().toMillis());
        context.addEndHandler(ignored -> {
            deadlines.disarm(reading);
            routes.budget().release(reading.reserved);
        });
        http.handler(reading);
        http.endHandler(ignored -> {
            deadlines.disarm(reading);
            if (reading.expired) {
                return;
            }
            try {
                reading.finish();
            } catch (Throwable e) {
                refuse(e);
            }
        });
    }

    /** Decodes and derives the deadline; the rest is the call's. */
    private void proceed(byte[] body, RuntimeException refusal) {
        long deadline;
        try {
            request = decode(body, refusal);
            deadline = deadlineMillis(context.request().getHeader(TIMEOUT_HEADER), timeoutMicros(request));
        } catch (Throwable e) {
            refuse(e);
            return;
        }
        InferenceCall<A, Answer> call = new InferenceCall<>(served, api, startNanos, this);
        call.start(requestId(), deadline, deadlines, Vertx.currentContext());
        // Through the routing context's end handlers, which also release the request's byte budget: setting the
        // response's close handler directly would replace theirs.
        context.addEndHandler(closed -> {
            if (closed.failed()) {
                call.cancel();
            }
        });
    }

    /** The request's time budget: the deployment's timeout, or the client's if shorter. */
    private long deadlineMillis(String header, long requestMicros) {
        long millis = served.requestTimeout().toMillis();
        if (header != null) {
            long asked;
            try {
                asked = Long.parseLong(header.trim());
            } catch (NumberFormatException e) {
                asked = -1;
            }
            if (asked < 0) {
                throw new InvalidInput(TIMEOUT_HEADER, "header " + TIMEOUT_HEADER + " '" + header
                        + "' must be a non-negative number of milliseconds");
            }
            millis = Math.min(millis, asked);
        }
        if (requestMicros >= 0) {
            millis = Math.min(millis, Math.ceilDiv(requestMicros, 1000)); // rounded up without overflowing
        }
        return millis;
    }

    @Override
    public final CompletableFuture<A> infer(CallContext context) {
        return infer(request, context);
    }

    @Override
    public final Answer encode(A answer) {
        return encode(request, answer);
    }

    @Override
    public final int inputs(A answer) {
        return inputs(request, answer);
    }

    @Override
    public final void answer(Answer encoded) {
        InferenceRoutes.send(context.response(), encoded);
    }

    /** Sends the error answer of a request the call has metered. */
    @Override
    public final void fail(Throwable failure) {
        routes.fail(context, dialect, failure);
    }

    /** Records the outcome of a request refused before its call (once the deployment is known), and answers it. */
    private void refuse(Throwable failure) {
        if (served != null) {
            InferenceCall.recordRefused(served, api, startNanos, failure);
        }
        fail(failure);
    }

    /**
     * One body being read: buffers it while it fits the size limit and the byte budget. A body that comes in one chunk
     * (every small request) is kept as that chunk, which Vert.x hands over as a heap copy of its own: nothing else is
     * allocated or copied until the decoder's array. Event loop only.
     *
     * <p>Its deadline is the earlier of: {@code serval.http.body-timeout} after its last chunk (or its headers), which
     * bounds a stall; and that timeout plus its bytes so far at {@code serval.http.min-body-rate} after its headers,
     * which bounds a trickle while a large body on a slow link is read to its end. It is armed once, for the timeout;
     * when it comes, {@link #expire} arms it again for what is left if the body has kept coming (a chunk costs a clock
     * read, not a re-arming).
     */
    private final class BodyReading extends RequestDeadlines.Deadline implements Handler<Buffer> {
        private final long limit;
        private final long readingSince = System.nanoTime();
        private long lastChunkNanos = readingSince;
        /** It stalled or trickled (see above) before it all came: the request was ended, the rest is ignored. */
        private boolean expired;
        /** The body's first chunk, until a second one comes. */
        private Buffer first;
        /** The body so far, once it has more than one chunk. */
        private Buffer buffer;
        private long received;
        private long reserved;
        private boolean overBudget;

        BodyReading(long limit) {
            this.limit = limit;
        }

        /**
         * 408; over HTTP/1.1 the connection is closed once it is written (what else the client sends would be read as
         * the next request, and Vert.x would wait for the rest of this body first); over HTTP/2 the stream ends alone.
         */
        @Override
        protected void expire() {
            long now = System.nanoTime();
            long timeout = routes.bodyTimeout().toNanos();
            long stalledAt = lastChunkNanos + timeout;
            // received <= Quarkus's body cap, far below what would overflow
            long slowAt = readingSince + timeout + received * 1_000_000_000L / routes.minBodyRate();
            long due = Math.min(stalledAt, slowAt);
            if (now - due < 0) {
                deadlines.arm(this, Math.ceilDiv(due - now, 1_000_000L));
                return;
            }
            expired = true;
            if (context.response().ended() || context.response().closed()) {
                return;
            }
            if (context.request().version() != HttpVersion.HTTP_2) {
                closeAfterAnswer();
            }
            String came = received + " of " + (declared < 0 ? "an unknown number of" : Long.toString(declared))
                    + " bytes came";
            refuse(new ApiError(408, now - stalledAt >= 0
                    ? "the request body stopped coming for serval.http.body-timeout (" + routes.bodyTimeout().toMillis()
                            + " ms): " + came
                    : "the request body came slower than serval.http.min-body-rate (" + routes.minBodyRate()
                            + " bytes/s) past serval.http.body-timeout (" + routes.bodyTimeout().toMillis() + " ms): "
                            + came + " in " + (now - readingSince) / 1_000_000 + " ms"));
        }

        @Override
        public void handle(Buffer chunk) {
            received += chunk.length();
            lastChunkNanos = System.nanoTime();
            if (received > limit || overBudget || expired) {
                return;
            }
            long taken = routes.budget().reserve(chunk.length());
            reserved += taken;
            if (taken < chunk.length()) {
                overBudget = true;
                return;
            }
            if (buffer != null) {
                buffer.appendBuffer(chunk);
            } else if (first == null) {
                first = chunk;
            } else {
                // Sized by Content-Length up to 64 KiB: a client that declares a large body and sends little holds
                // little.
                buffer = Buffer.buffer((int) Math.min(Math.max(declared, received), 64 * 1024));
                buffer.appendBuffer(first).appendBuffer(chunk);
                first = null;
            }
        }

        /** The body is in: goes on with it, or with why it was refused. */
        void finish() {
            if (received > limit) {
                proceed(null, routes.bodies().tooLarge(received));
            } else if (overBudget) {
                proceed(null, routes.budget().full());
            } else {
                Buffer body = buffer != null ? buffer : first;
                proceed(body == null ? new byte[0] : body.getBytes(), null);
            }
        }
    }
}
