package dev.serval.api.http;

import io.vertx.ext.web.Router;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.jboss.logging.MDC;

/**
 * Gives every request an id: the client's {@code x-request-id} when it is a sane token (at most 128 characters of
 * letters, digits and {@code . _ : -}), else a new random one. The id is echoed on every response, including
 * errors, and put in the logging MDC as {@code requestId}, so log lines written while handling the request (error
 * logs among them) carry it. Runs first on the event loop; allocates one string per request at most.
 */
@Singleton
public class RequestIds {

    public static final String HEADER = "x-request-id";
    private static final Pattern SANE = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(context -> {
            String id = context.request().getHeader(HEADER);
            if (id == null || !SANE.matcher(id).matches()) {
                id = newId();
            }
            context.response().putHeader(HEADER, id);
            MDC.put("requestId", id);
            context.next();
        });
    }

    /** Whether a client's id may be used as it is: 1 to 128 of {@code A-Za-z0-9._:-}. */
    public static boolean isSane(String id) {
        return SANE.matcher(id).matches();
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

    /** 32 random hex digits, the first of each half at least 8 (as two {@code Long.toHexString} of a set top bit). */
    public static String newId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        byte[] id = new byte[32];
        hex(random.nextLong() | Long.MIN_VALUE, id, 0);
        hex(random.nextLong() | Long.MIN_VALUE, id, 16);
        return new String(id, StandardCharsets.ISO_8859_1);
    }

    private static void hex(long value, byte[] into, int at) {
        for (int i = 15; i >= 0; i--) {
            into[at + i] = HEX[(int) (value & 0xF)];
            value >>>= 4;
        }
    }
}
