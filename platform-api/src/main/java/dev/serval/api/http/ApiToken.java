package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
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
 * random one at start and, once the start has succeeded, writes it to {@code serval.api.token-file}, readable by its
 * own user only, logging the file's path (never the token). The default file is named by the HTTP port
 * ({@code $HOME/.cache/serval/api-token-8080}), so that each server on a machine has its own and a start that fails
 * (on its config, or on a port already taken) leaves the file of the server already running untouched. A file that
 * cannot be written stops the start, saying why. Only {@code serval.api.auth-enabled=false} turns the check off, and
 * that is logged as a warning at start.
 *
 * <p>The check runs after routing, on the resource class that matched, not on the path as the client spelled it, so
 * that no spelling of a path reaches a management method without the token. The comparison takes the same time
 * whatever token is sent.
 */
// Application-scoped: a client proxy, since RESTEasy instantiates its filters before the configuration is ready.
@ApplicationScoped
public class ApiToken {

    private static final Logger LOG = Logger.getLogger(ApiToken.class);
    private static final String BEARER = "Bearer ";

    /** The expected token's bytes, or empty when the check is disabled. */
    private final Optional<byte[]> token;
    /** Where a generated token is written at the end of the start; empty when the token is set or the check off. */
    private final Optional<Path> generatedFile;

    ApiToken(ServalConfig config) {
        ServalConfig.Api api = config.api();
        if (!api.authEnabled()) {
            LOG.warn("the management API is open to anyone who can reach this port (serval.api.auth-enabled=false)");
            this.token = Optional.empty();
            this.generatedFile = Optional.empty();
            return;
        }
        Optional<String> configured = api.token().map(String::trim).filter(t -> !t.isEmpty());
        String value = configured.orElseGet(ApiToken::generate);
        this.token = Optional.of(value.getBytes(StandardCharsets.UTF_8));
        this.generatedFile = configured.isPresent() ? Optional.empty()
                : Optional.of(api.tokenFile().toAbsolutePath().normalize());
    }

    /**
     * Writes a generated token to its file (owner read/write only, replaced atomically) after every other startup
     * step, so that only a server that started rewrites it.
     *
     * @throws ConfigurationException saying why when the file cannot be written: the start stops
     */
    void publish(@Observes @Priority(Integer.MAX_VALUE) StartupEvent event) {
        if (generatedFile.isEmpty()) {
            return;
        }
        Path file = generatedFile.get();
        try {
            Path directory = file.getParent();
            Files.createDirectories(directory);
            Path temporary = Files.createTempFile(directory, ".api-token", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temporary, new String(token.orElseThrow(), StandardCharsets.UTF_8) + "\n",
                    StandardCharsets.UTF_8);
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.debug("cannot write the management token file", e);
            throw new ConfigurationException("no management token is set (serval.api.token) and Serval could not "
                    + "write the one it generated to " + file + " (serval.api.token-file): " + why(e)
                    + "; set serval.api.token, point serval.api.token-file at a writable path, or turn the check "
                    + "off with serval.api.auth-enabled=false");
        }
        LOG.infof("management API token generated and written to %s (readable by this user only); send it as "
                + "'Authorization: Bearer <token>', or set your own with serval.api.token", file);
    }

    /** A new random token (256 bits). */
    private static String generate() {
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    /** What went wrong writing the file, in words. */
    private static String why(Exception e) {
        return switch (e) {
            case FileAlreadyExistsException exists -> exists.getFile() + " exists and is not a directory";
            case AccessDeniedException denied -> "permission denied on " + denied.getFile();
            case FileSystemException other when other.getReason() != null -> other.getFile() + ": "
                    + other.getReason();
            default -> e.toString();
        };
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
