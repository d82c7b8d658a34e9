package dev.serval.error;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link Spelling}: the known name a mistyped one most likely meant, and none when no name is near. */
class SpellingTest {

    private static final List<String> KNOWN = List.of("model", "version", "num_replicas", "min_ready_replicas",
            "predictor_threads", "intra_op_threads", "max_batch_size", "autoscaling");

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "-", textBlock = """
        num_replica        | num_replicas
        num-replicas       | num_replicas
        NUM_REPLICAS       | num_replicas
        predictor_thread   | predictor_threads
        predictor-thread   | predictor_threads
        modle              | model
        autoscalling       | autoscaling
        max_batch_sise     | max_batch_size
        replicas           | -
        colour             | -
        x                  | -
        """)
    void suggestsTheNearestKnownNameOrNone(String typed, String expected) {
        assertEquals(Optional.ofNullable(expected), Spelling.nearest(typed, KNOWN));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        num_replica   | unknown field (did you mean 'num_replicas'?); known fields: [model, version, num_replicas, min_ready_replicas, predictor_threads, intra_op_threads, max_batch_size, autoscaling]
        colour        | unknown field; known fields: [model, version, num_replicas, min_ready_replicas, predictor_threads, intra_op_threads, max_batch_size, autoscaling]
        """)
    void anUnknownNameIsAnsweredWithTheNearestAndEveryKnownName(String typed, String expected) {
        assertEquals(expected, Spelling.unknown("field", "fields", typed, KNOWN));
    }
}
