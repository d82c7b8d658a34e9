package dev.serval.api.logging;

import dev.serval.api.config.ServalConfig;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.logging.Handler;
import org.jboss.logmanager.LogContext;
import org.jboss.logmanager.formatters.JsonFormatter;

/**
 * Switches the console to JSON lines when {@code serval.log.json=true}: JBoss LogManager's {@link JsonFormatter}
 * (timestamp, level, logger, thread, message, exception, MDC with the request id) on every root handler. It is
 * installed at the very start of the application, so only the few lines Quarkus prints while booting stay text.
 */
@Singleton
public class JsonLogging {

    void install(@Observes @Priority(1) StartupEvent event, ServalConfig config) {
        if (!config.jsonLogs()) {
            return;
        }
        for (Handler handler : LogContext.getLogContext().getLogger("").getHandlers()) {
            JsonFormatter json = new JsonFormatter();
            json.setPrintDetails(false);
            handler.setFormatter(json);
        }
    }
}
