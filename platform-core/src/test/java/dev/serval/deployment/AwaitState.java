package dev.serval.deployment;

import dev.serval.spec.DeploymentState;
import java.util.concurrent.TimeUnit;

/** Waiting in tests for a deployment to reach a state its controller thread moves it to. */
final class AwaitState {

    private static final long WAIT_SECONDS = 10;

    private AwaitState() {
    }

    /**
     * Returns once {@code deployment} is in {@code state}; fails after 10 s naming the state it stayed in. Yields
     * between reads instead of sleeping: the controller publishes the change on its own thread, a moment later.
     */
    static void awaitState(Deployment<?, ?> deployment, DeploymentState state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (deployment.state() != state) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("deployment stayed " + deployment.state() + ", expected " + state + ": "
                        + deployment.status());
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * Returns once {@code deployment} has served (a replica was routable), a state that, unlike READY, stays: a
     * deployment that scales to zero at once may be READY for less time than a poll takes.
     */
    static void awaitServed(Deployment<?, ?> deployment) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!deployment.hasServed()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("deployment never served: " + deployment.status());
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
