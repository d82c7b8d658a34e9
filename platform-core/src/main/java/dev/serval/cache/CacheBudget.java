package dev.serval.cache;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The server's ceiling on the bytes of every result cache together ({@code serval.cache.max-bytes}), shared out by
 * max-min fairness (water-filling): each cache gets the bytes it asks for ({@code max_bytes}) while they fit, and when
 * they do not, those asking for less than an equal share keep what they ask and the others split the rest equally. The
 * grants always sum to at most the ceiling, so the caches' weighed bytes never pass it whatever the number of
 * deployments (a multiplexed deployment's models each have a cache).
 *
 * <p>Threads: caches join, change and leave from any thread (deployments created, updated, closed); every change
 * recomputes the grants under this object's lock and hands each cache its grant ({@link Member#grant}) under it. Never
 * on the request path.
 */
public final class CacheBudget {

    /** A cache that takes part. */
    public interface Member {

        /** The bytes it asks for. */
        long wanted();

        /** Its bound from now on; called under the budget's lock, so it must not call back. */
        void grant(long bytes);
    }

    private final long ceiling;
    private final List<Member> members = new ArrayList<>();

    /** @param ceiling the bytes every cache may hold together, at least 0 */
    public CacheBudget(long ceiling) {
        if (ceiling < 0) {
            throw new IllegalArgumentException("a cache ceiling is at least 0 bytes, not " + ceiling);
        }
        this.ceiling = ceiling;
    }

    public long ceiling() {
        return ceiling;
    }

    /** Adds {@code member} (or takes its new {@link Member#wanted()}) and shares the ceiling out again. */
    public synchronized void join(Member member) {
        if (!members.contains(member)) {
            members.add(member);
        }
        share();
    }

    /** Removes {@code member}; the others may grow into what it held. */
    public synchronized void leave(Member member) {
        if (members.remove(member)) {
            share();
        }
    }

    private void share() {
        List<Member> byWant = new ArrayList<>(members);
        byWant.sort(Comparator.comparingLong(Member::wanted));
        long left = ceiling;
        for (int i = 0; i < byWant.size(); i++) {
            Member member = byWant.get(i);
            long granted = Math.min(member.wanted(), left / (byWant.size() - i));
            member.grant(granted);
            left -= granted;
        }
    }
}
