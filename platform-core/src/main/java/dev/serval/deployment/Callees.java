package dev.serval.deployment;

import io.micrometer.core.instrument.MeterRegistry;

/**
 * The deployments a composite model may call, by name: the engine's live set, looked up on every call so that a
 * callee that is replaced, deleted or created later is found as it is now. Thread-safe.
 */
public interface Callees {

    /** The deployment named {@code name} now, or null when there is none. */
    Deployment<?, ?> find(String name);

    /** Where the calls' meters go ({@code serval_call_seconds}). */
    MeterRegistry meters();
}
