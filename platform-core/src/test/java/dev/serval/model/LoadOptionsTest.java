package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LoadOptionsTest {

    @Test
    void defaultsLeaveTheMaxLengthToTheModelTruncateAverageRunOneThreadAndStayInvariant() {
        assertEquals(new LoadOptions(0, LongInputs.truncate(), ChunkReduction.MEAN, 1, 0, true), LoadOptions.defaults());
    }

    @Test
    void withersReturnTheSameInstanceWhenNothingChanges() {
        LoadOptions options = LoadOptions.defaults();
        assertSame(options, options.withMaxLength(0));
        assertSame(options, options.withLongInputs(LongInputs.truncate()));
        assertSame(options, options.withChunkReduction(ChunkReduction.MEAN));
        assertSame(options, options.withIntraOpThreads(1));
        assertSame(options, options.withBatchInvariance(true));
    }

    @Test
    void withersChangeOnlyTheirSetting() {
        LoadOptions options = LoadOptions.defaults().withMaxLength(128).withLongInputs(LongInputs.chunk(16, 8))
                .withChunkReduction(ChunkReduction.MAX).withIntraOpThreads(4).withBatchInvariance(false);
        assertEquals(new LoadOptions(128, LongInputs.chunk(16, 8), ChunkReduction.MAX, 4, 0, false), options);
    }

    @Test
    void theModelsMaxLengthFillsInOnlyWhenTheOptionsLeaveItToTheModel() {
        assertEquals(256, LoadOptions.defaults().orMaxLength(256).maxLength());
        LoadOptions own = LoadOptions.defaults().withMaxLength(64);
        assertSame(own, own.orMaxLength(256));
        assertNotSame(LoadOptions.defaults(), LoadOptions.defaults().orMaxLength(256));
    }

    @Test
    void refusesNumbersOutOfRangeNamingThem() {
        assertEquals("maxLength must be 0 (the model's own) or more, was -1",
                assertThrows(IllegalArgumentException.class, () -> LoadOptions.defaults().withMaxLength(-1))
                        .getMessage());
        assertEquals("intraOpThreads must be between 1 and 1024, was 0",
                assertThrows(IllegalArgumentException.class, () -> LoadOptions.defaults().withIntraOpThreads(0))
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> LoadOptions.defaults().withIntraOpThreads(1025));
        assertThrows(NullPointerException.class, () -> LoadOptions.defaults().withChunkReduction(null));
    }

    @Test
    void theWideSessionIsAsWideAsAskedAtMostTheMachineAndOnlyWhenWider() {
        LoadOptions options = LoadOptions.defaults().withIdleIntraOpThreads(4);
        assertEquals(4, options.idleSessionThreads(8));
        assertEquals(2, options.idleSessionThreads(2), "capped at the processors");
        assertEquals(0, options.idleSessionThreads(1), "one processor: nothing wider than one thread");
        assertEquals(0, options.withIntraOpThreads(4).idleSessionThreads(8), "not wider than the narrow session");
        assertEquals(0, LoadOptions.defaults().idleSessionThreads(8), "none asked for");
        assertThrows(IllegalArgumentException.class, () -> options.withIdleIntraOpThreads(-1));
    }
}
