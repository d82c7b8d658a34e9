package dev.serval.error;

/** No deployment with this name is configured. */
public final class UnknownDeployment extends ServalException {

    private final String name;

    public UnknownDeployment(String name) {
        super("model '" + name + "' is not deployed");
        this.name = name;
    }

    public String name() {
        return name;
    }
}
