package dev.serval.bench.load;

import io.netty.channel.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.impl.ContextInternal;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The HTTP load generator: a Vert.x HTTP/1.1 client on a single event loop, sending a {@link Workload} to one
 * server on 127.0.0.1 in one of two shapes, with latencies in HdrHistograms ({@link LatencyRecorder}).
 *
 * <ul>
 *   <li>{@link #closedLoop}: {@code connections} connections, each sending its next request as soon as the
 *       previous one is answered. Its throughput with enough connections is the server's saturation rate; with one
 *       connection, its latency is the single-request latency.</li>
 *   <li>{@link #openLoop}: requests at a fixed arrival rate, whatever the server does: a timer on the event loop
 *       fires at each request's intended time ({@link OpenLoopSchedule}) and sends every request then due on a free
 *       connection (opening up to {@code maxConnections}), or queues it until one frees. Latency runs from the
 *       intended time, so neither a slow server nor a late generator can hide delay (no coordinated omission); how
 *       late the generator itself was is recorded apart, as the send lag.</li>
 * </ul>
 *
 * <p>Every run opens a new client (so no connection outlives its run), warms up for {@code warmUp}, measures for
 * {@code measure}, then stops sending and waits at most {@code drain} for answers; it ends by itself. Each request
 * has an idle timeout of a minute.
 *
 * <p>Connections: each run's client is a <em>bounded</em> keep-alive pool of {@code connections} (closed loop) or
 * {@code maxConnections} (open loop) HTTP/1.1 connections, without pipelining: a connection carries one request at
 * a time and is reused when its answer is read; a new one is opened only while all are busy and the pool is below
 * its bound; past the bound, requests wait in the client for a free connection, and that wait counts in their
 * latency (it runs from the intended start) and is recorded apart ({@link RunResult.ClientConnections}). So under
 * overload the generator behaves as a fixed population of clients: it never opens connections without limit (which
 * would measure its own and the kernel's collapse: file descriptors, ephemeral ports, TIME_WAIT, accept backlog),
 * and when the server is too slow to answer even its refusals, the requests it could not take queue here, visibly,
 * instead of vanishing. Connections a server closes are replaced; every opening is counted, and the peak.
 *
 * <p>The client prefers Netty's native epoll transport (on Linux): it is cheaper per request than NIO, so it leaves
 * more of the shared cores to the server, and its timers are precise to microseconds where NIO's are
 * milliseconds, which keeps the open loop's send lag small without a scheduler thread and its cross-thread
 * wake-ups. The servers under test keep their own transports.
 *
 * <p>Threading: the event loop owns the client, each run's state ({@code Run}) and its recorder, and sends every
 * request; the calling thread only starts a run and blocks until its result. Runs are sequential: one at a time
 * per generator.
 */
public final class LoadGenerator implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static final long REQUEST_IDLE_TIMEOUT_MILLIS = Duration.ofMinutes(1).toMillis();

    private final Vertx vertx;
    /** The one event loop every run's client and callbacks live on. */
    private final Context loop;
    /** The same event loop, for timers finer than Vert.x's milliseconds. */
    private final EventLoop eventLoop;
    /** Caller thread only: profile the server during the next run's measurement window, under this name. */
    private Profiler profiler;
    private String profileName;

    public LoadGenerator() {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1).setPreferNativeTransport(true));
        loop = vertx.getOrCreateContext();
        eventLoop = ((ContextInternal) loop).nettyEventLoop();
    }

    /** {@code connections} connections, each sending its next request when the previous one ends. */
    public RunResult closedLoop(String target, int port, long serverPid, Workload workload, int connections,
            Duration warmUp, Duration measure, Duration drain) throws InterruptedException, IOException {
        return closedLoop(target, port, serverPid, workload, connections, warmUp, measure, drain, false);
    }

    /**
     * {@link #closedLoop}, sending the workload's bodies in their order, each once until they run out: connection
     * {@code c} of {@code n} sends requests {@code c, c + n, c + 2n, ...} (in {@link #closedLoop} each connection
     * starts at its own place and goes on from there, so connections send the same bodies at different times). For a
     * workload whose bodies are a request sequence: a seeded draw, or texts that must not repeat.
     */
    public RunResult closedLoopInOrder(String target, int port, long serverPid, Workload workload, int connections,
            Duration warmUp, Duration measure, Duration drain) throws InterruptedException, IOException {
        return closedLoop(target, port, serverPid, workload, connections, warmUp, measure, drain, true);
    }

    private RunResult closedLoop(String target, int port, long serverPid, Workload workload, int connections,
            Duration warmUp, Duration measure, Duration drain, boolean inOrder) throws InterruptedException, IOException {
        long start = System.nanoTime();
        Run run = new Run(port, workload, connections, start + warmUp.toNanos(), measure,
                LatencyRecorder.Window.COMPLETION);
        loop.runOnContext(v -> {
            for (int c = 0; c < connections; c++) {
                run.active++;
                // each connection starts at its own place in the workload's bodies
                run.sendClosed(inOrder ? c : c * 61L, inOrder ? connections : 1);
            }
        });
        return run.finish(target, "closed", Double.NaN, serverPid, drain);
    }

    /** Requests at {@code rate} per second, on up to {@code maxConnections} connections. */
    public RunResult openLoop(String target, int port, long serverPid, Workload workload, double rate,
            int maxConnections, Duration warmUp, Duration measure, Duration drain) throws InterruptedException, IOException {
        return openLoop(target, port, serverPid, workload, rate, maxConnections, warmUp, measure, drain, null);
    }

    /**
     * {@link #openLoop(String, int, long, Workload, double, int, Duration, Duration, Duration)}, also recording every
     * answer in {@code intervals} (if not null) as it completes, for a caller that reads figures while the run goes on.
     */
    public RunResult openLoop(String target, int port, long serverPid, Workload workload, double rate,
            int maxConnections, Duration warmUp, Duration measure, Duration drain, IntervalLog intervals)
            throws InterruptedException, IOException {
        long start = System.nanoTime() + Duration.ofMillis(10).toNanos();
        OpenLoopSchedule schedule = new OpenLoopSchedule(start, rate);
        Run run = new Run(port, workload, maxConnections, start + warmUp.toNanos(), measure,
                LatencyRecorder.Window.INTENDED_START);
        run.intervals = intervals;
        loop.runOnContext(v -> run.tick(schedule));
        return run.finish(target, "open", rate, serverPid, drain);
    }

    /** Whether the client runs on Netty's native epoll transport, whose timers are precise to microseconds. */
    public boolean nativeTransport() {
        return vertx.isNativeTransportEnabled();
    }

    /**
     * Profiles the server with {@code profiler} during the next run's measurement window only, writing
     * {@code name.html} and {@code name.collapsed}.
     */
    void profileNextRun(Profiler profiler, String name) {
        this.profiler = profiler;
        this.profileName = name;
    }

    @Override
    public void close() throws InterruptedException, ExecutionException, TimeoutException {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /**
     * One run's state; every field but the immutable ones is touched on the event loop only (the caller thread
     * reads the outcome through {@link #finished} and {@link #snapshot}).
     */
    private final class Run {

        private final HttpClient client;
        private final Workload workload;
        /** One per path of the workload, in its order: request {@code i} uses {@code options[i mod length]}. */
        private final RequestOptions[] options;
        private final LatencyRecorder recorder;
        private final long measureFromNanos;
        private final long endNanos;
        private final int connections;
        private final CompletableFuture<Void> finished = new CompletableFuture<>();
        /** Set before the run starts, then read on the loop only: also record answers here, or null. */
        private IntervalLog intervals;
        /**
         * Loop only (the client's connections live on the generator's one event loop): connections opened, open now,
         * and the most open at once.
         */
        private long opened;
        private int open;
        private int peak;
        /** Loop only: requests waiting in the client for a connection of the pool (none sent yet). */
        private int waiting;
        /** Loop only: closed loop: connections still sending; open loop: requests sent and not yet answered. */
        private int active;
        /** Loop only: open loop: the next request to send. */
        private long next;
        /** Loop only: open loop: every request of the run has been sent. */
        private boolean schedulingDone;
        /** Loop only: the result was taken; later answers are ignored. */
        private boolean closed;

        Run(int port, Workload workload, int connections, long measureFromNanos, Duration measure,
                LatencyRecorder.Window window) {
            this.client = vertx.httpClientBuilder()
                    .with(new HttpClientOptions().setDefaultHost(HOST).setDefaultPort(port).setKeepAlive(true)
                            .setPipelining(false).setTcpNoDelay(true).setConnectTimeout(5_000))
                    .with(new PoolOptions().setHttp1MaxSize(connections).setMaxWaitQueueSize(-1))
                    .withConnectHandler(connection -> {
                        opened++;
                        peak = Math.max(peak, ++open);
                        connection.closeHandler(v -> open--);
                    })
                    .build();
            this.workload = workload;
            java.util.Map<String, RequestOptions> byPath = new java.util.HashMap<>();
            this.options = workload.paths().stream().map(path -> byPath.computeIfAbsent(path, uri -> new RequestOptions()
                    .setMethod(HttpMethod.POST).setURI(uri).setIdleTimeout(REQUEST_IDLE_TIMEOUT_MILLIS)
                    .putHeader(HttpHeaders.CONTENT_TYPE, HttpHeaders.createOptimized("application/json"))))
                    .toArray(RequestOptions[]::new);
            this.measureFromNanos = measureFromNanos;
            this.connections = connections;
            this.endNanos = measureFromNanos + measure.toNanos();
            this.recorder = new LatencyRecorder(measureFromNanos, endNanos, window);
        }

        /** Loop: one closed-loop connection sends request {@code index}, and {@code index + step} when it is answered. */
        void sendClosed(long index, long step) {
            long sent = System.nanoTime();
            if (sent >= endNanos || closed) {
                if (--active == 0 && !closed) {
                    finished.complete(null);
                }
                return;
            }
            exchange(sent, index, () -> sendClosed(index + step, step));
        }

        /** Loop: sends open-loop request {@code index}, intended at {@code intendedNanos}. */
        void sendOpen(long intendedNanos, long index) {
            if (closed) {
                return;
            }
            recorder.sent(intendedNanos, System.nanoTime());
            active++;
            exchange(intendedNanos, index, () -> {
                if (--active == 0 && schedulingDone) {
                    finished.complete(null);
                }
            });
        }

        /**
         * Loop: open loop: sends every request due by now, then sets a timer on the event loop for the next one
         * (Netty's scheduler: with the epoll transport its timer has microsecond precision).
         */
        void tick(OpenLoopSchedule schedule) {
            if (closed) {
                return;
            }
            long now = System.nanoTime();
            long due;
            while ((due = schedule.intendedNanos(next)) <= now && due < endNanos) {
                sendOpen(due, next++);
            }
            if (due >= endNanos) {
                schedulingEnded();
                return;
            }
            eventLoop.schedule(() -> tick(schedule), due - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        /** Loop: the last request has been sent. */
        private void schedulingEnded() {
            schedulingDone = true;
            if (active == 0) {
                finished.complete(null);
            }
        }

        private void exchange(long intendedNanos, long index, Runnable then) {
            waiting++;
            client.request(options[(int) (index % options.length)])
                    .andThen(connection -> waiting--)
                    .compose(request -> {
                        recorder.connected(intendedNanos, System.nanoTime());
                        return request.send(workload.body(index));
                    })
                    .compose(response -> response.body().map(body -> response.statusCode() == 200 ? OK
                            : new Answer(response.statusCode(), retryAfterMillis(response.getHeader("Retry-After"),
                                    response.getHeader("retry-after-ms")), response.getHeader("retry-after-ms") != null)))
                    .onComplete(outcome -> {
                        if (closed) {
                            return;
                        }
                        long now = System.nanoTime();
                        if (outcome.succeeded() && outcome.result() == OK) {
                            recorder.success(intendedNanos, now);
                            if (intervals != null) {
                                intervals.success(now - intendedNanos);
                            }
                        } else if (outcome.succeeded()) {
                            Answer answer = outcome.result();
                            recorder.refused(intendedNanos, now, answer.status(), answer.retryAfterMillis(),
                                    answer.millisHeader());
                            if (intervals != null) {
                                intervals.failure("HTTP " + answer.status());
                            }
                        } else {
                            String kind = outcome.cause().getClass().getSimpleName();
                            recorder.failure(intendedNanos, now, kind);
                            if (intervals != null) {
                                intervals.failure(kind);
                            }
                        }
                        then.run();
                    });
        }

        /** Caller thread: waits for the run (at most {@code drain} past its end), then takes its figures. */
        RunResult finish(String target, String mode, double offeredRate, long serverPid, Duration drain)
                throws InterruptedException, IOException {
            String loadAverage = MachineUsage.loadAverage();
            long untilMeasure = measureFromNanos - System.nanoTime();
            if (untilMeasure > 0) {
                Thread.sleep(Duration.ofNanos(untilMeasure)); // the warm-up: nothing to do but wait
            }
            Profiler profiling = profiler;
            profiler = null;
            if (profiling != null) {
                profiling.start();
            }
            MachineUsage.Sample before = MachineUsage.sample(serverPid);
            long untilEnd = endNanos - System.nanoTime();
            if (untilEnd > 0) {
                Thread.sleep(Duration.ofNanos(untilEnd)); // the measurement runs on the event loop
            }
            MachineUsage.Shares cpu = MachineUsage.sample(serverPid).sharesSince(before);
            if (profiling != null) {
                profiling.stop(profileName);
            }
            try {
                finished.get(drain.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // still answers outstanding: counted as unfinished below
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            }
            CompletableFuture<Taken> taken = new CompletableFuture<>();
            loop.runOnContext(v -> {
                closed = true;
                taken.complete(new Taken(recorder.snapshot(), mode.equals("open") ? active : 0,
                        mode.equals("open") ? waiting : 0, opened, peak));
            });
            Taken result;
            try {
                result = taken.get(30, TimeUnit.SECONDS);
                client.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException("the load generator's event loop is stuck", e);
            }
            if (!ProcessHandle.of(serverPid).map(ProcessHandle::isAlive).orElse(false)) {
                throw new IllegalStateException(target + " (pid " + serverPid + ") is gone: it exited or was stopped "
                        + "from outside during this " + mode + "-loop run; nothing after this point would be a measurement");
            }
            LatencyRecorder.Recorded recorded = result.recorded();
            Map<String, Long> errors = new HashMap<>(recorded.errors());
            if (result.unsent() > 0) {
                errors.put("unsent", (long) result.unsent());
            }
            if (result.unfinished() > result.unsent()) {
                errors.put("unfinished", (long) (result.unfinished() - result.unsent()));
            }
            boolean open = mode.equals("open");
            return new RunResult(target, workload.name(), mode, connections, offeredRate,
                    recorded.throughput(), recorded.successes(), errors, recorded.latencyMillis(50),
                    recorded.latencyMillis(90), recorded.latencyMillis(99), recorded.latencyMillis(99.9),
                    recorded.latencyMillis(100), recorded.successes() == 0 ? Double.NaN : recorded.latency().getMean() / 1e6,
                    open ? recorded.sendLag().getValueAtPercentile(50) / 1e6 : Double.NaN,
                    open ? recorded.sendLag().getValueAtPercentile(99) / 1e6 : Double.NaN, cpu, loadAverage, Map.of(),
                    recorded.refusalFigures(), new RunResult.ClientConnections(result.opened(), result.peak(),
                            LatencyRecorder.Recorded.millis(recorded.connectionWait(), 50),
                            LatencyRecorder.Recorded.millis(recorded.connectionWait(), 99)));
        }
    }

    /**
     * What the loop hands the caller at the end of a run: the recording, the open-loop requests still unanswered
     * (all of them) and, among those, the ones still waiting for a connection (never sent), and the connections.
     */
    private record Taken(LatencyRecorder.Recorded recorded, int unfinished, int unsent, long opened, int peak) {
    }

    /** A read answer other than 200: its status and Retry-After (ms; negative when absent or unreadable). */
    private record Answer(int status, long retryAfterMillis, boolean millisHeader) {
    }

    /** Every 200 answer (nothing else about it is kept). */
    private static final Answer OK = new Answer(200, -1, false);

    /**
     * The wait a refusal asks for, in milliseconds; -1 when it has no usable {@code Retry-After} header (absent, or
     * not delta-seconds: an HTTP-date, which a server under load has no reason to send, reads as unusable). The value
     * is {@code retry-after-ms} (OpenAI's clients read it) when that is a number, else {@code Retry-After} x 1000.
     */
    static long retryAfterMillis(String retryAfter, String retryAfterMs) {
        long seconds;
        try {
            seconds = retryAfter == null ? -1 : Long.parseLong(retryAfter.trim());
        } catch (NumberFormatException e) {
            seconds = -1;
        }
        if (seconds < 0) {
            return -1;
        }
        if (retryAfterMs != null) {
            try {
                return Math.max(0, Math.round(Double.parseDouble(retryAfterMs.trim())));
            } catch (NumberFormatException e) {
                // Retry-After alone
            }
        }
        return seconds * 1000;
    }
}
