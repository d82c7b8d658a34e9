package dev.serval.api.config;

/**
 * A configuration Serval refuses: at startup it stops the start, at run time it refuses the change (400) and leaves
 * the running deployments as they were. The message names the source (file or API call), the deployment and the field.
 */
public final class InvalidConfig extends RuntimeException {

    private final String field;

    public InvalidConfig(String source, String deployment, String field, String problem) {
        super(source + ": " + (deployment == null ? "" : "deployment '" + deployment + "': ")
                + (field == null ? "" : "field '" + field + "': ") + problem);
        this.field = field;
    }

    /** The offending field, or null when the problem is not one field's. */
    public String field() {
        return field;
    }
}
