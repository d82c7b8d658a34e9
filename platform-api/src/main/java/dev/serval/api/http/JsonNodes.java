package dev.serval.api.http;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Small JSON tree helpers. */
public final class JsonNodes {

    private JsonNodes() {
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }
}
