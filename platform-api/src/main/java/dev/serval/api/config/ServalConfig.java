package dev.serval.api.config;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Serval's settings under {@code serval.*} (application.properties, environment variables, system
 * properties). Read once at startup and converted into core records; see docs/configuration.md.
 */
@ConfigMapping(prefix = "serval")
public interface ServalConfig {

    Repository repository();

    /**
     * A YAML file of deployments ({@code deployments: [...]}, see docs/configuration.md). When set, its deployments
     * replace the {@code serval.deployments.*} properties.
     */
    @WithName("config-file")
    java.util.Optional<Path> configFile();

    /**
     * A writable directory where Serval keeps the last applied deployments config ({@code applied-config.yaml}),
     * re-applied after a restart in place of the config file and properties. Unset: changes made through the
     * management API last until the process stops.
     */
    @WithName("state-dir")
    java.util.Optional<Path> stateDir();

    Api api();

    interface Repository {

        /** The model repository: one folder per model, one subfolder per version. Created at startup if missing. */
        @WithDefault("${user.home}/.cache/serval/repository")
        Path path();
    }

    /** The management API's authentication: see docs/security.md. */
    interface Api {

        /**
         * The token management calls ({@code /api/*}, {@code /v2/repository/*}) need as
         * {@code Authorization: Bearer <token>}. Unset: Serval generates one at start into {@link #tokenFile()}.
         */
        java.util.Optional<String> token();

        /**
         * Where a generated token is written once the start succeeds, readable by Serval's user only; by default one
         * file per HTTP port under {@code $HOME} (Java's {@code user.home} when {@code HOME} is not set), so that
         * several servers on one machine each keep their own.
         */
        @WithName("token-file")
        @WithDefault("${HOME:${user.home}}/.cache/serval/api-token-${quarkus.http.port}")
        Path tokenFile();

        /** {@code false} turns the token check off: anyone who reaches the port may change the deployments. */
        @WithName("auth-enabled")
        @WithDefault("true")
        boolean authEnabled();
    }

    Http http();

    Limits limits();

    /** Bounds across all deployments, so that no config can ask the server for more threads than it can run. */
    interface Limits {

        /**
         * Predictor threads across every deployment (the sum of {@code num_replicas x predictor_threads}); a change
         * that would pass it is a 400 naming the limit.
         */
        @WithName("max-predictor-threads")
        @WithDefault("256")
        int maxPredictorThreads();
    }

    @WithName("failure-monitor")
    FailureMonitor failureMonitor();

    /**
     * Threads the replicas of every deployment may run together ({@code predictor_threads × intra_op_threads} per
     * replica); the autoscaler grows deployments only within it (docs/autoscaling.md). Absent: the processors the
     * JVM sees (the container's CPU limit).
     */
    @WithName("cpu-budget")
    Optional<Integer> cpuBudget();

    /** {@link #cpuBudget()}, or the available processors when it is not set. */
    default int cpuBudgetOrProcessors() {
        return cpuBudget().orElseGet(() -> Runtime.getRuntime().availableProcessors());
    }

    Autoscaling autoscaling();

    /** The autoscaler (docs/autoscaling.md). */
    interface Autoscaling {

        /** How often it samples each autoscaled deployment's ongoing requests and decides; 10ms to 10s. */
        @WithDefault("100ms")
        Duration period();
    }

    Grpc grpc();

    Cache cache();

    /** The result caches of the text models' deployments (docs/configuration.md, "Result cache"). */
    interface Cache {

        /** Bytes every deployment's result cache may hold together, shared out among them; 0 turns caching off. */
        @WithName("max-bytes")
        @WithDefault("256M")
        MemorySize maxBytes();
    }

    Ui ui();

    /** The status dashboard at {@code /ui/} (docs/dashboard.md). */
    interface Ui {

        /** Serve the dashboard and sample the meters it shows; off: {@code /ui/} is a 404 and nothing is sampled. */
        @WithDefault("true")
        boolean enabled();

        /** Whether the dashboard's data ({@code /ui/api/dashboard}) needs the management token, like {@code /api/status}. */
        @WithName("require-token")
        @WithDefault("false")
        boolean requireToken();

        /** How often the meters are sampled: one point of every chart. */
        @WithName("sample-interval")
        @WithDefault("1s")
        Duration sampleInterval();

        /** How much history is kept per deployment (at most 3,600 samples). */
        @WithDefault("5m")
        Duration history();
    }

    /** The Open Inference Protocol's gRPC service (docs/api.md, "gRPC"). */
    interface Grpc {

        /**
         * A port of its own for the gRPC service (h2c), instead of the HTTP port; unset (the default): gRPC is served
         * on the HTTP port next to REST.
         */
        Optional<Integer> port();

        /**
         * gRPC calls one connection may have open at once (a {@code ModelStreamInfer} stream is one call); past it, a
         * new call is refused RESOURCE_EXHAUSTED on its headers.
         */
        @WithName("max-calls-per-connection")
        @WithDefault("100")
        int maxCallsPerConnection();

        /**
         * Request bytes one connection's gRPC calls may hold at once (messages arriving, waiting for their call's end,
         * queued or running), a share of {@code serval.http.max-buffered-bytes}; past it, the call whose bytes do not
         * fit is refused RESOURCE_EXHAUSTED.
         */
        @WithName("max-bytes-per-connection")
        @WithDefault("64M")
        MemorySize maxBytesPerConnection();
    }

    Multiplex multiplex();

    /** Multiplexed deployments (docs/multiplexing.md). */
    interface Multiplex {

