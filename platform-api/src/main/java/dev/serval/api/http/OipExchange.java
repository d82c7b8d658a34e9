package dev.serval.api.http;

import dev.serval.deployment.Inference;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An Open Inference Protocol request ({@code POST /v2/models/{name}/infer}) through the pipeline: the deployment is
 * the one the path names, found on the headers; the body is a JSON (or binary-extension) tensor request; the
 * deployment maps the tensors, runs them and maps the outputs back ({@code Deployment.infer}); the answer is encoded
 * with the outputs the client asked for.
 */
final class OipExchange extends PathExchange<OipRequest, Inference> {


    OipExchange(RoutingContext context, InferenceRoutes routes) {
        super(context, routes, Dialect.OIP, context.pathParam("name"));
    }

    @Override
    OipRequest decode(byte[] body, RuntimeException refusal) {
        acceptBody(refusal, true);
        return routes.oipDecoder().decode(body, context.request().getHeader(OipResponseEncoder.HEADER_LENGTH));
    }

    @Override
    long timeoutMicros(OipRequest request) {
        return request.timeoutMicros();
    }

    /**
     * Requested outputs are checked by the deployment before routing while every serving replica runs one model; while
     * a rolling update has two serving, the encoder checks them against the outputs of the version that answered.
     */
    @Override
    CompletableFuture<Inference> infer(OipRequest request, CallContext call) {
        List<String> outputs = request.outputs() == null ? null
                : request.outputs().stream().map(OipRequest.Output::name).toList();
        return served.deployment().infer(new InferenceRequest(request.inputs(), outputs, call));
    }

    @Override
    int inputs(OipRequest request, Inference answer) {
        return answer.inputs();
    }

    @Override
    Answer encode(OipRequest request, Inference answer) {
        return routes.oipEncoder().encode(served.name(), request, answer); // a multiplexed model's own name
    }
}
