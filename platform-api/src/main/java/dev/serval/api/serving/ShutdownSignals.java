package dev.serval.api.serving;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;
import sun.misc.Signal;

/**
 * SIGTERM and SIGINT stop Serval through Quarkus's normal exit, before the JVM's shutdown hooks run.
 *
 * <p>Why. ONNX Runtime's Java API registers its own JVM shutdown hook that frees the native environment. On a plain
 * SIGTERM the JVM starts every shutdown hook at once: Quarkus's (which drains requests and stops the replicas) and
 * ONNX Runtime's, which frees the environment under predictor threads still running inferences: a use after free
 * that crashed the JVM (SIGSEGV in libonnxruntime) in about one shutdown in four under load, losing the requests in
 * flight. Handling the signal here runs the application's stop first (HTTP drain, every replica drains and closes
 * its sessions) and only then exits the JVM, with status 0. A second signal during the drain exits at once.
 * Installed in production mode only: tests run inside the build tool's JVM, whose signals are its own.
 */
@Singleton
class ShutdownSignals {

    private static final Logger LOG = Logger.getLogger(ShutdownSignals.class);

    private final AtomicBoolean stopping = new AtomicBoolean();

    void install(@Observes StartupEvent event) {
        if (LaunchMode.current() != LaunchMode.NORMAL) {
            return;
        }
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), this::received);
            } catch (IllegalArgumentException e) {
                LOG.warnf("cannot handle SIG%s here (%s); the JVM's default handling applies", name, e.getMessage());
            }
        }
    }

    private void received(Signal signal) {
        if (stopping.compareAndSet(false, true)) {
            LOG.infof("SIG%s: draining requests and stopping the replicas, then exiting", signal.getName());
            Quarkus.asyncExit(0);
        } else {
            LOG.warnf("second SIG%s while draining: exiting now", signal.getName());
            Runtime.getRuntime().halt(128 + signal.getNumber());
        }
    }
}
