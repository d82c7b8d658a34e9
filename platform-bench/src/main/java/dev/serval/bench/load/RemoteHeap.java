package dev.serval.bench.load;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Heap after a full GC in another JVM of this machine (the soak's Serval): the JDK's local management agent is
 * started in it through the Attach API (as {@code jcmd <pid> ManagementAgent.start_local} does; no agent is loaded,
 * nothing listens on a port), and one JMX connection is kept for the whole run. {@link #afterFullGc} calls the
 * remote {@code MemoryMXBean.gc()}, which is {@code System.gc()}: with G1 a stop-the-world full collection, so the
 * heap read right after it holds only what is reachable, not the young garbage and floating old garbage that make
 * an unforced reading a sawtooth. That pause lands in Serval's latencies: its length is returned, for the report.
 * Used by one thread.
 */
final class RemoteHeap implements AutoCloseable {

    private final JMXConnector connector;
    private final MemoryMXBean memory;

    private RemoteHeap(JMXConnector connector, MemoryMXBean memory) {
        this.connector = connector;
        this.memory = memory;
    }

    /** Connects to the JVM of process {@code pid} (same user). */
    static RemoteHeap attach(long pid) throws IOException {
        String address;
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        } catch (AttachNotSupportedException e) {
            throw new IOException("cannot attach to process " + pid, e);
        }
        JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
        try {
            return new RemoteHeap(connector, ManagementFactory.newPlatformMXBeanProxy(
                    connector.getMBeanServerConnection(), ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class));
        } catch (IOException | RuntimeException e) {
            connector.close();
            throw e;
        }
    }

    /**
     * One reading after a full GC.
     *
     * @param heapUsed     heap bytes in use just after the collection
     * @param heapCommitted heap bytes committed then
     * @param nonHeapUsed  non-heap bytes in use (metaspace, code cache)
     * @param gcMillis     how long the remote {@code gc()} call took, round trip included
     */
    record Reading(long heapUsed, long heapCommitted, long nonHeapUsed, double gcMillis) {
    }

    Reading afterFullGc() {
        long start = System.nanoTime();
        memory.gc();
        double gcMillis = (System.nanoTime() - start) / 1e6;
        var heap = memory.getHeapMemoryUsage();
        return new Reading(heap.getUsed(), heap.getCommitted(), memory.getNonHeapMemoryUsage().getUsed(), gcMillis);
    }

    @Override
    public void close() throws IOException {
        connector.close();
    }
}
