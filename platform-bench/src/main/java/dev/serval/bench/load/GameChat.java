package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Roblox-like game-chat lines ("gg", "anyone wanna trade", "omg ur pet is so cute lol"), the traffic of the result
 * cache benchmark: {@link #lines} makes distinct ones from a seed, and {@link #zipfRequests} draws a request sequence
 * over them from a Zipf law, seeded too, so that every server of a run gets the same texts in the same order.
 *
 * <p>A line is 1 to 10 words, short ones the most common, from a small vocabulary of game chat with now and then a
 * number ("need 500 robux") and an ending ("!!", " lol", " :)"). Lines come in the order they are drawn, duplicates
 * skipped, so the first {@code n} lines of a seed are the same whatever count is asked for: a prefix of the stream is
 * the Zipf pool (line {@code k} has rank {@code k}), and the lines after it are texts no request of the pool sends.
 * Stateless.
 */
final class GameChat {

    /** The seed of the cache benchmark's lines. */
    static final long SEED = 20260411L;

    private static final String[] WORDS = {
        "gg", "lol", "hi", "hey", "yo", "omg", "bruh", "ez", "noob", "pro", "pls", "plz", "ty", "thx", "np", "brb",
        "afk", "idk", "ikr", "lmao", "xd", "wait", "stop", "come", "go", "here", "there", "me", "u", "ur", "you", "i",
        "we", "they", "my", "your", "anyone", "who", "what", "where", "why", "how", "can", "wanna", "want", "need",
        "trade", "give", "get", "buy", "sell", "free", "robux", "pet", "pets", "dragon", "unicorn", "egg", "sword",
        "gun", "car", "house", "obby", "tower", "map", "server", "game", "round", "team", "join", "leave", "follow",
        "friend", "add", "block", "report", "hacker", "lag", "laggy", "spawn", "base", "boss", "level", "xp", "coins",
        "gems", "skin", "hat", "admin", "mod", "vip", "code", "update", "event", "win", "won", "lost", "dead", "kill",
        "run", "jump", "fly", "hide", "seek", "tag", "it", "the", "a", "is", "so", "too", "not", "no", "yes", "ok",
        "cool", "nice", "cute", "funny", "best", "worst", "good", "bad", "fast", "slow", "again", "now", "later",
        "today", "this", "that", "and", "or", "but", "to", "with", "for", "in", "on", "at", "of", "im", "dont", "cant",
    };
    private static final String[] ENDINGS = {"", "", "", "", "!", "!!", "?", "??", " lol", " xd", " :)", " :D", "..."};
    /** Weights of a line's word count, 1 to 10 words: chat is mostly short. */
    private static final int[] WORD_COUNT_WEIGHTS = {10, 14, 16, 15, 13, 10, 8, 6, 4, 4};
    private static final int WORD_COUNT_TOTAL = 100;

    private GameChat() {
    }

    /**
     * The first {@code count} distinct lines of {@code seed}'s stream (every call with the same seed draws the same
     * stream, so a shorter list is a prefix of a longer one).
     */
    static List<String> lines(int count, long seed) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be at least 0, got " + count);
        }
        Random random = new Random(seed);
        Set<String> seen = new HashSet<>(count * 2);
        List<String> lines = new ArrayList<>(count);
        StringBuilder line = new StringBuilder();
        while (lines.size() < count) {
            line.setLength(0);
            int words = wordCount(random);
            for (int w = 0; w < words; w++) {
                if (w > 0) {
                    line.append(' ');
                }
                // One word in twelve is a number: amounts, levels, server sizes.
                if (random.nextInt(12) == 0) {
                    line.append(1 + random.nextInt(random.nextBoolean() ? 100 : 10_000));
                } else {
                    line.append(WORDS[random.nextInt(WORDS.length)]);
                }
            }
            line.append(ENDINGS[random.nextInt(ENDINGS.length)]);
            String text = line.toString();
            if (seen.add(text)) {
                lines.add(text);
            }
        }
        return List.copyOf(lines);
    }

    /**
     * {@code length} requests over {@code pool} (lines, or their prepared request bodies), entry {@code k} drawn with probability proportional to
     * {@code 1 / (k + 1)^exponent} ({@link MultiplexBenchmark#zipfSequence}), seeded.
     */
    static <T> List<T> zipfRequests(List<T> pool, double exponent, int length, long seed) {
        int[] ranks = MultiplexBenchmark.zipfSequence(pool.size(), exponent, length, seed);
        List<T> requests = new ArrayList<>(length);
        for (int rank : ranks) {
            requests.add(pool.get(rank));
        }
        return requests;
    }

    private static int wordCount(Random random) {
        int draw = random.nextInt(WORD_COUNT_TOTAL);
        for (int i = 0; i < WORD_COUNT_WEIGHTS.length; i++) {
            draw -= WORD_COUNT_WEIGHTS[i];
            if (draw < 0) {
                return i + 1;
            }
        }
        return WORD_COUNT_WEIGHTS.length;
    }
}
