package dev.serval.deployment;

import dev.serval.controller.DeploymentState;
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
}
