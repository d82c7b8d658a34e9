package dev.serval.bench.load;

import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * OIP gRPC {@code ModelInfer} calls at a fixed arrival rate (an open loop, as {@link LoadGenerator#openLoop} is for
 * REST) through grpc-java on one channel: the calling thread sends each call at its intended time, whatever the
 * server does, and its latency runs from that time (no coordinated omission). Answers are recorded into an
 * {@link IntervalLog} as they complete: successes with their latency, failures as {@code grpc <status code>}.
 *
 * <p>Threading: {@link #run} owns the pacing on the calling thread; answers arrive on the channel's event loop
 * (a direct executor), which is the log's one writer for them; {@link #unanswered} is an atomic both touch.
 */
final class GrpcOpenLoop {

    private final GRPCInferenceServiceGrpc.GRPCInferenceServiceStub stub;
    private final AtomicLong unanswered = new AtomicLong();

    GrpcOpenLoop(ManagedChannel channel) {
        this.stub = GRPCInferenceServiceGrpc.newStub(channel);
    }

    /**
     * Sends {@code requests} (cycling) at {@code rate} per second for {@code duration}, recording into {@code log};
     * then waits at most {@code drain} for the last answers.
     *
     * @return the calls still unanswered after the drain
     */
    long run(List<ModelInferRequest> requests, double rate, Duration duration, Duration drain, IntervalLog log)
            throws InterruptedException {
        long start = System.nanoTime();
        long periodNanos = (long) (1e9 / rate);
        long end = start + duration.toNanos();
        for (long k = 0; ; k++) {
            long intended = start + k * periodNanos;
            if (intended >= end) {
                break;
            }
            long wait = intended - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Duration.ofNanos(wait)); // the arrival schedule: nothing else to wait on
            }
            unanswered.incrementAndGet();
            stub.modelInfer(requests.get((int) (k % requests.size())), new StreamObserver<>() {
                private boolean answered;

                @Override
                public void onNext(ModelInferResponse response) {
                    answered = true;
                }

                @Override
                public void onError(Throwable failure) {
                    unanswered.decrementAndGet();
                    log.failure("grpc " + Status.fromThrowable(failure).getCode());
                }

                @Override
                public void onCompleted() {
                    unanswered.decrementAndGet();
                    if (answered) {
                        log.success(System.nanoTime() - intended);
                    } else {
                        log.failure("grpc OK without an answer");
                    }
                }
            });
        }
        long deadline = System.nanoTime() + drain.toNanos();
        while (unanswered.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20); // the last answers arrive on the channel's thread
        }
        return unanswered.get();
    }
}
