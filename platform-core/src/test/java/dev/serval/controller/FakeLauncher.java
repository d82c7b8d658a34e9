package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import dev.serval.routing.TestReplica;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Records the controller's effects; the test decides when replicas start, fail and stop. */
final class FakeLauncher implements ReplicaLauncher<String, String> {

    final List<ReplicaRecord> starts = new ArrayList<>();
    final List<ReplicaRecord> stops = new ArrayList<>();
    final List<Duration> drains = new ArrayList<>();
    final Map<Long, ReplicaEvents<String, String>> events = new LinkedHashMap<>();

    @Override
    public void start(DeploymentSpec spec, ReplicaRecord replica, ReplicaEvents<String, String> events) {
        starts.add(replica);
        this.events.put(replica.id(), events);
    }

    @Override
    public void stop(ReplicaRecord replica, Duration drain, ReplicaEvents<String, String> events) {
        stops.add(replica);
        drains.add(drain);
    }

    void start(long id) {
        events.get(id).started(id, TestReplica.answering(id, 4));
    }

    void fail(long id, String reason) {
        events.get(id).failed(id, reason);
    }

    void stopped(long id) {
        events.get(id).stopped(id);
    }
}
