package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;

/**
 * The management API's bearer token. Every method of a resource marked {@link ManagementApi} ({@code /api/*}, the
 * OIP repository extension {@code /v2/repository/*}) needs {@code Authorization: Bearer <token>}; others get 401
 * with {@code WWW-Authenticate: Bearer}. Inference, model metadata, health and metrics stay open.
 *
 * <p>Where the token comes from (docs/security.md): {@code serval.api.token} when set; otherwise Serval generates a
 * random one at start and writes it to {@code serval.api.token-file}, readable by its own user only, logging the
 * file's path (never the token). Only {@code serval.api.auth-enabled=false} turns the check off, and that is logged
 * as a warning at start.
 *
 * <p>The check runs after routing, on the resource class that matched, not on the path as the client spelled it, so
 * that no spelling of a path reaches a management method without the token. The comparison takes the same time
 * whatever token is sent.
 */
// Application-scoped (a client proxy: RESTEasy instantiates its filters before the configuration is ready), and
// created at startup, so that a generated token file exists as soon as Serval answers.
@Startup
@ApplicationScoped
public class ApiToken {

    private static final Logger LOG = Logger.getLogger(ApiToken.class);
    private static final String BEARER = "Bearer ";

    /** The expected token's bytes, or empty when the check is disabled. */
    private final Optional<byte[]> token;

    ApiToken(ServalConfig config) {
        ServalConfig.Api api = config.api();
        if (!api.authEnabled()) {
            LOG.warn("the management API is open to anyone who can reach this port (serval.api.auth-enabled=false)");
            this.token = Optional.empty();
            return;
        }
        Optional<String> configured = api.token().map(String::trim).filter(t -> !t.isEmpty());
        String value = configured.orElseGet(() -> generate(api.tokenFile()));
        this.token = Optional.of(value.getBytes(StandardCharsets.UTF_8));
    }

    /** A new random token, written to {@code file} (owner read/write only) before it is used. */
    private static String generate(Path file) {
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String value = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        try {
            Path directory = file.toAbsolutePath().getParent();
            Files.createDirectories(directory);
            Path temporary = Files.createTempFile(directory, ".api-token", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temporary, value + "\n", StandardCharsets.UTF_8);
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | UnsupportedOperationException e) {
            throw new UncheckedIOException(new IOException("no management token is set (serval.api.token) and Serval "
                    + "could not write the one it generated to " + file + " (serval.api.token-file): " + e
                    + "; set serval.api.token, point serval.api.token-file at a writable path, or turn the check "
                    + "off with serval.api.auth-enabled=false", e));
        }
        LOG.infof("management API token generated and written to %s (readable by this user only); send it as "
                + "'Authorization: Bearer <token>', or set your own with serval.api.token", file);
        return value;
    }

    /**
     * Whether {@code authorization} (an {@code Authorization} header or gRPC metadata value, or null) carries the
     * token, or the check is off. Takes the same time whatever token is sent.
     */
    public boolean accepts(String authorization) {
        return token.isEmpty() || authorization != null
                && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())
                && MessageDigest.isEqual(token.get(),
                        authorization.substring(BEARER.length()).trim().getBytes(StandardCharsets.UTF_8));
    }

    @ServerRequestFilter
    public Optional<Response> check(SimpleResourceInfo resource, HttpHeaders headers) {
        if (token.isEmpty() || !resource.getResourceClass().isAnnotationPresent(ManagementApi.class)) {
            return Optional.empty();
        }
        String header = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        if (accepts(header)) {
            return Optional.empty();
        }
        String problem = header == null ? "this call needs the management token: Authorization: Bearer <token>"
                : "the management token is wrong";
        return Optional.of(Response.status(401)
                .header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"serval\"")
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(Map.of("error", problem))
                .build());
    }
}
