package dev.serval.api.http;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CompletionStage;

/** Brings a result computed on a predictor thread back to the request's own Vert.x context. */
final class EventLoop {

    private EventLoop() {
    }

    /**
     * A Uni of {@code stage} whose item and failure are delivered on the calling thread's Vert.x context, so
     * that encoding the response runs on the request's event loop and never on a predictor thread.
     */
    static <T> Uni<T> resumeHere(CompletionStage<T> stage) {
        Context context = Vertx.currentContext();
        Uni<T> uni = Uni.createFrom().completionStage(stage);
        return context == null ? uni : uni.emitOn(task -> context.runOnContext(ignored -> task.run()));
    }
}
