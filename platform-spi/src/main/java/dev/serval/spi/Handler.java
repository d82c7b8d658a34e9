package dev.serval.spi;

import java.util.List;

/**
 * A custom handler: Java code deployed from the model repository with {@code kind: java}, {@code jar: handler.jar} and
 * {@code class: com.example.MyHandler}. The class needs a public no-argument constructor.
 *
 * <p>Threading contract: Serval creates one instance per replica, calls {@link #open} once on a launcher thread before
 * the replica serves, then {@link #handle} from the replica's predictor threads, concurrently when
 * {@code predictor_threads} is above 1 (so an instance's state must be thread-safe), never from an event-loop thread:
 * a handler may compute, read files, and block on {@link DeploymentHandle} calls. {@link #close} runs once, after the
 * last call returned. The handler's jar has its own class loader, which sees the JDK and this package only.
 *
 * <p>Failures: an {@link InvalidInputException} answers its request 400; any other exception (or an {@link Error})
 * answers it 500 and counts for the failure monitor like a model's failure. A handler that hangs holds its predictor
 * thread until the request's deadline releases the client (504) and the replica stops; check
 * {@link Request#abandoned()} in long loops.
 */
public interface Handler extends AutoCloseable {

    /**
     * Prepares the handler (load files, make handles). An exception fails the replica's start, with its message in the
     * deployment's status.
     */
    default void open(HandlerContext context) throws Exception {
    }

    /**
     * The tensors the handler takes, for its metadata and for the pipeline checks of the steps around it; empty (the
     * default) when it takes any.
     */
    default List<TensorSpec> inputs() {
        return List.of();
    }

    /** The tensors the handler returns, likewise; empty (the default) when it does not say. */
    default List<TensorSpec> outputs() {
        return List.of();
    }

    /**
     * Answers one request.
     *
     * @return the output tensors, with unique names
     */
    List<Tensor> handle(Request request) throws Exception;

    /** Releases what {@link #open} took. */
    @Override
    default void close() throws Exception {
    }
}
