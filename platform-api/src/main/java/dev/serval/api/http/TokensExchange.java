package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.model.Model;
import dev.serval.model.TextTokenizer;
import dev.serval.request.CallContext;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * TEI's {@code POST /tokenize} and {@code /decode} (and their {@code /tei/<deployment>/} forms) through the pipeline:
 * the deployment's serving model's own tokenizer ({@link TextTokenizer}: the tokens as the model reads them, at most
 * its {@code max_length}), run on a Vert.x worker, not the event loop, as a request with the same body limits,
 * budget, deadline and meters as an inference. Tokenize answers {@code [[{"id", "text", "special", "start", "stop"}]]},
 * one list per input ({@code start}/{@code stop}: character offsets, null for a special token); decode answers one
 * string per id sequence.
 */
final class TokensExchange extends PathExchange<TokensExchange.Request, List<?>> {

    /** A decoded request: the texts to tokenize, or the id sequences to decode. */
    record Request(List<String> texts, List<long[]> ids, boolean special) {
    }

    private final TeiRoutes tei;
    private final boolean decode;

    TokensExchange(RoutingContext context, TeiRoutes tei, String name, boolean decode) {
        super(context, tei.inference(), Dialect.TEI, name);
        this.tei = tei;
        this.decode = decode;
    }

    @Override
    Request decode(byte[] body, RuntimeException refusal) {
        acceptBody(refusal, false);
        JsonNode request = tei.json().readObject(body, 0, body.length);
        if (decode) {
            return new Request(null, ids(request.get("ids")), Json.bool(request, "skip_special_tokens", true));
        }
        if (request.hasNonNull("prompt_name")) {
            throw new InvalidInput("prompt_name", "'prompt_name' is not supported: the model declares no prompts");
        }
        return new Request(TeiRequest.embed(request, tei.maxTexts()).texts(), null,
                Json.bool(request, "add_special_tokens", true));
    }

    @Override
    CompletableFuture<List<?>> infer(Request request, CallContext call) {
        TextTokenizer tokenizer = served.deployment().newestModel(Model::tokenizer).flatMap(t -> t).orElseThrow(
                () -> new NotReady("deployment '" + served.name() + "' has no serving text model whose tokenizer to "
                        + "use (it tokenizes with the model it serves: loading, scaled to zero, or not a text model)"));
        return context.vertx().<List<?>>executeBlocking(() -> {
            if (request.ids() != null) {
                List<String> texts = new ArrayList<>(request.ids().size());
                for (long[] ids : request.ids()) {
                    try {
                        texts.add(tokenizer.decode(ids, request.special()));
                    } catch (IllegalArgumentException e) {
                        throw new InvalidInput("ids", e.getMessage());
                    }
                }
                return texts;
            }
            List<List<TextTokenizer.Token>> tokens = new ArrayList<>(request.texts().size());
            for (String text : request.texts()) {
                tokens.add(tokenizer.tokenize(text, request.special()));
            }
            return tokens;
        }, false).toCompletionStage().toCompletableFuture();
    }

    @Override
    int inputs(Request request, List<?> answer) {
        return answer.size();
    }

    @Override
    @SuppressWarnings("unchecked")
    Answer encode(Request request, List<?> answer) {
        Answer.Bytes out = new Answer.Bytes(64 + answer.size() * 64);
        try (JsonGenerator gen = tei.factory().createGenerator(out)) {
            gen.writeStartArray();
            for (Object element : answer) {
                if (element instanceof String text) {
                    gen.writeString(text);
                    continue;
                }
                gen.writeStartArray();
                for (TextTokenizer.Token token : (List<TextTokenizer.Token>) element) {
                    gen.writeStartObject();
                    gen.writeNumberField("id", token.id());
                    gen.writeStringField("text", token.text());
                    gen.writeBooleanField("special", token.special());
                    writeOffset(gen, "start", token.start());
                    writeOffset(gen, "stop", token.stop());
                    gen.writeEndObject();
                }
                gen.writeEndArray();
            }
            gen.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Answer.json(out);
    }

    private static void writeOffset(JsonGenerator gen, String field, int offset) throws IOException {
        if (offset < 0) {
            gen.writeNullField(field);
        } else {
            gen.writeNumberField(field, offset);
        }
    }

    /** {@code ids}: one sequence of token ids, or several; each id a non-negative 32-bit integer. */
    private List<long[]> ids(JsonNode ids) {
        if (ids == null || !ids.isArray() || ids.isEmpty()) {
            throw new InvalidInput("ids", "'ids' must be a non-empty array of token ids, or of arrays of them, not "
                    + (ids == null ? "missing" : Json.describe(ids)));
        }
        boolean nested = ids.get(0).isArray();
        if (nested && ids.size() > tei.maxTexts()) {
            throw new ApiError(413, "'ids' holds " + ids.size() + " sequences; at most " + tei.maxTexts()
                    + " are allowed per request (serval.http.max-texts-per-request)");
        }
        List<long[]> sequences = new ArrayList<>(nested ? ids.size() : 1);
        for (int s = 0; s < (nested ? ids.size() : 1); s++) {
            JsonNode sequence = nested ? ids.get(s) : ids;
            if (!sequence.isArray()) {
                throw new InvalidInput("ids", "'ids[" + s + "]' must be an array of token ids, not "
                        + Json.describe(sequence));
            }
            long[] values = new long[sequence.size()];
            for (int i = 0; i < values.length; i++) {
                JsonNode id = sequence.get(i);
                if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0) {
                    throw new InvalidInput("ids", "token id " + id + " is not a non-negative 32-bit integer");
                }
                values[i] = id.intValue();
            }
            sequences.add(values);
        }
        return sequences;
    }
}
