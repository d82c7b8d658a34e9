package dev.serval.it;

import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.Volume;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * Serval's container image as the tests run it: built by {@code scripts/build-image.sh} from the fast-jar Maven
 * has just packaged, and started the way the Helm chart runs it (non-root, read-only root filesystem with
 * writable scratch mounts, all capabilities dropped, a memory limit).
 *
 * <p>{@link #name()} builds the image at most once per test JVM. When no Docker engine can run, it throws an
 * {@link AssertionError} carrying the script's explanation: the container tests fail, they never skip.
 */
final class ServalImage {

    static final int HTTP_PORT = 8080;
    /** What the tests configure as the drain timeout ({@code quarkus.shutdown.timeout}). */
    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(15);
    /** The image's non-root user (docker/Dockerfile). */
    static final String UID = "10001";
    /** Where the Helm chart mounts its deployments file (SERVAL_CONFIG_FILE). */
    static final String CONFIG_FILE = "/etc/serval/deployments.yaml";

    private static String name;

    private ServalImage() {
    }

    /** The repository root (Maven passes it; the module directory's parent otherwise). */
    static Path root() {
        return Path.of(System.getProperty("serval.root", "..")).toAbsolutePath().normalize();
    }

    /** The content-named image for the current fast-jar, built (with its engine started) when missing. */
    static synchronized String name() {
        if (name == null) {
            name = build();
        }
        return name;
    }

    private static String build() {
        Path script = root().resolve("scripts/build-image.sh");
        Path log;
        int exit;
        try {
            log = Files.createTempFile("serval-build-image", ".log");
            Process process = new ProcessBuilder("bash", script.toString())
                    .directory(root().toFile())
                    .redirectErrorStream(false)
                    .redirectOutput(ProcessBuilder.Redirect.PIPE)
                    .redirectError(log.toFile())
                    .start();
            String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(15, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError(script + " did not finish in 15 minutes; its log: " + Files.readString(log));
            }
            exit = process.exitValue();
            String stderr = Files.readString(log);
            System.err.print(stderr);
            if (exit == 2) {
                throw new AssertionError("Serval's container tests need a Docker engine and none can run here "
                        + "(scripts/docker-engine.sh):\n" + stderr);
            }
            if (exit != 0 || stdout.isEmpty()) {
                throw new AssertionError(script + " failed (exit " + exit + "):\n" + stderr);
            }
            String image = stdout.lines().reduce((first, second) -> second).orElseThrow();
            if (!DockerClientFactory.instance().isDockerAvailable()) {
                throw new AssertionError("the Docker engine answers `docker info` but Testcontainers cannot reach it "
                        + "(DOCKER_HOST=" + System.getenv("DOCKER_HOST") + ")");
            }
            return image;
        } catch (IOException e) {
            throw new AssertionError("could not run " + script + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The deployments file the Helm chart's ConfigMap carries by default ({@code serval.deployments} of
     * helm/serval/values.yaml, under a {@code deployments} key, as templates/_helpers.tpl renders it), followed by
     * {@code extra} deployments; readable by the container's user.
     */
    static Path chartDeploymentsFile(List<Map<String, Object>> extra) {
        YAMLMapper yaml = new YAMLMapper();
        try {
            JsonNode values = yaml.readTree(root().resolve("helm/serval/values.yaml").toFile());
            ArrayNode deployments = ((ArrayNode) values.at("/serval/deployments")).deepCopy();
            extra.forEach(deployment -> deployments.add(yaml.valueToTree(deployment)));
            ObjectNode file = yaml.createObjectNode();
            file.set("deployments", deployments);
            Path path = Files.createTempFile("serval-deployments", ".yaml",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
            yaml.writeValue(path.toFile(), file);
            return path;
        } catch (IOException e) {
            throw new AssertionError("cannot write the chart's deployments file: " + e, e);
        }
    }

    /** Where the image's Serval writes the management token it generates when SERVAL_API_TOKEN is not set. */
    static final String GENERATED_TOKEN_FILE = "/var/lib/serval/.cache/serval/api-token-" + HTTP_PORT;

    /**
     * The management token a started container generated for itself (no SERVAL_API_TOKEN), read from its file as an
     * operator would ({@code kubectl exec ... cat}).
     */
    static String generatedToken(GenericContainer<?> container) throws IOException, InterruptedException {
        var cat = container.execInContainer("cat", GENERATED_TOKEN_FILE);
        if (cat.getExitCode() != 0 || cat.getStdout().isBlank()) {
            throw new AssertionError("no generated token in " + GENERATED_TOKEN_FILE + ": " + cat.getStderr());
        }
        return cat.getStdout().trim();
    }

    /**
     * A container of the image, not started, configured like the Helm chart's pod: user 10001, read-only root
     * filesystem, writable tmpfs at {@code /tmp}, {@code /var/lib/serval} and {@code /var/cache/serval}, no
     * capabilities, no privilege escalation, 1 GiB of memory, {@code deploymentsFile} mounted read-only where the
     * chart mounts it and named by SERVAL_CONFIG_FILE, port 8080 published on 127.0.0.1 only. Started, it is ready
     * ({@code /q/health/ready} answers 200).
     */
    static GenericContainer<?> container(String logPrefix, Path deploymentsFile) {
        return new GenericContainer<>(DockerImageName.parse(name()))
                .withImagePullPolicy(image -> false)
                .withExposedPorts(HTTP_PORT)
                .withEnv("QUARKUS_SHUTDOWN_TIMEOUT", DRAIN_TIMEOUT.toSeconds() + "s")
                .withEnv("SERVAL_CONFIG_FILE", CONFIG_FILE)
                .withTmpFs(Map.of(
                        "/tmp", "rw,exec,mode=1777",
                        "/var/lib/serval", "rw,exec,uid=" + UID + ",gid=" + UID,
                        "/var/cache/serval", "rw,exec,uid=" + UID + ",gid=" + UID))
                .withCreateContainerCmdModifier(cmd -> {
                    HostConfig host = cmd.getHostConfig();
                    // A bind through the HostConfig: withFileSystemBind would first pull alpine to check mounts.
                    host.withBinds(new Bind(deploymentsFile.toString(), new Volume(CONFIG_FILE), AccessMode.ro));
                    host.withReadonlyRootfs(true)
                            .withCapDrop(Capability.ALL)
                            .withSecurityOpts(List.of("no-new-privileges"))
                            .withMemory(1024L * 1024 * 1024)
                            .withPublishAllPorts(false)
                            .withPortBindings(new PortBinding(Ports.Binding.bindIp("127.0.0.1"),
                                    ExposedPort.tcp(HTTP_PORT)));
                })
                .withLogConsumer(new Slf4jLogConsumer(LoggerFactory.getLogger("container")).withPrefix(logPrefix))
                .waitingFor(Wait.forHttp("/q/health/ready").forPort(HTTP_PORT).forStatusCode(200)
                        .withStartupTimeout(Duration.ofMinutes(2)));
    }
}
