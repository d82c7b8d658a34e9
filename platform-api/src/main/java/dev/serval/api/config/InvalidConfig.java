package dev.serval.api.config;

import io.quarkus.runtime.configuration.ConfigurationException;
import org.jboss.logging.Logger;

/**
 * A configuration Serval refuses: at startup it stops the start, at run time it refuses the change (400) and leaves
 * the running deployments as they were. The message is one line naming the source (a file's absolute path and line,
 * a property with its value, or an API call), the deployment and the field, then the problem: the value, what is
 * allowed, or the nearest known name.
 */
public final class InvalidConfig extends RuntimeException {

    private static final Logger LOG = Logger.getLogger(InvalidConfig.class);

    private final String source;
    private final String field;
    /** Where in the document the problem is, as a JSON Pointer ({@code /deployments/0/num_replicas}), or null. */
    private final String pointer;
    private final String where;
    private final String problem;

    public InvalidConfig(String source, String deployment, String field, String problem) {
        this(source, (deployment == null ? "" : "deployment '" + deployment + "': ")
                + (field == null ? "" : "field '" + field + "': "), field, problem, null, null);
    }

    /** @param cause the refusal this one restates (located, or with advice), for the DEBUG stack trace */
    private InvalidConfig(String source, String where, String field, String problem, String pointer,
            InvalidConfig cause) {
        super(source + ": " + where + problem, cause);
        this.source = source;
        this.field = field;
        this.pointer = pointer;
        this.where = where;
        this.problem = problem;
    }

    /**
     * A refused {@code serval.deployments.<name>.<key>} property, named in full with its value ({@code null} when it
     * is not set): {@code serval.deployments.bert.num-replicas=65: must be between 0 and 64, not 65}.
     */
    static InvalidConfig property(String property, String value, String field, String problem) {
        return new InvalidConfig(property + (value == null ? "" : "=" + value), "", field, problem, null, null);
    }

    /** This refusal, located at {@code pointer} (a JSON Pointer into the document it was read from). */
    InvalidConfig at(String pointer) {
        return new InvalidConfig(source, where, field, problem, pointer, this);
    }

    /** This refusal with {@code source} in place of its source (a file's path and line). */
    InvalidConfig from(String source) {
        return new InvalidConfig(source, where, field, problem, pointer, this);
    }

    /** This refusal with {@code advice} (what to do about it) after its problem. */
    public InvalidConfig advising(String advice) {
        return new InvalidConfig(source, where, field, problem + "; " + advice, pointer, this);
    }

    /** The offending field, or null when the problem is not one field's. */
    public String field() {
        return field;
    }

    /** Where in the document the problem is (a JSON Pointer), or null when not known. */
    String pointer() {
        return pointer;
    }

    /**
     * This refusal as what stops a start: Quarkus prints a {@link ConfigurationException}'s message alone, without a
     * stack trace, and exits with status 1; the stack trace of where the config was refused is logged at DEBUG.
     */
    public ConfigurationException stopsStart() {
        LOG.debug("the configuration stops the start", this);
        return new ConfigurationException(getMessage());
    }
}