        /**
         * How often each multiplexed deployment rescans the repository for the models its glob matches (new models,
         * new versions, removed models); 100ms to 1h.
         */
        @WithName("refresh-period")
        @WithDefault("5s")
        Duration refreshPeriod();

        /** The shortest time a loaded model stays on its replica before it may be unloaded to make room; 0s to 1m. */
        @WithName("min-residency")
        @WithDefault("1s")
        Duration minResidency();

        /**
         * A loaded model stays at least this many times as long as a load takes (measured), so that loading takes at
         * most about 1/factor of the CPU however requests spread over too many models; 0 to 1000 (0 and a zero
         * min-residency: a plain LRU).
         */
        @WithName("residency-factor")
        @WithDefault("10")
        int residencyFactor();

        /**
         * For multi-tenant deployments: which models a multiplexed deployment serves, and the dashboard's data (every
         * deployment's models, load and errors), need the management token, so that one tenant cannot list the others
         * or read their errors (docs/security.md).
         */
        @WithName("private")
        @WithDefault("false")
        boolean privateTenants();
    }

    Onnxruntime onnxruntime();

    /** The ONNX Runtime native library Serval runs (docs/onnxruntime.md). */
    interface Onnxruntime {

        /**
         * {@code packaged} (the newest ONNX Runtime, packaged with Serval; on platforms without one, the runtime inside
         * ONNX Runtime Java's jar), {@code onnxruntime-jar} (that runtime, 1.29.0), or the absolute path of a
         * {@code libonnxruntime.so} at least as new as ONNX Runtime Java.
         */
        @WithDefault("packaged")
        String library();
    }

    /** Hugging Face TEI's API (docs/api.md, "Hugging Face TEI"). */
    Tei tei();

    interface Tei {
        /** The deployment TEI's root paths ({@code /embed}, {@code /info}, ...) serve; others answer under /tei/<name>/. */
        @WithDefault("all-minilm-l6-v2")
        String deployment();

        /**
         * Texts per {@code /embed_all} request (TEI's {@code max_client_batch_size} default): its answer is every
         * token's vector, up to {@code max_length × width} floats per text; more is TEI's 413.
         */
        @WithName("max-embed-all-inputs")
        @WithDefault("32")
        int maxEmbedAllInputs();
    }

    /** Console logs as one JSON object per line (with the MDC, so the request id), instead of text. */
    @WithName("log.json")
    @WithDefault("false")
    boolean jsonLogs();

    /**
     * The {@code serval.deployments.<name>.<key>} properties: by deployment name, then by kebab-case key
     * ({@code num-replicas}). Read by {@link ConfigParser#fromProperties} exactly as the config file's fields; no
     * defaults here: a property not set is the deployment spec's default.
     */
    Map<String, Map<String, String>> deployments();

    interface Http {

        /** The largest request body accepted; larger ones get 413. */
        @WithName("max-body-size")
        @WithDefault("8M")
        MemorySize maxBodySize();

        /**
         * Inference request bytes the server holds in memory at once (bodies being read, inputs queued or running);
         * past it, new requests get 503 + Retry-After on their headers.
         */
        @WithName("max-buffered-bytes")
        @WithDefault("256M")
        MemorySize maxBufferedBytes();

        /** Input tensors, and outputs asked for, per OIP inference request; more is a 400. */
        @WithName("max-tensors-per-request")
        @WithDefault("64")
        int maxTensorsPerRequest();

        /** Elements one input tensor's shape may declare; more is a 400. */
        @WithName("max-tensor-elements")
        @WithDefault("16777216")
        long maxTensorElements();

        /**
         * How long a request's body may go without a byte, from its headers on, and the grace before
         * {@link #minBodyRate()} holds; past it the request gets 408 and its connection is closed, so that stalled
         * uploads cannot hold the buffered-bytes budget.
         */
        @WithName("body-timeout")
        @WithDefault("10s")
        Duration bodyTimeout();

        /**
         * The slowest a request body may come on average, in bytes per second: a body may take {@code body-timeout}
         * plus its size at this rate, so that a large body on a slow link is read to its end, while one that stalls
         * for {@code body-timeout} or trickles slower is ended (408).
         */
        @WithName("min-body-rate")
        @WithDefault("64K")
        MemorySize minBodyRate();

        /**
         * HTTP/2 connections from one client address the server may send away for a reset flood (more than
         * {@code quarkus.http.limits.rst-flood-max-rst-frame-per-window} resets from the client) within
         * {@link #floodWindow()}; past it, every HTTP/2 stream from the address
         * is refused with its connection until the address has stayed away a whole window. Netty bounds each
         * connection; this bounds a client that reconnects after every GOAWAY.
         */
        @WithName("max-floods-per-address")
        @WithDefault("3")
        int maxFloodsPerAddress();

        /** The window of {@link #maxFloodsPerAddress()}, and how long a barred address must stay away. */
        @WithName("flood-window")
        @WithDefault("60s")
        Duration floodWindow();

        /** Texts per OpenAI embeddings request (OpenAI's own limit); more is a 400. */
        @WithName("max-texts-per-request")
        @WithDefault("2048")
        int maxTextsPerRequest();
    }

    /** The failure monitor: see docs/configuration.md. */
    interface FailureMonitor {

        @WithDefault("true")
        boolean enabled();

        @WithDefault("60s")
        Duration window();

        @WithDefault("0.5")
        double threshold();

        @WithName("min-requests")
        @WithDefault("20")
        int minRequests();

        @WithName("max-replacements")
        @WithDefault("2")
        int maxReplacements();
    }
}
