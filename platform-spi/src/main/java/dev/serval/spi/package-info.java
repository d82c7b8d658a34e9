/**
 * The contract between Serval and a custom handler ({@code kind: java} in a model's {@code model.yaml}): the only
 * Serval classes a handler's jar may see. A handler ({@link dev.serval.spi.Handler}) receives a request's tensors
 * ({@link dev.serval.spi.Request}, {@link dev.serval.spi.Tensor}) and answers tensors; its context
 * ({@link dev.serval.spi.HandlerContext}) gives it its version folder and handles to other deployments
 * ({@link dev.serval.spi.DeploymentHandle}). This package depends on nothing but the JDK, and nothing else of Serval is
 * visible to a handler's class loader.
 *
 * <p>Threading contract: one handler instance per replica, created and {@linkplain dev.serval.spi.Handler#open opened}
 * on a launcher thread before the replica serves, then {@linkplain dev.serval.spi.Handler#handle called} concurrently
 * by the replica's predictor threads ({@code predictor_threads}, never an event-loop thread, so blocking is allowed),
 * and {@linkplain dev.serval.spi.Handler#close closed} once after the last call returned.
 */
package dev.serval.spi;
