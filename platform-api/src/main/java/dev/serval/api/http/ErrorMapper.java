package dev.serval.api.http;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Routes every exception that reaches JAX-RS to {@link ErrorResponses}, in the API's error format by path. */
public class ErrorMapper {

    @ServerExceptionMapper(Exception.class)
    public Response map(Exception failure, UriInfo uri) {
        return isOpenAi(uri.getPath()) ? ErrorResponses.openAi(failure) : ErrorResponses.oip(failure);
    }

    static boolean isOpenAi(String path) {
        return path.startsWith("/v1/") || path.equals("/v1");
    }
}
