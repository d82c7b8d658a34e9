package dev.serval.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** One request to a handler: its input tensors, its id, and the time it has left. */
public interface Request {

    /** The input tensors, in the order the client sent them; names are unique. */
    List<Tensor> inputs();

    /** The input tensor named {@code name}, if the request has one. */
    Optional<Tensor> find(String name);

    /**
     * The input tensor named {@code name}.
     *
     * @throws InvalidInputException naming the tensor when the request has none of that name (a 400 for the client)
     */
    default Tensor input(String name) {
        return find(name).orElseThrow(() -> new InvalidInputException("input tensor '" + name + "' is missing"));
    }

    /** The request's id ({@code x-request-id}), the same in every deployment this request reaches. */
    String requestId();

    /**
     * The time left before the request's deadline (the client's or the deployment's {@code request_timeout}); zero or
     * negative once it passed. Calls made through a {@link DeploymentHandle} carry the same deadline.
     */
    Duration remaining();

    /** Whether the request is over (its client went away, its deadline passed): a long handler may stop early. */
    boolean abandoned();
}
