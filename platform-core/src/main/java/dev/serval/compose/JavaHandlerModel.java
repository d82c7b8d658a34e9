package dev.serval.compose;

import dev.serval.error.InvalidInput;
import dev.serval.model.Composite;
import dev.serval.model.ModelSignature;
import dev.serval.request.Invocation;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spi.DeploymentHandle;
import dev.serval.spi.Handler;
import dev.serval.spi.HandlerContext;
import dev.serval.spi.InvalidInputException;
import dev.serval.spi.Request;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * {@code kind: java}: a custom {@link Handler} from a jar in the model's version folder. Loaded once per replica
 * (the deployment's loader asks for a model per replica): its own class loader, which sees the JDK and the SPI package
 * {@code dev.serval.spi} and nothing else of the server, one handler instance, {@link Handler#open opened} here on the
 * launcher thread. The replica's predictor threads call {@link Handler#handle}, with the thread's context class loader
 * set to the handler's; {@link #close} closes the handler, then its class loader.
 *
 * <p>Failures are a model's: an {@link InvalidInputException} answers 400; any other throwable fails only its request
 * (500, an error in the meters, never against the replica's or the node's health); a handler that never returns holds
 * its predictor thread until the replica stops (its request's deadline answers the client meanwhile). Warm-up and
 * health checks are answered by the predictor thread without calling the handler, which need not accept any particular
 * input.
 */
public final class JavaHandlerModel extends CompositeModel {

    /** The OIP platform string reported in metadata. */
    public static final String PLATFORM = "serval_java";

    private final String deployment;
    private final URLClassLoader classLoader;
    private final Handler handler;

    private JavaHandlerModel(String deployment, URLClassLoader classLoader, Handler handler, ModelSignature signature,
            OutstandingCalls outstanding) {
        super(signature, outstanding);
        this.deployment = deployment;
        this.classLoader = classLoader;
        this.handler = handler;
    }

    /**
     * Loads the handler class from {@code jar}, creates it and opens it.
     *
     * @throws IOException naming the jar, class and problem: unreadable jar, no such class, not a {@link Handler}, no
     *                     public no-argument constructor, or the constructor or {@link Handler#open} failed
     */
    public static JavaHandlerModel load(Composition composition, Composite.JavaHandler descriptor, Path jar)
            throws IOException {
        String where = "handler " + descriptor.className() + " (" + descriptor.jar() + ")";
        URLClassLoader loader = new URLClassLoader("serval-handler-" + composition.deployment(),
                new URL[] {jar.toUri().toURL()}, SpiOnly.INSTANCE);
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            Class<?> type;
            try {
                type = Class.forName(descriptor.className(), true, loader);
            } catch (ClassNotFoundException e) {
                throw new IOException(where + ": the jar has no class " + descriptor.className());
            }
            if (!Handler.class.isAssignableFrom(type)) {
                throw new IOException(where + ": " + type.getName() + " does not implement " + Handler.class.getName());
            }
            Handler handler;
            try {
                handler = type.asSubclass(Handler.class).getConstructor().newInstance();
            } catch (NoSuchMethodException | IllegalAccessException | InstantiationException e) {
                throw new IOException(where + ": needs a public no-argument constructor in a concrete class");
            } catch (InvocationTargetException e) {
                throw new IOException(where + ": its constructor failed: " + e.getCause(), e.getCause());
            }
            OutstandingCalls outstanding = new OutstandingCalls();
            try {
                handler.open(new Context(composition, outstanding));
            } catch (Exception e) {
                closeQuietly(handler);
                throw new IOException(where + ": open failed: " + e, e);
            }
            // From here on the handler is open: whatever fails closes it before the load fails.
            ModelSignature signature;
            try {
                signature = new ModelSignature(PLATFORM, SpiTensors.signatures(handler.inputs()),
                        SpiTensors.signatures(handler.outputs()));
            } catch (RuntimeException | LinkageError e) {
                closeQuietly(handler);
                throw new IOException(where + ": inputs() or outputs() failed: " + e, e);
            }
            return new JavaHandlerModel(composition.deployment(), loader, handler, signature, outstanding);
        } catch (LinkageError e) { // a class the handler needs is missing or broken (it sees only the JDK and the SPI)
            loader.close();
            throw new IOException(where + ": " + e, e);
        } catch (IOException | RuntimeException | Error e) {
            loader.close();
            throw e;
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    @Override
    Tensors answer(Invocation invocation) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(classLoader);
        List<dev.serval.spi.Tensor> outputs;
        try {
            outputs = handler.handle(new SpiRequest(invocation));
        } catch (InvalidInputException e) {
            throw new InvalidInput(e.getMessage());
        } finally {
            thread.setContextClassLoader(previous);
        }
        return SpiTensors.fromSpi(outputs, "handler '" + deployment + "' output");
    }

    @Override
    public void close() {
        closeQuietly(handler);
        try {
            classLoader.close();
        } catch (IOException e) {
            System.getLogger(JavaHandlerModel.class.getName()).log(System.Logger.Level.WARNING,
                    "handler of ''{0}'': closing its class loader failed: {1}", deployment, e.toString());
        }
    }

    private static void closeQuietly(Handler handler) {
        try {
            handler.close();
        } catch (Exception | LinkageError e) {
            System.getLogger(JavaHandlerModel.class.getName()).log(System.Logger.Level.WARNING,
                    "handler {0}: close failed: {1}", handler.getClass().getName(), e.toString());
        }
    }

    /** The parent of every handler's class loader: the JDK's platform classes and the SPI package, nothing else. */
    private static final class SpiOnly extends ClassLoader {

        static final SpiOnly INSTANCE = new SpiOnly();
        private static final String SPI = Handler.class.getPackageName() + ".";

        private SpiOnly() {
            super("serval-spi", ClassLoader.getPlatformClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith(SPI) && name.indexOf('.', SPI.length()) < 0) {
                return Handler.class.getClassLoader().loadClass(name);
            }
            return super.loadClass(name, resolve);
        }
    }

    /** What {@link Handler#open} is given: the deployment, the version folder, handles to other deployments. */
    private static final class Context implements HandlerContext {

        private final Composition composition;
        private final OutstandingCalls outstanding;
        private final ConcurrentMap<String, SpiHandle> handles = new ConcurrentHashMap<>();

        Context(Composition composition, OutstandingCalls outstanding) {
            this.composition = composition;
            this.outstanding = outstanding;
        }

        @Override
        public String deployment() {
            return composition.deployment();
        }

        @Override
        public Path versionFolder() {
            return composition.versionFolder();
        }

        @Override
        public DeploymentHandle deployment(String name) {
            if (name == null || !DeploymentSpec.isName(name)) {
                throw new IllegalArgumentException("'" + name + "' is not a deployment name");
            }
            if (name.equals(composition.deployment())) {
                throw new IllegalArgumentException("a handler cannot call its own deployment '" + name + "'");
            }
            return handles.computeIfAbsent(name, callee ->
                    new SpiHandle(new Handle(composition.deployment(), callee, composition.callees(), outstanding)));
        }
    }

    /** A {@link Handle} as the SPI shows it. */
    private record SpiHandle(Handle handle) implements DeploymentHandle {

        @Override
        public String name() {
            return handle.callee();
        }

        @Override
        public CompletableFuture<List<dev.serval.spi.Tensor>> infer(Request caller, List<dev.serval.spi.Tensor> inputs) {
            if (!(caller instanceof SpiRequest request)) {
                return CompletableFuture.failedFuture(new IllegalArgumentException("the caller must be the Request "
                        + "the handler was given"));
            }
            Tensors tensors;
            try {
                tensors = SpiTensors.fromSpi(inputs, "call to '" + handle.callee() + "': input");
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
            return handle.infer(request.invocation, tensors).thenApply(answer -> SpiTensors.toSpi(answer.outputs()));
        }
    }

    /** One request as the SPI shows it; its inputs converted once, when first asked for. */
    private static final class SpiRequest implements Request {

        private final Invocation invocation;
        private List<dev.serval.spi.Tensor> inputs;

        SpiRequest(Invocation invocation) {
            this.invocation = invocation;
        }

        @Override
        public List<dev.serval.spi.Tensor> inputs() {
            List<dev.serval.spi.Tensor> converted = inputs;
            if (converted == null) {
                converted = List.copyOf(SpiTensors.toSpi(invocation.tensors()));
                inputs = converted;
            }
            return converted;
        }

        @Override
        public Optional<dev.serval.spi.Tensor> find(String name) {
            for (dev.serval.spi.Tensor input : inputs()) {
                if (input.name().equals(name)) {
                    return Optional.of(input);
                }
            }
            return Optional.empty();
        }

        @Override
        public String requestId() {
            return invocation.context().requestId();
        }

        @Override
        public Duration remaining() {
            long left = invocation.context().remainingNanos(System.nanoTime());
            return left == Long.MAX_VALUE ? Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L) : Duration.ofNanos(left);
        }

        @Override
        public boolean abandoned() {
            return invocation.isEnded();
        }
    }
}
