package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * When {@code serval.api.token} is set, management calls ({@code /api/*} and the OIP repository extension
 * {@code /v2/repository/*}) must carry {@code Authorization: Bearer <token>}; others get 401 with
 * {@code WWW-Authenticate: Bearer}. Inference, health and metrics stay open. The comparison takes the same time
 * whatever the token sent.
 */
public class ApiToken {

    private final Optional<byte[]> token;

    ApiToken(ServalConfig config) {
        this.token = config.api().token().filter(t -> !t.isBlank()).map(t -> t.getBytes(StandardCharsets.UTF_8));
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> check(HttpServerRequest request) {
        if (token.isEmpty() || !isManagement(request.path())) {
            return Optional.empty();
        }
        String header = request.getHeader(HttpHeaders.AUTHORIZATION);
        String prefix = "Bearer ";
        if (header != null && header.regionMatches(true, 0, prefix, 0, prefix.length())
                && MessageDigest.isEqual(token.get(),
                        header.substring(prefix.length()).trim().getBytes(StandardCharsets.UTF_8))) {
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

    static boolean isManagement(String path) {
        return path.startsWith("/api/") || path.equals("/api") || path.startsWith("/v2/repository");
    }
}
