package dev.serval.error;

import java.util.List;

/** No deployment with this name is configured. */
public final class UnknownDeployment extends ServalException {

    private final String name;

    public UnknownDeployment(String name) {
        super("model '" + name + "' is not deployed");
        this.name = name;
    }

    /**
     * {@code name} is not deployed; the message names what is: {@code deployed} (the first few names, in order) and
     * how many more there are.
     */
    public UnknownDeployment(String name, List<String> deployed, int more) {
        super("model '" + name + "' is not deployed; deployed: " + (deployed.isEmpty() ? "none"
                : String.join(", ", deployed) + (more > 0 ? " and " + more + " more" : "")));
        this.name = name;
    }

    public String name() {
        return name;
    }
}
