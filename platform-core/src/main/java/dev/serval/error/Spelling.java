package dev.serval.error;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * The known name a mistyped one most likely meant, for "did you mean" in a refusal. Names are compared with case and
 * the {@code -}/{@code _} spelling ignored ({@code num-replicas} is {@code num_replicas}), by optimal string alignment
 * distance (Levenshtein with adjacent transpositions counted as one edit: {@code modle} is one edit from
 * {@code model}); the nearest within a third of the typed name's length (at least 2 edits) is suggested, the first
 * in {@code known}'s order on a tie. A name longer than {@value #LONGEST} characters is no typo of a field name and
 * gets no suggestion (so a hostile key costs no quadratic work).
 */
public final class Spelling {

    /** The longest typed name compared. */
    private static final int LONGEST = 64;

    private Spelling() {
    }

    /** The name of {@code known} nearest to {@code typed}, when one is near enough to be a likely typo. */
    public static Optional<String> nearest(String typed, Collection<String> known) {
        if (typed.length() > LONGEST) {
            return Optional.empty();
        }
        String normal = normal(typed);
        int allowed = Math.max(2, normal.length() / 3);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known) {
            String other = normal(candidate);
            if (Math.abs(other.length() - normal.length()) > allowed) {
                continue; // the distance is at least the difference in length
            }
            int distance = distance(normal, other);
            if (distance <= allowed && distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * A refusal of the unknown {@code typed}: {@code unknown field (did you mean '<nearest>'?); known fields: [...]},
     * the suggestion only when one is near.
     *
     * @param what what the names are, singular and plural: {@code "field", "fields"}
     */
    public static String unknown(String what, String whats, String typed, Collection<String> known) {
        return "unknown " + what + suggestion(typed, known) + "; known " + whats + ": " + known;
    }

    /** {@code " (did you mean '<nearest>'?)"} when a name of {@code known} is near {@code typed}; else empty. */
    public static String suggestion(String typed, Collection<String> known) {
        return nearest(typed, known).map(name -> " (did you mean '" + name + "'?)").orElse("");
    }

    private static String normal(String name) {
        return name.toLowerCase(Locale.ROOT).replace('-', '_');
    }

    /** Optimal string alignment distance between {@code a} and {@code b}; both are short names. */
    private static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
