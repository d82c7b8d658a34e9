package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Serval with pipelines and custom handlers: the test compiles handlers from source against the SPI into
 * {@code handlers.jar}, installs repository models of both kinds, and deploys from properties {@code echo} (noop),
 * {@code mlp} (tiny-mlp), {@code chain} (echo then mlp), {@code scale} (a handler doubling mlp's output and returning
 * the request id) and {@code chain3} (echo, mlp, scale); the tests add the others with the management API (token
 * {@link ManagementProfile#TOKEN}).
 */
public class CompositionProfile implements QuarkusTestProfile {

    /** The handlers' sources, by class name: compiled against platform-spi only. */
    static final Map<String, String> HANDLERS = Map.of(
            "test.Scale", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    /** Doubles mlp's output and says which request it served. */
                    public class Scale implements Handler {
                        public List<TensorSpec> inputs() {
                            return List.of(new TensorSpec("output", DataType.FP32, -1, 2));
                        }

                        public List<TensorSpec> outputs() {
                            return List.of(new TensorSpec("scaled", DataType.FP32, -1, 2),
                                    new TensorSpec("request_id", DataType.BYTES, 1));
                        }

                        public List<Tensor> handle(Request request) {
                            Tensor in = request.input("output");
                            float[] x = in.floats();
                            float[] y = new float[x.length];
                            for (int i = 0; i < x.length; i++) {
                                y[i] = 2 * x[i];
                            }
                            return List.of(Tensor.of("scaled", y, in.shape()),
                                    Tensor.of("request_id", new String[] {request.requestId()}, 1));
                        }
                    }
                    """,
            "test.Caller", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.ArrayList;
                    import java.util.List;

                    /** Calls mlp through its handle; also tells whether it can see the server's own classes. */
                    public class Caller implements Handler {
                        private DeploymentHandle mlp;

                        public void open(HandlerContext context) {
                            mlp = context.deployment("mlp");
                        }

                        public List<Tensor> handle(Request request) {
                            List<Tensor> outputs = new ArrayList<>(mlp.infer(request, request.inputs()).join());
                            outputs.add(Tensor.of("sees_server", new boolean[] {visible("dev.serval.deployment.Deployment")
                                    || visible("io.quarkus.runtime.Quarkus")}, 1));
                            return outputs;
                        }

                        private static boolean visible(String name) {
                            try {
                                Class.forName(name, false, Caller.class.getClassLoader());
                                return true;
                            } catch (ClassNotFoundException e) {
                                return false;
                            }
                        }
                    }
                    """,
            "test.Throws", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    public class Throws implements Handler {
                        public List<Tensor> handle(Request request) {
                            throw new IllegalStateException("boom: the handler failed");
                        }
                    }
                    """,
            "test.Picky", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    public class Picky implements Handler {
                        public List<Tensor> handle(Request request) {
                            return List.of(request.input("x"));
                        }
                    }
                    """,
            "test.Hangs", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    /** Never answers (until its thread is interrupted when the replica stops). */
                    public class Hangs implements Handler {
                        public List<Tensor> handle(Request request) throws InterruptedException {
                            Thread.sleep(Long.MAX_VALUE); // a hanging handler by design: the deadline tests' fixture
                            return List.of();
                        }
                    }
                    """,
            "test.Patient", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    /** Works until its request is abandoned (its caller ended it), then stops. */
                    public class Patient implements Handler {
                        public List<Tensor> handle(Request request) throws InterruptedException {
                            while (!request.abandoned()) {
                                Thread.sleep(2); // one step of long work; abandoned() is checked between steps
                            }
                            throw new IllegalStateException("abandoned");
                        }
                    }
                    """,
            "test.Sign", """
                    package test;

                    import dev.serval.spi.*;
                    import java.util.List;

                    /** Labels a request by the sign of its input's sum: "mlp" when positive, "other" otherwise. */
                    public class Sign implements Handler {
                        public List<TensorSpec> outputs() {
                            return List.of(new TensorSpec("label", DataType.BYTES, 1));
                        }

                        public List<Tensor> handle(Request request) {
                            double sum = 0;
                            for (float value : request.input("input").floats()) {
                                sum += value;
                            }
                            return List.of(Tensor.of("label", new String[] {sum > 0 ? "mlp" : "other"}, 1));
                        }
                    }
                    """,
            "test.Plain", """
                    package test;

                    public class Plain {
                    }
                    """);

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        Path jar = HandlerJars.build(Path.of("target", "handler-build", "handlers.jar"), HANDLERS);
        pipeline("chain", "- deployment: echo\n  - deployment: mlp");
        pipeline("chain3", "- deployment: echo\n  - deployment: mlp\n  - deployment: scale");
        pipeline("waits", "- deployment: patient");
        pipeline("mismatch", "- deployment: mlp\n  - deployment: mlp");
        pipeline("lost", "- deployment: nope");
        pipeline("routed", "- deployment: sign\n  - route: {on: label, cases: {mlp: mlp}, default: echo}\n"
                + "    from: request");
        pipeline("viamux", "- deployment: mux");
        pipeline("loop-a", "- deployment: echo");
        pipeline("loop-b", "- deployment: loop-a");
        try {
            Path second = Files.createDirectories(TestRepository.PATH.resolve("loop-a").resolve("2"));
            write(second, "kind: pipeline\nsteps:\n  - deployment: loop-b\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String[] handler : new String[][] {{"scale", "test.Scale"}, {"caller", "test.Caller"},
                {"broken", "test.Throws"}, {"picky", "test.Picky"}, {"hangs", "test.Hangs"},
                {"patient", "test.Patient"}, {"plain", "test.Plain"}, {"sign", "test.Sign"}}) {
            Path dir = version(handler[0]);
            try {
                Files.copy(jar, dir.resolve("handlers.jar"), StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            write(dir, "kind: java\njar: handlers.jar\nclass: " + handler[1] + "\n");
        }
        try {
            Files.deleteIfExists(ManagementProfile.STATE_DIR.resolve("applied-config.yaml"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.ofEntries(
                Map.entry("serval.api.token", ManagementProfile.TOKEN),
                Map.entry("serval.api.auth-enabled", "true"),
                Map.entry("serval.multiplex.private", "true"),
                Map.entry("serval.state-dir", ManagementProfile.STATE_DIR.toString()),
                Map.entry("serval.deployments.echo.model", "noop"),
                Map.entry("serval.deployments.mlp.model", "tiny-mlp"),
                Map.entry("serval.deployments.mlp.version", "1"),
                Map.entry("serval.deployments.chain.model", "chain"),
                Map.entry("serval.deployments.scale.model", "scale"),
                Map.entry("serval.deployments.chain3.model", "chain3"));
    }

    private static void pipeline(String name, String steps) {
        write(version(name), "kind: pipeline\nsteps:\n  " + steps + "\n");
    }

    private static Path version(String name) {
        try {
            return Files.createDirectories(TestRepository.PATH.resolve(name).resolve("1"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path dir, String descriptor) {
        try {
            Files.writeString(dir.resolve("model.yaml"), descriptor);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String getConfigProfile() {
        return "test";
    }
}
