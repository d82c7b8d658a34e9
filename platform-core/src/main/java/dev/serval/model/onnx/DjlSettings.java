package dev.serval.model.onnx;

/**
 * Keeps DJL off the network. DJL reads these properties when its classes initialise; without them it
 * checks hubs and cloud metadata addresses. {@link #ensureOffline()} runs before any DJL class is touched
 * by the model packages; launch scripts, the test JVM and the container set them as well.
 */
public final class DjlSettings {

    private DjlSettings() {
    }

    /** Sets DJL's offline, no-tracking and default-engine properties unless the JVM already set them. */
    public static void ensureOffline() {
        setIfAbsent("ai.djl.offline", "true");
        setIfAbsent("OPT_OUT_TRACKING", "true");
        setIfAbsent("ai.djl.default_engine", "OnnxRuntime");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
