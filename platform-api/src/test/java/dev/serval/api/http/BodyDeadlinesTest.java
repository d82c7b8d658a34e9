package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BodyDeadlinesTest {

    private final List<String> expired = new ArrayList<>();

    private BodyDeadlines.Reading reading(String name, long startNanos) {
        return new BodyDeadlines.Reading() {
            @Override
            long startNanos() {
                return startNanos;
            }

            @Override
            void expire() {
                expired.add(name);
            }
        };
    }

    private static BodyDeadlines deadlines() {
        return new BodyDeadlines(1_000L);
    }

    @Test
    void theBodiesPastTheirTimeExpireOldestFirstAndTheOthersStay() {
        BodyDeadlines deadlines = deadlines();
        BodyDeadlines.Reading a = reading("a", 10);
        BodyDeadlines.Reading b = reading("b", 20);
        BodyDeadlines.Reading c = reading("c", 30);
        BodyDeadlines.Reading d = reading("d", 40);
        deadlines.link(a);
        deadlines.link(b);
        deadlines.link(c);
        deadlines.link(d);
        deadlines.unlink(b); // its body came in
        deadlines.unlink(b); // and its request ended: nothing more
        deadlines.expireOlderThan(35);
        assertEquals(List.of("a", "c"), expired);
        deadlines.unlink(d);
        deadlines.expireOlderThan(1_000);
        assertEquals(List.of("a", "c"), expired, "an unlinked body never expires");
        BodyDeadlines.Reading e = reading("e", 50);
        deadlines.link(e); // the list works on after emptying
        deadlines.expireOlderThan(51);
        assertEquals(List.of("a", "c", "e"), expired);
    }

    @Test
    void timesAreComparedAcrossTheNanoTimeWrap() {
        BodyDeadlines deadlines = deadlines();
        deadlines.link(reading("late", Long.MAX_VALUE - 5));
        deadlines.expireOlderThan(Long.MIN_VALUE + 5); // 11 ns later, past the wrap
        assertEquals(List.of("late"), expired);
    }
}
