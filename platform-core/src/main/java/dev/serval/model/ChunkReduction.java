package dev.serval.model;

import java.util.List;

/**
 * How a text classifier combines the windows of a text longer than its maximum length (under
 * {@link LongInputs#chunk(int)}) into one set of scores. Each window is classified on its own (softmax probabilities
 * summing to 1); the text's label is the index of the largest combined score.
 */
public enum ChunkReduction {

    /**
     * The mean of the windows' probabilities, label by label: every window weighs the same, so the label that holds
     * across most of the text wins. Sums to 1 without renormalising. The default.
     */
    MEAN {
        @Override
        public float[] reduce(List<float[]> windows) {
            int labels = windows.getFirst().length;
            double[] sum = new double[labels];
            for (float[] window : windows) {
                for (int l = 0; l < labels; l++) {
                    sum[l] += window[l];
                }
            }
            float[] mean = new float[labels];
            for (int l = 0; l < labels; l++) {
                mean[l] = (float) (sum[l] / windows.size());
            }
            return mean;
        }
    },

    /**
     * The largest probability any window gives each label, renormalised so that the scores sum to 1: a label that one
     * window is sure of wins even when the rest of the text says little (one angry paragraph in a long, polite
     * message).
     */
    MAX {
        @Override
        public float[] reduce(List<float[]> windows) {
            int labels = windows.getFirst().length;
            double[] max = new double[labels];
            for (float[] window : windows) {
                for (int l = 0; l < labels; l++) {
                    max[l] = Math.max(max[l], window[l]);
                }
            }
            double total = 0;
            for (double value : max) {
                total += value;
            }
            float[] scores = new float[labels];
            for (int l = 0; l < labels; l++) {
                scores[l] = (float) (max[l] / total);
            }
            return scores;
        }
    };

    /**
     * The combined scores of windows' probabilities, each window's summing to 1, all of the same length; a new array,
     * summing to 1.
     */
    public abstract float[] reduce(List<float[]> windows);

    /**
     * The windows' values combined label by label, without renormalising: their mean ({@link #MEAN}) or their
     * largest ({@link #MAX}). For logits, and for a multi-label model's sigmoid scores, whose labels do not sum to 1.
     */
    public float[] reduceEach(List<float[]> windows) {
        int labels = windows.getFirst().length;
        float[] combined = new float[labels];
        for (int l = 0; l < labels; l++) {
            double value = this == MAX ? Double.NEGATIVE_INFINITY : 0;
            for (float[] window : windows) {
                value = this == MAX ? Math.max(value, window[l]) : value + window[l];
            }
            combined[l] = (float) (this == MAX ? value : value / windows.size());
        }
        return combined;
    }
}
