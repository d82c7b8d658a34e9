package dev.serval.api.http;

import dev.serval.api.serving.ServedDeployment;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

/**
 * An exchange whose path names its deployment (OIP's {@code /v2/models/{name}/infer}, TEI's routes): the deployment
 * is found on the headers, and a body's decoding starts the same way for all of them ({@link #acceptBody}).
 */
abstract class PathExchange<R, A> extends InferenceExchange<R, A> {

    /** The deployment the path names. */
    final String name;

    PathExchange(RoutingContext context, InferenceRoutes routes, Dialect dialect, String name) {
        super(context, routes, dialect);
        this.name = name;
    }

    @Override
    final ServedDeployment findOnHeaders() {
        return route(name);
    }

    /**
     * The first steps of decoding the body: the deployment (created since the headers came, or 404 naming it), then
     * {@code refusal}, the refusal the body's reading met, if any, then the body's Content-Type ({@code binary}:
     * whether OIP's binary tensor extension may be sent).
     */
    final void acceptBody(RuntimeException refusal, boolean binary) {
        if (served == null) {
            served = routeOrUnknown(name);
        }
        if (refusal != null) {
            throw refusal;
        }
        RequestBodies.checkContentType(context.request().getHeader(HttpHeaders.CONTENT_TYPE), binary);
    }
}
