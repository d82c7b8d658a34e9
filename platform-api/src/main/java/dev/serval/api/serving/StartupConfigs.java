package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.InvalidConfig;
import dev.serval.api.config.ServalConfig;
import dev.serval.spec.DeploymentSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Where the deployments a server starts with come from, in this order of precedence: the state directory's last
 * applied config (a restart resumes what the management API set), the YAML config file ({@code serval.config-file}),
 * the {@code serval.deployments.*} properties. The first source that exists decides them all; sources are never
 * merged. Read once, at startup.
 */
final class StartupConfigs {

    private static final Logger LOG = Logger.getLogger(StartupConfigs.class);

    private final AppliedConfigStore state;
    private final Optional<Path> configFile;
    private final Supplier<List<DeploymentSpec>> properties;

    StartupConfigs(AppliedConfigStore state, Optional<Path> configFile, Supplier<List<DeploymentSpec>> properties) {
        this.state = state;
        this.configFile = configFile;
        this.properties = properties;
    }

    /** The sources of {@code config}: its state directory, its config file and its deployment properties. */
    static StartupConfigs of(ServalConfig config, AppliedConfigStore state) {
        return new StartupConfigs(state, config.configFile(), () -> ConfigParser.fromProperties(config.deployments()));
    }

    /**
     * How a refusal of the initial deployment {@code deployment} names its source: the absolute path of the file
     * {@link #load} read it from, or its properties' prefix.
     */
    String source(String deployment) {
        return state.file().or(() -> configFile).map(file -> file.toAbsolutePath().normalize().toString())
                .orElse("serval.deployments." + deployment);
    }

    /**
     * The initial deployments, from the first source that exists.
     *
     * @throws InvalidConfig naming the file (absolute path and line) when a file does not parse (for the last applied
     *     config, also what to do)
     */
    List<DeploymentSpec> load() {
        int leftovers = state.removeLeftovers();
        if (leftovers > 0) {
            LOG.infof("removed %d partial file(s) of an interrupted write from the state directory", leftovers);
        }
        Optional<Path> applied = state.file();
        if (applied.isPresent()) {
            LOG.infof("deployments from the last applied config %s", applied.get().toAbsolutePath());
            try {
                return ConfigParser.readFile(applied.get());
            } catch (InvalidConfig e) {
                throw e.advising("this is the last applied config, which the management API wrote "
                        + "(serval.state-dir): correct it, or delete it to start from "
                        + configFile.map(file -> "the config file " + file.toAbsolutePath())
                                .orElse("the serval.deployments properties"));
            }
        }
        if (configFile.isPresent()) {
            LOG.infof("deployments from the config file %s", configFile.get().toAbsolutePath());
            return ConfigParser.readFile(configFile.get());
        }
        return properties.get();
    }
}
