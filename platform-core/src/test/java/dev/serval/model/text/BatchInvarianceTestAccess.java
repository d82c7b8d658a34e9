package dev.serval.model.text;

import java.nio.file.Path;

/** Lets tests in other packages prepare the tiny model directory. */
public final class BatchInvarianceTestAccess {

    private BatchInvarianceTestAccess() {
    }

    public static Path tinyModelDirectory() throws Exception {
        return BatchInvarianceTest.tinyModelDirectory();
    }
}
