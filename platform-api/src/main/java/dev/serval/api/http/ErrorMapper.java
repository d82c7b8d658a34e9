package dev.serval.api.http;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Routes every exception that reaches JAX-RS to {@link ErrorResponses}, in the dialect of its path ({@link Dialect#ofPath}). */
public class ErrorMapper {

    @ServerExceptionMapper(Exception.class)
    public Response map(Exception failure, UriInfo uri) {
        return ErrorResponses.forPath(uri.getPath(), failure);
    }
}
