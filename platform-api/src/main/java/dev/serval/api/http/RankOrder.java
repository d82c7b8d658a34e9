package dev.serval.api.http;

import java.util.Arrays;

/** The order of a rerank answer: documents by score, best first, ties in the client's order. Stateless. */
final class RankOrder {

    private RankOrder() {
    }

    /**
     * The indexes of the {@code top} best of {@code scores} (NaN last), best first, ties by index: a stable sort of
     * the indexes, so that equal scores keep the documents' order.
     */
    static int[] best(float[] scores, int top) {
        Integer[] indexes = new Integer[scores.length];
        for (int i = 0; i < indexes.length; i++) {
            indexes[i] = i;
        }
        // Float.compare orders NaN above every number: reversed, NaN would come first, so it is ranked lowest here.
        Arrays.sort(indexes, (a, b) -> {
            float x = Float.isNaN(scores[a]) ? Float.NEGATIVE_INFINITY : scores[a];
            float y = Float.isNaN(scores[b]) ? Float.NEGATIVE_INFINITY : scores[b];
            return Float.compare(y, x);
        });
        int[] order = new int[Math.min(top, scores.length)];
        for (int i = 0; i < order.length; i++) {
            order[i] = indexes[i];
        }
        return order;
    }
}
