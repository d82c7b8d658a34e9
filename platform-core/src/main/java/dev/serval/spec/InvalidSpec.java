package dev.serval.spec;

/**
 * A setting out of its bounds. {@link #field()} is the setting's name as the config file, the management API and
 * docs/configuration.md spell it (a deployment's snake_case key, or a server property such as
 * {@code serval.autoscaling.period}, see {@code deployment.EngineSettings}), so the edge can name it without knowing
 * which record refused it.
 */
public final class InvalidSpec extends IllegalArgumentException {

    private final String field;
    private final String problem;

    public InvalidSpec(String field, String problem) {
        super(field == null ? problem : field + " " + problem);
        this.field = field;
        this.problem = problem;
    }

    /**
     * The snake_case key of the refused setting, e.g. {@code max_batch_size}, dotted within a nested section
     * ({@code autoscaling.min_replicas}); null when the problem is not one setting's (a config that is no mapping).
     */
    public String field() {
        return field;
    }

    /** What is wrong with it, e.g. {@code must be between 1 and 1024, not 0}. */
    public String problem() {
        return problem;
    }
}
