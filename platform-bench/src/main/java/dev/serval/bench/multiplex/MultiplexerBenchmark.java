package dev.serval.bench.multiplex;

import dev.serval.bench.BenchmarkBase;
import dev.serval.multiplex.Multiplexer;
import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What multiplexing adds to a request for a loaded model: {@link Multiplexer#acquire} (one map read, a CAS on the
 * model's pin count, one volatile read, one write of its last use) and {@link Multiplexer.Entry#release} (a CAS and a
 * volatile read of the waiting count), against 10 to 1000 models. The handles are plain objects: this measures the
 * multiplexer, not what serves the model. Goal: well under a microsecond whatever the number of models, and 0 B/op
 * ({@code -prof gc}: {@code gc.alloc.rate.norm} ~0). Measured at commit c154c4c on the 2-core machine: 42 ns at 10
 * models, 128 ns at 1000 (the benchmark cycles through the models, so each request touches a model's entry that is
 * not in cache), 0.001 B/op.
 *
 * <p>Run from the repository root (about a minute with these settings):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar MultiplexerBenchmark -f 1 -wi 2 -i 3 -w 2s -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MultiplexerBenchmark extends BenchmarkBase {

    /** A request for a loaded model, from its pin to its release. */
    @Benchmark
    public Object acquireAndRelease(Models models) {
        Multiplexer.Entry<Object> entry = models.multiplexer.acquire(models.names[models.next()]);
        entry.release();
        return entry;
    }

    @State(Scope.Thread)
    public static class Models {

        @Param({"10", "1000"})
        int count;

        Multiplexer<Object> multiplexer;
        String[] names;
        private int cursor;

        @Setup(Level.Trial)
        public void load() {
            Map<String, Candidate> repository = new HashMap<>();
            names = new String[count];
            for (int i = 0; i < count; i++) {
                names[i] = "t-" + i;
                repository.put(names[i], new Candidate("1", 1));
            }
            multiplexer = new Multiplexer<>("bench", 1, new MultiplexSpec(count, 0), new Hosting(), () -> repository,
                    new Multiplexer.Tuning(Duration.ofHours(1), Duration.ZERO, 0), System::nanoTime,
                    new SimpleMeterRegistry());
            for (String name : names) {
                multiplexer.acquire(name).release(); // every model loaded
            }
        }

        int next() {
            int index = cursor;
            cursor = index + 1 == count ? 0 : index + 1;
            return index;
        }

        @TearDown(Level.Trial)
        public void close() {
            multiplexer.close();
        }
    }

    /** Handles that serve nothing: loads complete at once, nothing is ever in flight. */
    private static final class Hosting implements Multiplexer.Hosting<Object> {
        @Override
        public Object create(String model, String version) {
            return new Object();
        }

        @Override
        public CompletableFuture<Void> replicas(Object handle, int count) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void update(Object handle, String version) {
        }

        @Override
        public int ongoing(Object handle) {
            return 0;
        }

        @Override
        public int queued(Object handle) {
            return 0;
        }

        @Override
        public int serving(Object handle) {
            return 1;
        }

        @Override
        public int capacity(Object handle) {
            return 8;
        }

        @Override
        public boolean failed(Object handle) {
            return false;
        }

        @Override
        public void close(Object handle) {
        }
    }
}
